// oauth2_authenticate (docs/oauth.md §3): exchange the authorization code at the credential's
// provider (PKCE verifier, redirect URI, client id and secret), learn who the user is, and
// return an OIDC token Sigil signs (logins/oauth/oidc-issuer.ts). The provider calls happen in
// `prepare`, outside any database transaction, with the configured deadline; their failures
// are the submission's answer (a 400 quoting at most the provider's `error` code) and nothing
// is recorded. The bearer token is encrypted to the caller's key there too, so the plaintext
// never reaches the activity's transaction, record or logs.
import { Type, type Static } from "@sinclair/typebox";
import { invalid, notFound, precondition } from "../../errors.ts";
import { Id } from "../../schemas/common.ts";
import { findOauth2Credential, openClientSecretSealed } from "../../store/oauth2-credentials.ts";
import { OAUTH_PROVIDERS, type ProviderIdentity } from "../../logins/oauth/providers.ts";
import { oauthSettingsOf } from "../../logins/oauth/configure.ts";
import { exchangeCode, fetchUserInfo, ProviderError } from "../../logins/oauth/provider-client.ts";
import { encryptBearerToken, uncompressedP256 } from "../../logins/oauth/bearer-token.ts";
import { mintOidcToken } from "../../logins/oauth/oidc-issuer.ts";
import { defineActivity, type ExecuteContext, type PrepareContext } from "../define.ts";

const Params = Type.Object({
  oauth2CredentialId: Id("oauth2 credential"),
  authCode: Type.String({
    minLength: 1,
    maxLength: 4096,
    pattern: "^[\\x21-\\x7e]+$",
    errorMessage: "auth_code must be set: 1 to 4096 printable ASCII characters",
  }),
  redirectUri: Type.String({
    minLength: 1,
    maxLength: 2048,
    errorMessage: "redirect_uri must be set: an absolute URL of at most 2048 characters",
  }),
  // RFC 7636 §4.1: 43 to 128 characters of the unreserved set.
  codeVerifier: Type.String({
    pattern: "^[A-Za-z0-9._~-]{43,128}$",
    errorMessage: "code_verifier must be set: 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636)",
  }),
  nonce: Type.String({
    minLength: 1,
    maxLength: 256,
    pattern: "^[\\x21-\\x7e]+$",
    errorMessage: "nonce must be set: 1 to 256 printable ASCII characters (sha256 hex of the session public key)",
  }),
  bearerTokenTargetPublicKey: Type.Optional(
    Type.String({
      pattern: "^(0[23][0-9a-fA-F]{64}|04[0-9a-fA-F]{128})$",
      errorMessage: "bearerTokenTargetPublicKey must be a P-256 public key (compressed or uncompressed hex)",
    }),
  ),
});
type P = Static<typeof Params>;

interface Prepared {
  clientId: string;
  identity: ProviderIdentity;
  encryptedBearerToken?: string;
}

function check(p: P): void {
  let url: URL | undefined;
  try {
    url = new URL(p.redirectUri);
  } catch {
    url = undefined;
  }
  if (!url)
    throw invalid("redirect_uri must be an absolute URL", [{ field: "parameters.redirectUri", description: "must be an absolute URL" }]);
  if (p.bearerTokenTargetPublicKey !== undefined && !uncompressedP256(p.bearerTokenTargetPublicKey)) {
    throw invalid("bearerTokenTargetPublicKey is not a point of P-256", [
      { field: "parameters.bearerTokenTargetPublicKey", description: "must be a P-256 public key" },
    ]);
  }
}

async function prepare(ctx: PrepareContext, p: P, when: "submission" | "approval"): Promise<Prepared | undefined> {
  // An authorization code is single-use and short-lived: it is exchanged when the submission is
  // allowed, never speculatively before an approval (which may not complete consensus). An
  // activity that needed approvals is recorded FAILED at the vote that would run it.
  if (when === "approval") return undefined;
  const settings = oauthSettingsOf(ctx.services.logins);
  const row = await findOauth2Credential(ctx.db, ctx.organization.id, p.oauth2CredentialId);
  if (!row)
    throw notFound(`OAUTH2_CREDENTIAL_NOT_FOUND: no OAuth 2.0 credential ${p.oauth2CredentialId} in organization ${ctx.organization.id}`);
  const provider = OAUTH_PROVIDERS.get(row.provider);
  const endpoints = settings.providers.get(row.provider);
  if (!provider || !endpoints) {
    throw precondition(`OAuth provider ${row.provider} has no endpoints on this server (configure it in SIGIL_OAUTH_PROVIDERS_FILE)`);
  }
  const opts = { timeoutMs: settings.timeoutMs, allowLoopback: settings.allowLoopback };
  try {
    const exchanged = await exchangeCode(
      provider,
      endpoints,
      {
        clientId: row.client_id,
        clientSecret: await openClientSecretSealed(ctx.services.masterKey, row),
        code: p.authCode,
        codeVerifier: p.codeVerifier,
        redirectUri: p.redirectUri,
      },
      opts,
    );
    const info = await fetchUserInfo(endpoints, exchanged, opts);
    const identity = provider.identity(info);
    if (typeof identity === "string") throw new ProviderError(identity);
    return {
      clientId: row.client_id,
      identity,
      ...(p.bearerTokenTargetPublicKey !== undefined
        ? { encryptedBearerToken: await encryptBearerToken(exchanged.accessToken, p.bearerTokenTargetPublicKey) }
        : {}),
    };
  } catch (err) {
    // ProviderError messages are built to be shown (no body, secret or token in them).
    if (err instanceof ProviderError) throw precondition(`OAuth 2.0 authentication with ${row.provider} failed: ${err.message}`);
    throw err;
  }
}

async function execute(ctx: ExecuteContext<Prepared>, p: P) {
  const settings = oauthSettingsOf(ctx.services.logins);
  const key = await ctx.services.serviceKey("OIDC_TOKEN");
  const oidcToken = await mintOidcToken(key, {
    issuer: settings.publicUrl,
    audience: ctx.prepared.clientId,
    identity: ctx.prepared.identity,
    nonce: p.nonce,
    iat: Math.floor(ctx.now / 1000),
    ...(ctx.prepared.encryptedBearerToken !== undefined ? { encryptedBearerToken: ctx.prepared.encryptedBearerToken } : {}),
  });
  return { oidcToken };
}

export const oauth2Authenticate = defineActivity({
  type: "ACTIVITY_TYPE_OAUTH2_AUTHENTICATE",
  resource: "AUTH",
  action: "CREATE",
  kind: "OAUTH2_AUTHENTICATE",
  summary:
    "Exchange an OAuth 2.0 authorization code (PKCE) at the credential's provider and return an OIDC token signed by this service (iss = SIGIL_PUBLIC_URL, aud = client id, sub = provider-scoped id, nonce as given; encrypted_bearer_token when bearerTokenTargetPublicKey is set).",
  params: Params,
  // Code and PKCE verifier together redeem the authorization: recorded sealed (docs/activities.md §10).
  secretParams: ["authCode", "codeVerifier"],
  returns: Type.Object({ oidcToken: Type.String() }),
  check,
  prepare,
  execute,
});
