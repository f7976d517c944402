import type { Kysely } from "kysely";

// Invitations (docs/invitations.md §2): who was invited to an organization, with which tags and
// access type, and the digest of the one-time token the invitation mail carried (cleared once
// the invitation is accepted or revoked, so a used token matches nothing).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("invitations")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("sender_user_id", "text", (c) => c.notNull())
    .addColumn("receiver_user_name", "text", (c) => c.notNull())
    .addColumn("receiver_email", "text", (c) => c.notNull())
    .addColumn("receiver_user_tags", "text", (c) => c.notNull())
    .addColumn("access_type", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("token_digest", "text")
    .addColumn("accepted_user_id", "text")
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("invitations_org").on("invitations").columns(["organization_id", "created_at"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("invitations").execute();
}
