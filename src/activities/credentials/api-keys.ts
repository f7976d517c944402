// Registering API keys for a user: shared by create_api_keys, create_users and
// create_sub_organization, so every path applies the same checks and limits.
import { alreadyExists, exhausted, invalid, notFound } from "../../errors.ts";
import { publicKeyProblem, type Curve } from "../../crypto/public-keys.ts";
import { credentialTypeFor, insertApiKeys, type ApiKeyRow } from "../../store/api-keys.ts";
import type { Executor } from "../../store/schema.ts";
import { lockUsers } from "../../store/locks.ts";
import { isUniqueViolation, newId } from "../../store/util.ts";

/** Per user, as the upstream service documents: 10 long-lived and 10 expiring keys. */
export const MAX_LONG_LIVED_KEYS = 10;
export const MAX_EXPIRING_KEYS = 10;
/** The longest expiry accepted: ten years. */
export const MAX_EXPIRATION_SECONDS = 10 * 365 * 86400;

export interface NewApiKey {
  apiKeyName: string;
  publicKey: string;
  curveType?: Curve;
  expirationSeconds?: string;
}

export async function addApiKeys(
  tx: Executor,
  organizationId: string,
  userId: string,
  keys: readonly NewApiKey[],
  now: number,
  field: string,
): Promise<string[]> {
  const rows: ApiKeyRow[] = keys.map((k, i) => {
    const curve = k.curveType ?? "API_KEY_CURVE_P256";
    const problem = publicKeyProblem(curve, k.publicKey);
    if (problem) {
      throw invalid(`${field}[${i}].publicKey: ${problem}`, [{ field: `${field}[${i}].publicKey`, description: problem }]);
    }
    let expiresAt: number | null = null;
    if (k.expirationSeconds !== undefined) {
      const secs = Number(k.expirationSeconds);
      if (secs > MAX_EXPIRATION_SECONDS) {
        throw invalid(`invalid api key expiration: ${field}[${i}].expirationSeconds may be at most ${MAX_EXPIRATION_SECONDS}`, [
          { field: `${field}[${i}].expirationSeconds`, description: `at most ${MAX_EXPIRATION_SECONDS}` },
        ]);
      }
      expiresAt = now + secs * 1000;
    }
    return {
      id: newId(),
      organization_id: organizationId,
      user_id: userId,
      name: k.apiKeyName,
      public_key: k.publicKey,
      public_key_normalized: k.publicKey.toLowerCase(),
      curve,
      credential_type: credentialTypeFor(curve),
      expiration_seconds: k.expirationSeconds ?? null,
      expires_at: expiresAt,
      created_at: now,
      updated_at: now,
    };
  });
  if (rows.length === 0) return [];

  // Count-then-insert holds only while this user's key writers queue up: lock the user row
  // (PostgreSQL; SQLite has one writer) so a concurrent create_api_keys counts after our
  // insert is committed. The lock also proves the user still exists (a concurrent
  // delete_users holds it while deleting).
  const [locked] = await lockUsers(tx, organizationId, [userId]);
  if (!locked) throw notFound(`no user ${userId} in organization ${organizationId}`);
  const newExpiring = rows.filter((r) => r.expires_at !== null).length;
  const newLongLived = rows.length - newExpiring;
  if (newLongLived > 0) {
    const held = await tx.selectFrom("api_keys").select(["id"]).where("user_id", "=", userId).where("expires_at", "is", null).execute();
    if (held.length + newLongLived > MAX_LONG_LIVED_KEYS)
      throw exhausted(`user has exceeded maximum long-lived api keys (${MAX_LONG_LIVED_KEYS})`);
  }
  await makeRoomForExpiringKeys(tx, userId, newExpiring, now);

  try {
    await insertApiKeys(tx, rows);
  } catch (err) {
    if (isUniqueViolation(err, "api_keys")) throw alreadyExists(`${field}: api key public key already exists in this organization`);
    throw err;
  }
  return rows.map((r) => r.id);
}

/**
 * Makes room for `incoming` new expiring keys of `userId` (docs/organizations.md §3.2): the
 * user's expired keys go first; if the live expiring keys and the new ones would still pass
 * MAX_EXPIRING_KEYS, the oldest live expiring keys (by creation) go too, whatever made them
 * (create_api_keys, a login). Only a request that alone brings more than the cap is refused.
 * The caller holds the user's row lock (lockUsers), so concurrent writers count in turn.
 */
export async function makeRoomForExpiringKeys(tx: Executor, userId: string, incoming: number, now: number): Promise<void> {
  if (incoming > MAX_EXPIRING_KEYS) throw exhausted(`user has exceeded maximum short-lived api keys (${MAX_EXPIRING_KEYS})`);
  await tx.deleteFrom("api_keys").where("user_id", "=", userId).where("expires_at", "<=", now).execute();
  if (incoming === 0) return;
  const live = await tx
    .selectFrom("api_keys")
    .select(["id"])
    .where("user_id", "=", userId)
    .where("expires_at", "is not", null)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
  const excess = live.length + incoming - MAX_EXPIRING_KEYS;
  if (excess > 0)
    await tx
      .deleteFrom("api_keys")
      .where(
        "id",
        "in",
        live.slice(0, excess).map((k) => k.id),
      )
      .execute();
}
