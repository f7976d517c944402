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
    credential: { publicKey: k.public_key, type: k.credential_type, ...(k.session_profile_id ? { sessionProfileId: k.session_profile_id } : {}) },
    apiKeyId: k.id,
    apiKeyName: k.name,
    ...(k.expiration_seconds !== null ? { expirationSeconds: k.expiration_seconds } : {}),
    createdAt: timestampObject(k.created_at),
    updatedAt: timestampObject(k.updated_at),
  };
}
export type ApiKeyView = ReturnType<typeof apiKeyView>;
