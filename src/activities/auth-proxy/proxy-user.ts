// The proxy user, its key and the two policies that confine it (docs/auth-proxy.md §3).
//
// enable_auth_proxy makes, in its transaction: a user of the top-level organization with no
// email or phone (so no login flow can ever reach it), a P-256 key generated here whose public
// half is that user's only API key and whose private half exists only sealed in the config row,
// and two policies naming the user by id in their consensus:
//
//   ALLOW  condition: activity.type in [<FORWARDED_ACTIVITY_TYPES>]
//   DENY   condition: !(activity.type in [<FORWARDED_ACTIVITY_TYPES>])
//   both   consensus: approvers.any(user, user.id == '<proxy user id>')
//
// The DENY is what stops the implicit permissions (a user may change its own credentials,
// stamp_login: docs/policy-language.md §6.8), which yield only to an explicit policy (§6.4
// step 4 before step 7 there). The credential look-up adds a hard gate for the proxy key
// itself (auth/api-key-stamp.ts, pipeline/validate.ts): forwarded types only, no votes.
import { FORWARDED_ACTIVITY_TYPES } from "../../auth-proxy/forwarded.ts";
import { generateP256, toPkcs8, type P256Private } from "../../crypto/p256.ts";
import { bumpPolicyVersion, type PolicyRow } from "../../store/policies.ts";
import { findUser } from "../../store/users.ts";
import type { Executor } from "../../store/schema.ts";
import { newOrderedId } from "../../store/util.ts";
import { addUsers } from "../users/new-users.ts";
import { addApiKeys } from "../credentials/api-keys.ts";
import { insertPolicies } from "../policies/policy-fields.ts";

export const PROXY_USER_NAME = "auth proxy";
export const PROXY_KEY_NAME = "auth proxy key";

const typeList = () => `[${FORWARDED_ACTIVITY_TYPES.map((t) => `'${t}'`).join(", ")}]`;

/** The policy expressions for a proxy user (exported for the tests and the docs). */
export function proxyPolicyExpressions(userId: string): { allow: string; deny: string; consensus: string } {
  // A user id is a UUID (no quote can reach the expression).
  if (!/^[0-9a-f-]{36}$/i.test(userId)) throw new Error("proxy user id must be a UUID");
  return {
    allow: `activity.type in ${typeList()}`,
    deny: `!(activity.type in ${typeList()})`,
    consensus: `approvers.any(user, user.id == '${userId}')`,
  };
}

/** Inserts the two policies; returns their ids (ALLOW, DENY). */
export async function insertProxyPolicies(
  tx: Executor,
  organizationId: string,
  configId: string,
  userId: string,
  now: number,
): Promise<string[]> {
  const e = proxyPolicyExpressions(userId);
  const tag = configId.slice(0, 8);
  const row = (name: string, effect: PolicyRow["effect"], condition: string, notes: string): PolicyRow => ({
    id: newOrderedId(now),
    organization_id: organizationId,
    name,
    effect,
    condition,
    consensus: e.consensus,
    time: "",
    notes,
    created_at: now,
    updated_at: now,
  });
  const rows = [
    row(
      `auth proxy ${tag}: forwarded activities`,
      "EFFECT_ALLOW",
      e.allow,
      "The auth proxy's key may submit the sign-up, OTP and OAuth activities it forwards (docs/auth-proxy.md §3).",
    ),
    row(
      `auth proxy ${tag}: nothing else`,
      "EFFECT_DENY",
      e.deny,
      "The auth proxy's user may do nothing else, not even change its own credentials (docs/auth-proxy.md §3).",
    ),
  ];
  await insertPolicies(tx, organizationId, rows);
  return rows.map((r) => r.id);
}

/** Deletes what is left of a proxy user's policies (before putting them back). */
export async function deleteProxyPolicies(tx: Executor, organizationId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx
    .deleteFrom("policies")
    .where("organization_id", "=", organizationId)
    .where("id", "in", [...ids])
    .execute();
  await bumpPolicyVersion(tx, organizationId);
}

export async function missingPolicies(tx: Executor, organizationId: string, ids: readonly string[]): Promise<boolean> {
  if (ids.length !== 2) return true;
  const found = await tx
    .selectFrom("policies")
    .select("id")
    .where("organization_id", "=", organizationId)
    .where("id", "in", [...ids])
    .execute();
  return found.length !== ids.length;
}

/** A new proxy key: the pair, and its PKCS#8 DER (the caller seals it, then zeroes it). */
export function newProxyKey(): { key: P256Private; pkcs8: Buffer } {
  const key = generateP256();
  return { key, pkcs8: toPkcs8(key) };
}

/** The proxy user with the key as its one API key; returns its id. */
export async function insertProxyUser(tx: Executor, organizationId: string, publicKey: string, now: number): Promise<string> {
  const [id] = await addUsers(
    tx,
    organizationId,
    [
      {
        userName: PROXY_USER_NAME,
        apiKeys: [{ apiKeyName: PROXY_KEY_NAME, publicKey, curveType: "API_KEY_CURVE_P256" }],
        authenticators: [],
        oauthProviders: [],
      },
    ],
    now,
    "proxy user",
  );
  return id!;
}

/**
 * What re-enabling repairs: a proxy user a root user deleted is made again (same key), a key
 * deleted from it is registered again. Returns the user id and whether it changed.
 */
export async function ensureProxyUser(
  tx: Executor,
  organizationId: string,
  userId: string,
  publicKey: string,
  now: number,
): Promise<{ userId: string; changed: boolean }> {
  if (!(await findUser(tx, organizationId, userId)))
    return { userId: await insertProxyUser(tx, organizationId, publicKey, now), changed: true };
  const key = await tx
    .selectFrom("api_keys")
    .select("id")
    .where("user_id", "=", userId)
    .where("public_key_normalized", "=", publicKey)
    .executeTakeFirst();
  if (!key) {
    await addApiKeys(
      tx,
      organizationId,
      userId,
      [{ apiKeyName: PROXY_KEY_NAME, publicKey, curveType: "API_KEY_CURVE_P256" }],
      now,
      "proxy key",
    );
    return { userId, changed: true };
  }
  return { userId, changed: false };
}
