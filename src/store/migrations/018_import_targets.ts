import type { Kysely } from "kysely";

// Pending import targets (docs/export-import.md §3): the HPKE key init_import_wallet announces
// in its signed bundle, private half sealed with the master key. One per (organization, user,
// kind): a new init replaces the previous target, and import_wallet deletes the one it used, so
// a bundle is accepted once.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("import_targets")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("private_key_sealed", "text", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addUniqueConstraint("import_targets_owner", ["organization_id", "user_id", "kind"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("import_targets").execute();
}
