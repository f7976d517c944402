import type { Kysely } from "kysely";

// Sessions inherit the IP allowlist of the credential that created them
// (docs/sessions-and-network.md §1): a session key (api_keys
// row of type CREDENTIAL_TYPE_LOGIN) made by a login stamped with an API key of the same
// organization records that key's lower-case public key here, and the allowlist check reads
// the key list under that name instead of the session key's own. NULL: no API key made it
// (passkey, attested or OTP login by a credential of another organization), or made before
// this migration. A nullable column without a default: no table rewrite on either engine.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("api_keys").addColumn("allowlist_public_key", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("api_keys").dropColumn("allowlist_public_key").execute();
}
