// oauth (docs/logins.md §9.6): the legacy OIDC login. The token is checked as oauth_login
// checks it (logins/oauth/verify-oidc.ts, the issuer's JWKS fetched outside the transaction),
// its nonce must commit to targetPublicKey (sha256 hex of the key's hex text, as the legacy
// clients derive it from their target key), and the one user holding its identity in the
// target organization or below it gets a credential bundle sealed to targetPublicKey
// (logins/credential-bundles) instead of a session JWT.
import { Type } from "@sinclair/typebox";
import { oauthSettingsOf } from "../../logins/oauth/configure.ts";
import { invalidOidcToken, requireOidcToken } from "../../logins/oauth/verify-oidc.ts";
import { nonceProblem } from "../../logins/oauth/nonce.ts";
import { BundleLoginResult, checkTargetKey, credentialFor, issueCredential } from "../credential-bundles/issue.ts";
import { defineActivity } from "../define.ts";
import { identityHolder } from "./oauth_login.ts";
import { OidcTokenParam } from "./oidc-params.ts";

const TOKEN = "parameters.oidcToken";

const Params = Type.Object({
  oidcToken: OidcTokenParam,
  targetPublicKey: Type.String({ minLength: 66, maxLength: 132, errorMessage: "targetPublicKey must be a P-256 public key (hex)" }),
  apiKeyName: Type.Optional(Type.String({ minLength: 1, maxLength: 256, errorMessage: "apiKeyName must be 1 to 256 characters" })),
  expirationSeconds: Type.Optional(
    Type.String({ maxLength: 32, errorMessage: "invalid api key expiration: must be a whole number of seconds, as a string" }),
  ),
  invalidateExisting: Type.Optional(Type.Boolean()),
});

export const oauth = defineActivity({
  type: "ACTIVITY_TYPE_OAUTH",
  resource: "AUTH",
  action: "CREATE",
  kind: "OAUTH",
  summary:
    "Log in the user holding the OIDC token's identity (nonce = sha256 hex of targetPublicKey): returns a credential bundle sealed to targetPublicKey.",
  params: Params,
  returns: BundleLoginResult,
  // docs/request-path.md §5: an authentication flow a parent's backend runs for its sub-organizations' users.
  parentMayStamp: true,
  check: (p) => checkTargetKey(p.targetPublicKey),
  async prepare(ctx, p) {
    const identity = await requireOidcToken(ctx.db, p.oidcToken, oauthSettingsOf(ctx.services.logins), TOKEN, { now: ctx.now });
    const problem = nonceProblem(identity, p.targetPublicKey);
    if (problem) throw invalidOidcToken(TOKEN, `${problem} (here the key is parameters.targetPublicKey)`);
    return identity;
  },
  async execute(ctx, p) {
    const user = await identityHolder(ctx, ctx.prepared);
    const issued = await issueCredential(ctx, credentialFor({ id: user.user_id, organization_id: user.organization_id }, "Oauth", p));
    return { userId: user.user_id, apiKeyId: issued.apiKeyId, credentialBundle: issued.credentialBundle };
  },
});
