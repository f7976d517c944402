// STAMP_ATTESTED_SCHEME_P256_OIDC (docs/oauth.md §4.2): what @turnkey/core's loginWithOauth
// stamps stamp_login with. The attestation is an OIDC token — Sigil's own or a trusted
// issuer's (logins/oauth/verify-oidc.ts) — whose nonce (or tknonce) is sha256hex of the stamp's
// publicKey (logins/oauth/nonce.ts): the key that signed the request is the one the token was
// requested for. The user is the one holding the token's identity (iss, sub, one of its
// audiences) as an OAuth provider: in the target organization or an ancestor (the nearest
// wins), else in the unique sub-organization below the target that holds it — core sends the
// parent organization's id.
//
// Unlike a verification token, an OIDC token is valid until its exp for any number of logins:
// nothing is recorded or consumed. The credential id votes record for it is
// derived from the token (OIDC_CREDENTIAL_PREFIX), so stamp_login can tell it from a
// verification token's id and consumes nothing.
import { createHash } from "node:crypto";
import { unauthenticated } from "../../errors.ts";
import type { Db } from "../../store/schema.ts";
import { HOLDER_COLUMNS, holderParts } from "../holder.ts";
import { resolveHolder } from "../credential-scope.ts";
import { DEFAULT_LOGIN_SETTINGS, type LoginSettings } from "../../logins/settings.ts";
import { oauthSettingsOf } from "../../logins/oauth/configure.ts";
import { nonceProblem } from "../../logins/oauth/nonce.ts";
import { OidcTokenProblem, verifyOidcToken, type OidcIdentity } from "../../logins/oauth/verify-oidc.ts";
import type { Rider } from "../strategy.ts";
import type { AttestationScheme } from "./scheme.ts";

/** Credential ids of OIDC attestations start with this; verification tokens' never do. */
export const OIDC_CREDENTIAL_PREFIX = "oidc_";

export const isOidcCredentialId = (id: string): boolean => id.startsWith(OIDC_CREDENTIAL_PREFIX);

const refused = (why: string) => unauthenticated("INVALID_OIDC_TOKEN", `invalid attested stamp: ${why}`);

function holdersOf(db: Db, identity: OidcIdentity, rider: Rider<unknown>) {
  return db
    .selectFrom("oauth_providers")
    .innerJoin("users", "users.id", "oauth_providers.user_id")
    .innerJoin("organizations", "organizations.id", "users.organization_id")
    .select(["users.organization_id as organization_id", ...HOLDER_COLUMNS])
    .select(rider.columns(db))
    .where("oauth_providers.issuer", "=", identity.iss)
    .where("oauth_providers.subject", "=", identity.sub)
    .where("oauth_providers.audience", "in", identity.aud)
    .execute();
}

export const oidcScheme: AttestationScheme = {
  async resolve(db, chains, stamp, targetOrganizationId, now, rider, logins?: LoginSettings) {
    let identity: OidcIdentity;
    try {
      identity = await verifyOidcToken(db, stamp.attestation, oauthSettingsOf(logins ?? DEFAULT_LOGIN_SETTINGS), { now });
    } catch (err) {
      if (err instanceof OidcTokenProblem) throw refused(err.message);
      throw err;
    }
    const problem = nonceProblem(identity, stamp.publicKey);
    if (problem) throw refused(problem);

    let holders: Awaited<ReturnType<typeof holdersOf>> = [];
    const lookUp = async () => (holders = await holdersOf(db, identity, rider));
    const found = await resolveHolder(db, targetOrganizationId, "then-descendants", lookUp, chains, "this OAuth identity");
    if (!found) {
      throw unauthenticated(
        "CREDENTIAL_NOT_FOUND",
        `no user with this OAuth identity in organization ${targetOrganizationId} or its sub-organizations`,
      );
    }
    const user = found.holder;
    // Several audiences of one token held by different users of one organization: ambiguous.
    if (new Set(holders.filter((h) => h.organization_id === user.organization_id).map((h) => h.user_id)).size > 1) {
      throw unauthenticated(
        "CREDENTIAL_CONFLICT",
        `more than one user associated with this OAuth identity in organization ${user.organization_id}`,
      );
    }
    const holder = holderParts(user);
    return {
      // No attestedTokenId: stamp_login consumes nothing for an OIDC token.
      principal: { ...holder, organization: { id: found.organizationId }, fromAncestor: found.fromAncestor },
      credentialId: OIDC_CREDENTIAL_PREFIX + createHash("sha256").update(stamp.attestation).digest("hex").slice(0, 32),
      expiresAt: identity.exp * 1000,
      rider: rider.read(user),
    };
  },
};
