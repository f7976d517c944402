import type { Kysely } from "kysely";

// Written once, run on both engines: only types and constraints both understand.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("organizations")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("parent_id", "text", (c) => c.references("organizations.id"))
    .addColumn("root_quorum_threshold", "integer", (c) => c.notNull())
    .addColumn("settings", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("organizations_parent").on("organizations").columns(["parent_id", "created_at", "id"]).execute();
  await db.schema.createIndex("organizations_name").on("organizations").columns(["parent_id", "name"]).execute();

  await db.schema
    .createTable("users")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("email", "text")
    .addColumn("email_normalized", "text")
    .addColumn("phone", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("users_org").on("users").columns(["organization_id", "created_at"]).execute();
  // NULLs are distinct in unique indexes on both engines: users without email don't clash.
  await db.schema.createIndex("users_org_email").on("users").columns(["organization_id", "email_normalized"]).unique().execute();
  await db.schema.createIndex("users_email").on("users").column("email_normalized").execute();
  await db.schema.createIndex("users_phone").on("users").column("phone").execute();
  await db.schema.createIndex("users_name").on("users").column("name").execute();

  await db.schema
    .createTable("root_quorum_members")
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id"))
    .addPrimaryKeyConstraint("root_quorum_members_pk", ["organization_id", "user_id"])
    .execute();

  await db.schema
    .createTable("api_keys")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("public_key_normalized", "text", (c) => c.notNull())
    .addColumn("curve", "text", (c) => c.notNull())
    .addColumn("credential_type", "text", (c) => c.notNull())
    .addColumn("expiration_seconds", "text")
    .addColumn("expires_at", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("api_keys_org_key").on("api_keys").columns(["organization_id", "public_key_normalized"]).unique().execute();
  await db.schema.createIndex("api_keys_key").on("api_keys").column("public_key_normalized").execute();
  await db.schema.createIndex("api_keys_user").on("api_keys").column("user_id").execute();

  await db.schema
    .createTable("user_tags")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("user_tags_org_name").on("user_tags").columns(["organization_id", "name"]).unique().execute();

  await db.schema
    .createTable("user_tag_members")
    .addColumn("tag_id", "text", (c) => c.notNull().references("user_tags.id"))
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id"))
    .addPrimaryKeyConstraint("user_tag_members_pk", ["tag_id", "user_id"])
    .execute();
  await db.schema.createIndex("user_tag_members_user").on("user_tag_members").column("user_id").execute();

  await db.schema
    .createTable("activities")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("fingerprint", "text", (c) => c.notNull().unique())
    .addColumn("intent", "text", (c) => c.notNull())
    .addColumn("result", "text")
    .addColumn("failure", "text")
    .addColumn("submitted_by", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("activities_org_created").on("activities").columns(["organization_id", "created_at", "id"]).execute();

  await db.schema
    .createTable("votes")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("activity_id", "text", (c) => c.notNull().references("activities.id"))
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("user_organization_id", "text", (c) => c.notNull())
    .addColumn("selection", "text", (c) => c.notNull())
    .addColumn("message", "text", (c) => c.notNull())
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("signature", "text", (c) => c.notNull())
    .addColumn("scheme", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("votes_activity").on("votes").column("activity_id").execute();

  await db.schema
    .createTable("sigil_meta")
    .addColumn("key", "text", (c) => c.primaryKey())
    .addColumn("value", "text", (c) => c.notNull())
    .execute();
}

export async function down(): Promise<void> {
  throw new Error("migrations are forward-only");
}
