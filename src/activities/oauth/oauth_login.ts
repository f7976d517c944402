// oauth_login (docs/oauth.md §4.1): an OIDC token — Sigil's own (oauth2_authenticate) or a
// trusted issuer's — logs in the user holding its identity (iss, sub, one of its audiences)
// as an OAuth provider, in the target organization or a sub-organization below it (sdk-server's
// oauthLogin is stamped by the parent's API key, with the user's sub-organization or the
// parent itself as organizationId). The token's nonce (or tknonce) must be sha256hex of the
// session key, whoever issued it; the token is valid until its exp for any number of logins
// and is never stored beyond the activity's intent. The session is created as stamp_login's.
import { Type } from "@sinclair/typebox";
import { ApiError, Grpc, notFound } from "../../errors.ts";
import { HexPublicKey, Id } from "../../schemas/common.ts";
import { loginSession } from "../sessions/create-session.ts";
import { oauthSettingsOf } from "../../logins/oauth/configure.ts";
import { invalidOidcToken, requireOidcToken, type OidcIdentity } from "../../logins/oauth/verify-oidc.ts";
import { nonceProblem } from "../../logins/oauth/nonce.ts";
import { identityHolders } from "../../store/oauth-providers.ts";
import { organizationChain } from "../../store/organizations.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { OidcTokenParam } from "./oidc-params.ts";

const TOKEN = "parameters.oidcToken";

const Params = Type.Object({
  oidcToken: OidcTokenParam,
  publicKey: HexPublicKey,
  // Checked by createSession, which names the field.
  expirationSeconds: Type.Optional(
    Type.String({ maxLength: 32, errorMessage: "invalid api key expiration: must be a whole number of seconds, as a string" }),
  ),
  invalidateExisting: Type.Optional(Type.Boolean()),
  sessionProfileId: Type.Optional(Id("session profile")),
});

export const oauthLogin = defineActivity({
  type: "ACTIVITY_TYPE_OAUTH_LOGIN",
  resource: "AUTH",
  action: "CREATE",
  kind: "OAUTH_LOGIN",
  summary:
    "Log in the user holding the OIDC token's identity (iss, sub, aud) in the organization or below it: publicKey (whose sha256 hex is the token's nonce) becomes a session key; returns the session JWT.",
  params: Params,
  returns: Type.Object({ session: Type.String({ description: "session JWT (ES256 over SHA-256(SHA-256(header.payload)))" }) }),
  // docs/request-path.md §5: an authentication flow a parent's backend may start for a sub-organization's user.
  parentMayStamp: true,
  policyParams: (p) => ({ session_profile_id: p.sessionProfileId ?? "" }),
  // The issuer's JWKS is fetched here, outside the transaction; Sigil's own keys are read.
  async prepare(ctx, p) {
    const identity = await requireOidcToken(ctx.db, p.oidcToken, oauthSettingsOf(ctx.services.logins), TOKEN, { now: ctx.now });
    const problem = nonceProblem(identity, p.publicKey);
    if (problem) throw invalidOidcToken(TOKEN, problem);
    return identity;
  },
  async execute(ctx, p) {
    const user = await identityHolder(ctx, ctx.prepared);
    return { session: await loginSession(ctx, { userId: user.user_id, organizationId: user.organization_id }, p) };
  },
});

/** The one user holding the identity in the target organization or below it (oauth_login, oauth). */
export async function identityHolder(
  ctx: ExecuteContext<unknown>,
  identity: Pick<OidcIdentity, "iss" | "sub" | "aud">,
): Promise<{ user_id: string; organization_id: string }> {
  const target = ctx.organization.id;
  const holders = [];
  for (const h of await identityHolders(ctx.tx, identity.iss, identity.sub, identity.aud)) {
    if ((await organizationChain(ctx.tx, h.organization_id, ctx.chains)).includes(target)) holders.push(h);
  }
  if (holders.length === 0) throw notFound(`no user with this OAuth identity in organization ${target} or its sub-organizations`);
  if (new Set(holders.map((h) => h.user_id)).size > 1) {
    throw new ApiError(
      Grpc.INVALID_ARGUMENT,
      "CREDENTIAL_CONFLICT",
      `more than one user associated with this OAuth identity below organization ${target}`,
    );
  }
  return holders[0]!;
}
