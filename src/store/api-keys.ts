// API keys: the credentials an X-Stamp is checked against.
import type { ApiKeyCurve, ApiKeysTable, CredentialType, Executor } from "./schema.ts";
import { timestampObject } from "./util.ts";

export type ApiKeyRow = ApiKeysTable;

const CREDENTIAL_TYPE: Record<ApiKeyCurve, CredentialType> = {
  API_KEY_CURVE_P256: "CREDENTIAL_TYPE_API_KEY_P256",
  API_KEY_CURVE_SECP256K1: "CREDENTIAL_TYPE_API_KEY_SECP256K1",
  API_KEY_CURVE_ED25519: "CREDENTIAL_TYPE_API_KEY_ED25519",
};

export function credentialTypeFor(curve: string): CredentialType {
  const t = (CREDENTIAL_TYPE as Record<string, CredentialType | undefined>)[curve];
  if (!t) throw new Error(`unknown curve ${curve}`);
  return t;
}

export async function insertApiKeys(db: Executor, rows: ApiKeyRow[]): Promise<void> {
  if (rows.length) await db.insertInto("api_keys").values(rows).execute();
}

/**
 * Marks every key of a new organization trusted: the app's backend registered them
 * (create_sub_organization by a top-level organization's own credential; docs/login-lookups.md §3).
 */
export async function markKeysTrusted(db: Executor, organizationId: string): Promise<void> {
  await db.updateTable("api_keys").set({ trusted: 1 }).where("organization_id", "=", organizationId).execute();
}

/**
 * Records that the key has stamped a request resolved to this row (docs/login-lookups.md §3).
 * Only the first time counts; a row already proved is never written again (the caller asks
 * only for unproved rows, so the hot path costs nothing once a key is proved).
 */
export async function markProved(db: Executor, apiKeyId: string, now: number): Promise<void> {
  await db.updateTable("api_keys").set({ proved_at: now }).where("id", "=", apiKeyId).where("proved_at", "is", null).execute();
}

export async function apiKeysOfUsers(db: Executor, userIds: readonly string[]): Promise<ApiKeyRow[]> {
  if (userIds.length === 0) return [];
  return db.selectFrom("api_keys").selectAll().where("user_id", "in", userIds).orderBy("created_at").orderBy("id").execute();
}

export function isExpired(key: Pick<ApiKeyRow, "expires_at">, now: number): boolean {
  return key.expires_at !== null && key.expires_at <= now;
}

export function apiKeyView(k: ApiKeyRow) {
  return {
    // A session key names the session profile it was logged in with.
    credential: {
      publicKey: k.public_key,
      type: k.credential_type,
      ...(k.session_profile_id ? { sessionProfileId: k.session_profile_id } : {}),
    },
    apiKeyId: k.id,
    apiKeyName: k.name,
    ...(k.expiration_seconds !== null ? { expirationSeconds: k.expiration_seconds } : {}),
    createdAt: timestampObject(k.created_at),
    updatedAt: timestampObject(k.updated_at),
  };
}
export type ApiKeyView = ReturnType<typeof apiKeyView>;

/**
 * True when this key is the only way into its organization: the organization has one user,
 * who has no email or phone number (a login naming the organization works by either, verified
 * or not), and no other API key, passkey or OAuth identity exists there. Only the key's holder
 * can then act in it, so whoever registered the key, the organization is the holder's
 * (docs/login-lookups.md §3.2).
 */
export async function isOnlyWayIn(db: Executor, key: { id: string; organization_id: string; user_id: string }): Promise<boolean> {
  const org = key.organization_id;
  const row = await db
    .selectFrom("users")
    .select("users.id")
    .where("users.id", "=", key.user_id)
    .where("users.organization_id", "=", org)
    .where("users.email", "is", null)
    .where("users.phone", "is", null)
    .where((eb) =>
      eb.and([
        eb.not(
          eb.exists(
            eb
              .selectFrom("users as others")
              .select("others.id")
              .where("others.organization_id", "=", org)
              .where("others.id", "!=", key.user_id),
          ),
        ),
        eb.not(
          eb.exists(
            eb.selectFrom("api_keys").select("api_keys.id").where("api_keys.organization_id", "=", org).where("api_keys.id", "!=", key.id),
          ),
        ),
        eb.not(eb.exists(eb.selectFrom("authenticators").select("authenticators.id").where("authenticators.organization_id", "=", org))),
        eb.not(eb.exists(eb.selectFrom("oauth_providers").select("oauth_providers.id").where("oauth_providers.organization_id", "=", org))),
      ]),
    )
    .executeTakeFirst();
  return row !== undefined;
}
