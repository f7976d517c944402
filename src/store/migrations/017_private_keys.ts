import type { Kysely } from "kysely";

// Private keys (docs/signing.md §3): one key each, not derived from a wallet. `key_sealed` is
// the raw private key (32 bytes, hex) sealed with the master key under "private-key:<id>" —
// the only copy. `private_key_addresses` holds one row per address format the key was created
// with (the (organization, address) index serves signWith look-ups); private key tags mirror
// user tags.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("private_keys")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("curve", "text", (c) => c.notNull())
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("key_sealed", "text", (c) => c.notNull())
    .addColumn("imported", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("exported", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("private_keys_org_name").on("private_keys").columns(["organization_id", "name"]).unique().execute();
  await db.schema.createIndex("private_keys_org_public_key").on("private_keys").columns(["organization_id", "public_key"]).execute();

  await db.schema
    .createTable("private_key_addresses")
    .addColumn("private_key_id", "text", (c) => c.notNull().references("private_keys.id"))
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("position", "integer", (c) => c.notNull())
    .addColumn("format", "text", (c) => c.notNull())
    .addColumn("address", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("private_key_addresses_pk", ["private_key_id", "position"])
    .execute();
  await db.schema
    .createIndex("private_key_addresses_org_address")
    .on("private_key_addresses")
    .columns(["organization_id", "address"])
    .execute();

  await db.schema
    .createTable("private_key_tags")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("private_key_tags_org_name").on("private_key_tags").columns(["organization_id", "name"]).unique().execute();
  await db.schema
    .createTable("private_key_tag_members")
    .addColumn("tag_id", "text", (c) => c.notNull().references("private_key_tags.id"))
    .addColumn("private_key_id", "text", (c) => c.notNull().references("private_keys.id"))
    .addPrimaryKeyConstraint("private_key_tag_members_pk", ["tag_id", "private_key_id"])
    .execute();
  await db.schema.createIndex("private_key_tag_members_key").on("private_key_tag_members").column("private_key_id").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("private_key_tag_members").execute();
  await db.schema.dropTable("private_key_tags").execute();
  await db.schema.dropTable("private_key_addresses").execute();
  await db.schema.dropTable("private_keys").execute();
}
