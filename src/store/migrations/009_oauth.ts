import type { Kysely } from "kysely";

// OAuth: OAuth 2.0 client credentials of an organization (the client secret sealed
// with the master key, never stored as given), and the OIDC identities attached to users. One
// (issuer, audience, subject) identity is unique across the service: the unique index makes a
// second attach fail even when two requests race (OAUTH_PROVIDER_ALREADY_EXISTS).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("oauth2_credentials")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("client_id", "text", (c) => c.notNull())
    .addColumn("client_secret_sealed", "text", (c) => c.notNull())
    .addColumn("encrypted_client_secret", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("oauth2_credentials_org").on("oauth2_credentials").columns(["organization_id", "created_at"]).execute();

  await db.schema
    .createTable("oauth_providers")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id"))
    .addColumn("provider_name", "text", (c) => c.notNull())
    .addColumn("issuer", "text", (c) => c.notNull())
    .addColumn("audience", "text", (c) => c.notNull())
    .addColumn("subject", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("oauth_providers_identity")
    .on("oauth_providers")
    .columns(["issuer", "audience", "subject"])
    .unique()
    .execute();
  await db.schema.createIndex("oauth_providers_user").on("oauth_providers").columns(["user_id", "created_at"]).execute();
  await db.schema.createIndex("oauth_providers_org").on("oauth_providers").column("organization_id").execute();
}
