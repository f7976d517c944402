import type { Kysely } from "kysely";

// Auth proxy configurations (docs/auth-proxy.md §2, §3): at most one per top-level
// organization. `user_id` is the proxy user enable_auth_proxy made, `public_key` its API key
// (compressed P-256, lower-case hex, also registered in api_keys), `private_key_sealed` the
// key's PKCS#8 DER sealed with the master key under `auth-proxy-key:<id>` — the only copy of
// the private key. `settings` is the JSON text of the update_auth_proxy_config fields set so
// far; `policy_ids` the JSON array of the two policies that confine the proxy user
// (docs/auth-proxy.md §3). Disabling keeps the row (enabled = 0), so re-enabling keeps the id
// and the key. `user_id` has no foreign key: a root user may still delete the proxy user (or
// its key, or its policies), and enable_auth_proxy puts back what is missing.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("auth_proxy_configs")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().unique().references("organizations.id"))
    .addColumn("enabled", "integer", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("private_key_sealed", "text", (c) => c.notNull())
    .addColumn("settings", "text", (c) => c.notNull())
    .addColumn("policy_ids", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  // The credential look-up joins on the proxy user (auth/api-key-stamp.ts).
  await db.schema.createIndex("auth_proxy_configs_user").on("auth_proxy_configs").column("user_id").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("auth_proxy_configs").execute();
}
