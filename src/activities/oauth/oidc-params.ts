// Request fields shared by the OAuth activities and the users that bring OAuth providers.
import { Type } from "@sinclair/typebox";
import { Name } from "../../schemas/common.ts";
import { MAX_OIDC_TOKEN_LENGTH } from "../../logins/oauth/verify-oidc.ts";

export const OidcTokenParam = Type.String({
  minLength: 1,
  maxLength: MAX_OIDC_TOKEN_LENGTH,
  errorMessage: `must be an OIDC token (a signed JWT, at most ${MAX_OIDC_TOKEN_LENGTH} characters)`,
});

const Claim = (what: string) =>
  Type.String({ minLength: 1, maxLength: 1024, errorMessage: `${what} must be a non-empty string (at most 1024 characters)` });

/** v1OidcClaims: an identity given by its claims, vouched for by a token of the same request. */
export const OidcClaimsParam = Type.Object({ iss: Claim("iss"), sub: Claim("sub"), aud: Claim("aud") });

/** v1OauthProviderParamsV2 (create_oauth_providers V2): a token, or claims backed by one. */
export const OauthProviderParamsV2 = Type.Object({
  providerName: Name("providerName"),
  oidcToken: Type.Optional(OidcTokenParam),
  oidcClaims: Type.Optional(OidcClaimsParam),
});

/** v1OauthProviderParams (users and root users): a provider name and its token. */
export const OauthProviderParams = Type.Object({
  providerName: Name("providerName"),
  oidcToken: OidcTokenParam,
});
