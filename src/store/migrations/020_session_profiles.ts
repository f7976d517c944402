import type { Kysely } from "kysely";

// Session profiles (docs/sessions-and-network.md §6): immutable once created — no update or
// delete exists — so a session key naming one (api_keys.session_profile_id, migration 006)
// always finds the scope it was issued with. Names are not unique (upstream keeps ids only).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("session_profiles")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("scope", "text", (c) => c.notNull())
    .addColumn("expiration_seconds", "text")
    .addColumn("notes", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("session_profiles_organization").on("session_profiles").columns(["organization_id", "created_at"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("session_profiles").execute();
}
