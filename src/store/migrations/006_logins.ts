import type { Kysely } from "kysely";

// Logins: service P-256 keys (session JWTs, OTP bundles, verification tokens), passkeys,
// one-time passcodes with their limits, verification tokens, verified contacts, and the
// session profile of session keys (which are api_keys rows of type CREDENTIAL_TYPE_LOGIN).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("users").addColumn("email_verified_at", "bigint").execute();
  await db.schema.alterTable("users").addColumn("phone_verified_at", "bigint").execute();
  await db.schema.alterTable("api_keys").addColumn("session_profile_id", "text").execute();

  await db.schema
    .createTable("authenticators")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("credential_id", "text", (c) => c.notNull())
    .addColumn("credential_id_normalized", "text", (c) => c.notNull())
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("attestation_type", "text", (c) => c.notNull())
    .addColumn("aaguid", "text", (c) => c.notNull())
    .addColumn("transports", "text", (c) => c.notNull())
    .addColumn("sign_count", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("authenticators_org_credential")
    .on("authenticators")
    .columns(["organization_id", "credential_id_normalized"])
    .unique()
    .execute();
  await db.schema.createIndex("authenticators_credential").on("authenticators").column("credential_id_normalized").execute();
  await db.schema.createIndex("authenticators_user").on("authenticators").column("user_id").execute();

  await db.schema
    .createTable("service_keys")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("purpose", "text", (c) => c.notNull())
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("private_key_sealed", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("service_keys_purpose").on("service_keys").columns(["purpose", "status"]).execute();

  await db.schema
    .createTable("otps")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("otp_type", "text", (c) => c.notNull())
    .addColumn("contact", "text", (c) => c.notNull())
    .addColumn("contact_normalized", "text", (c) => c.notNull())
    .addColumn("code_digest", "text", (c) => c.notNull())
    .addColumn("target_private_key_sealed", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("user_identifier", "text")
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("otps_expiry").on("otps").column("expires_at").execute();

  await db.schema
    .createTable("limit_slots")
    .addColumn("scope", "text", (c) => c.notNull())
    .addColumn("slot", "integer", (c) => c.notNull())
    .addColumn("until", "bigint", (c) => c.notNull())
    .addColumn("holder", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("limit_slots_pk", ["scope", "slot"])
    .execute();
  await db.schema.createIndex("limit_slots_until").on("limit_slots").column("until").execute();

  await db.schema
    .createTable("verification_tokens")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("otp_id", "text", (c) => c.notNull())
    .addColumn("verification_type", "text", (c) => c.notNull())
    .addColumn("contact", "text", (c) => c.notNull())
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addColumn("signup_used_at", "bigint")
    .addColumn("login_used_at", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  // The sweeper (store/sweeper.ts) deletes by expiry.
  await db.schema.createIndex("verification_tokens_expiry").on("verification_tokens").column("expires_at").execute();
  await db.schema.createIndex("api_keys_expiry").on("api_keys").columns(["credential_type", "expires_at"]).execute();
}
