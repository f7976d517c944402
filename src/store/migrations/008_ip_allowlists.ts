import type { Kysely } from "kysely";

// IP allowlists: one list per root organization (public_key '') and per API key of
// it (its lower-case public key), with their rules in order. organizations.ip_allowlist_version
// is bumped with every change: the request's credential look-up reads it for free, and the
// per-store cache (network/allowlist-cache.ts) reloads a list only when it moved. 0 means the
// organization never had a list: the check costs nothing.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("organizations")
    .addColumn("ip_allowlist_version", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable("ip_allowlists")
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("enabled", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("on_evaluation_error", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("ip_allowlists_pk", ["organization_id", "public_key"])
    .execute();
  await db.schema
    .createTable("ip_allowlist_rules")
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("position", "integer", (c) => c.notNull())
    .addColumn("cidr", "text", (c) => c.notNull())
    .addColumn("label", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("ip_allowlist_rules_pk", ["organization_id", "public_key", "position"])
    .execute();
}
