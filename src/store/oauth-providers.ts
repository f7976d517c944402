// OIDC identities attached to users (docs/oauth-identities.md, "One identity, one user"): (issuer, audience, subject)
// per provider, never the token. One identity is unique across the service — the unique index
// `oauth_providers_identity` (migration 009) decides, so two requests attaching it at once
// cannot both succeed: the second is OAUTH_PROVIDER_ALREADY_EXISTS (409).
import { ApiError, Grpc, invalid } from "../errors.ts";
import { lockUsers } from "./locks.ts";
import type { Executor, OauthProvidersTable } from "./schema.ts";
import { precompiled } from "./precompiled.ts";
import { isUniqueViolation, newId, timestampObject } from "./util.ts";

export type OauthProviderRow = OauthProvidersTable;

/** Per user: a handful of sign-in identities is plenty; the cap bounds what one user costs. */
export const MAX_OAUTH_PROVIDERS_PER_USER = 10;

export function oauthProviderAlreadyExists(field: string): ApiError {
  return new ApiError(
    Grpc.ALREADY_EXISTS,
    "OAUTH_PROVIDER_ALREADY_EXISTS",
    `${field}: this OAuth identity (issuer, audience, subject) is already attached to a user`,
    [
      {
        "@type": "type.googleapis.com/google.rpc.BadRequest",
        fieldViolations: [{ field, description: "identity already attached to a user" }],
      },
    ],
  );
}

export interface NewIdentity {
  providerName: string;
  issuer: string;
  audience: string;
  subject: string;
  /** Where it came from in the request, for errors. */
  field: string;
  /** What vouched for it (docs/oauth-identities.md): a token of it (default) or claims. */
  vouchedBy?: "OIDC_TOKEN" | "OIDC_CLAIMS";
}

// The record's shape lives with the other response shapes (schemas/views.ts).
export { OauthProviderSchema } from "../schemas/views.ts";

/** The SDK's OauthProvider record. */
export function oauthProviderView(r: OauthProviderRow) {
  return {
    providerId: r.id,
    providerName: r.provider_name,
    issuer: r.issuer,
    audience: r.audience,
    subject: r.subject,
    createdAt: timestampObject(r.created_at),
    updatedAt: timestampObject(r.updated_at),
  };
}
export type OauthProviderView = ReturnType<typeof oauthProviderView>;

/**
 * Attaches the identities to a user (who must exist: the caller checked, or just created
 * it). The user is locked, so the per-user cap holds under concurrency; the identity's
 * uniqueness is the index's. Returns the provider ids in order.
 */
export async function attachIdentities(
  tx: Executor,
  organizationId: string,
  userId: string,
  identities: readonly NewIdentity[],
  now: number,
  capField: string,
): Promise<string[]> {
  if (identities.length === 0) return [];
  await lockUsers(tx, organizationId, [userId]);
  const held = await tx
    .selectFrom("oauth_providers")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("user_id", "=", userId)
    .executeTakeFirstOrThrow();
  if (Number(held.n) + identities.length > MAX_OAUTH_PROVIDERS_PER_USER) {
    throw invalid(`${capField}: a user holds at most ${MAX_OAUTH_PROVIDERS_PER_USER} OAuth providers (${Number(held.n)} attached)`, [
      { field: capField, description: `at most ${MAX_OAUTH_PROVIDERS_PER_USER} per user` },
    ]);
  }
  const ids: string[] = [];
  // One row at a time: a duplicate is reported on the entry that carries it.
  for (const idn of identities) {
    const id = newId();
    try {
      await tx
        .insertInto("oauth_providers")
        .values({
          id,
          organization_id: organizationId,
          user_id: userId,
          provider_name: idn.providerName,
          issuer: idn.issuer,
          audience: idn.audience,
          subject: idn.subject,
          vouched_by: idn.vouchedBy ?? "OIDC_TOKEN",
          created_at: now,
          updated_at: now,
        })
        .execute();
    } catch (err) {
      if (isUniqueViolation(err, "oauth_providers")) throw oauthProviderAlreadyExists(idn.field);
      throw err;
    }
    ids.push(id);
  }
  return ids;
}

const providersOfUser = precompiled(["userId"], (db, v) =>
  db.selectFrom("oauth_providers").selectAll().where("user_id", "=", v.userId).orderBy("created_at").orderBy("id"),
);

/** The providers of the users (one query), oldest first. */
export async function oauthProvidersOfUsers(db: Executor, userIds: readonly string[]): Promise<OauthProviderRow[]> {
  if (userIds.length === 0) return [];
  if (userIds.length === 1) return providersOfUser(db, { userId: userIds[0] });
  return db
    .selectFrom("oauth_providers")
    .selectAll()
    .where("user_id", "in", [...userIds])
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

/** The providers of an organization's users, oldest first (get_oauth_providers without userId). */
export async function oauthProvidersOfOrganization(db: Executor, organizationId: string): Promise<OauthProviderRow[]> {
  return db
    .selectFrom("oauth_providers")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

/** Who holds the identity (issuer, subject, any of `audiences`): at most one row per audience. */
export function identityHolders(db: Executor, issuer: string, subject: string, audiences: readonly string[]) {
  return db
    .selectFrom("oauth_providers")
    .select([
      "oauth_providers.organization_id as organization_id",
      "oauth_providers.user_id as user_id",
      "oauth_providers.audience as audience",
    ])
    .where("issuer", "=", issuer)
    .where("subject", "=", subject)
    .where("audience", "in", [...audiences])
    .execute();
}

/**
 * Removes providers of a user. Every id must be one of the user's (checked under the user's
 * lock); returns the ids removed, deduplicated, in request order.
 */
export async function detachProviders(
  tx: Executor,
  organizationId: string,
  userId: string,
  providerIds: readonly string[],
): Promise<{ removed: string[]; missing: string[] }> {
  const unique = [...new Set(providerIds)];
  const rows = await tx
    .selectFrom("oauth_providers")
    .select("id")
    .where("organization_id", "=", organizationId)
    .where("user_id", "=", userId)
    .where("id", "in", unique)
    .execute();
  const have = new Set(rows.map((r) => r.id));
  const missing = unique.filter((id) => !have.has(id));
  if (missing.length > 0) return { removed: [], missing };
  await tx.deleteFrom("oauth_providers").where("user_id", "=", userId).where("id", "in", unique).execute();
  return { removed: unique, missing };
}
