import type { Kysely } from "kysely";

// Organization features and deletion (docs/organizations.md §7, §8).
//
// `organization_features`: the features an organization set or removed
// (set_organization_feature / remove_organization_feature). A row is an explicit choice:
// enabled = 1 with its value, or enabled = 0 (removed). No row: the feature's default
// (docs/organizations.md §8.1), so nothing needs writing when an organization is created.
//
// `organizations.deleted_at`: set by delete_sub_organization. The row stays because the
// organization's activities (kept for audit) reference it; everything else it owned is deleted
// in the same transaction, and a deleted organization is answered as an unknown one. A
// nullable column without a default: no table rewrite on either engine.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("organizations").addColumn("deleted_at", "bigint").execute();
  await db.schema
    .createTable("organization_features")
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("enabled", "integer", (c) => c.notNull())
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("organization_features_pk", ["organization_id", "name"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("organization_features").execute();
  await db.schema.alterTable("organizations").dropColumn("deleted_at").execute();
}
