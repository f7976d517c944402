// Turning a request's OAuth providers into the identities to store, in `prepare` (outside the
// transaction: a trusted issuer's JWKS may be fetched). Every oidcToken is fully verified
// (signature, exp, iss, aud, sub); the nonce is not checked at registration (docs/oauth.md
// §6.1) — it binds a token to a login key, and registering logs nobody in. Only (iss, aud,
// sub) is kept, never the token.
import { invalid } from "../../errors.ts";
import { oauthSettingsOf } from "../../logins/oauth/configure.ts";
import { requireOidcToken, singleAudience, type OidcIdentity } from "../../logins/oauth/verify-oidc.ts";
import type { NewIdentity } from "../../store/oauth-providers.ts";
import type { Executor } from "../../store/schema.ts";
import type { PrepareContext } from "../define.ts";

/** An identity to attach, with what the token said of the person's email. */
export interface PreparedIdentity extends NewIdentity {
  email?: string;
  emailVerified?: boolean;
}

/** The issuer whose verified email marks the user's email verified (social linking, docs/oauth.md §6.1). */
const GOOGLE_ISSUERS = new Set(["https://accounts.google.com", "accounts.google.com"]);

/** The identity a verified token registers: its single audience (or azp among several). */
export function identityOf(identity: OidcIdentity, providerName: string, field: string): PreparedIdentity {
  const audience = singleAudience(identity);
  if (audience === undefined) {
    throw invalid(
      `${field}: the token names several audiences and no authorized party (azp) among them; which client it is for is ambiguous`,
      [{ field, description: "must name one audience (or an azp among them)" }],
    );
  }
  return {
    providerName,
    issuer: identity.iss,
    audience,
    subject: identity.sub,
    field,
    ...(identity.email !== undefined ? { email: identity.email } : {}),
    ...(identity.email_verified !== undefined ? { emailVerified: identity.email_verified } : {}),
  };
}

/** Verifies one token for registration (no nonce). */
export async function verifyForRegistration(
  ctx: PrepareContext,
  token: string,
  providerName: string,
  field: string,
): Promise<PreparedIdentity> {
  const identity = await requireOidcToken(ctx.db, token, oauthSettingsOf(ctx.services.logins), field, { now: ctx.now });
  return identityOf(identity, providerName, field);
}

/**
 * The identities of users being created (create_users, create_sub_organization), per user in
 * request order; every token of the request verified before anything is written.
 */
export async function prepareUsersProviders(
  ctx: PrepareContext,
  users: readonly { oauthProviders: readonly { providerName: string; oidcToken: string }[] }[],
  field: string,
): Promise<PreparedIdentity[][]> {
  const out: PreparedIdentity[][] = [];
  for (const [i, u] of users.entries()) {
    const mine: PreparedIdentity[] = [];
    for (const [j, p] of u.oauthProviders.entries()) {
      mine.push(await verifyForRegistration(ctx, p.oidcToken, p.providerName, `${field}[${i}].oauthProviders[${j}].oidcToken`));
    }
    out.push(mine);
  }
  return out;
}

/**
 * Google social linking (docs/oauth.md §6.1): a Google identity whose token carries the user's
 * own email, verified by Google, marks that email verified.
 */
export async function markEmailVerifiedByGoogle(
  tx: Executor,
  userId: string,
  userEmail: string | null | undefined,
  identities: readonly PreparedIdentity[],
  now: number,
): Promise<void> {
  if (!userEmail) return;
  const vouches = identities.some(
    (i) => GOOGLE_ISSUERS.has(i.issuer) && i.emailVerified === true && i.email?.toLowerCase() === userEmail.toLowerCase(),
  );
  if (!vouches) return;
  await tx.updateTable("users").set({ email_verified_at: now }).where("id", "=", userId).where("email_verified_at", "is", null).execute();
}
