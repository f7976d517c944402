// What OAuth is configured with (docs/oauth.md §7), built once from the configuration by
// `sigil serve` (logins/oauth/configure.ts) and handed to activities as part of the login
// settings (LoginSettings.oauth). Types only.

/** A provider's endpoints (SIGIL_OAUTH_PROVIDERS_FILE overrides the built-in ones). */
export interface OAuthProviderEndpoints {
  /** authorization_code + PKCE exchange. */
  tokenUrl: string;
  /** "Who am I" with the bearer token (X: /2/users/me, Discord: /api/users/@me, OIDC: userinfo). */
  userInfoUrl: string;
}

/** An OIDC issuer whose tokens oauth_login and create_oauth_providers accept. */
export interface TrustedIssuer {
  issuer: string;
  jwksUrl: string;
}

export interface OAuthSettings {
  /** SIGIL_PUBLIC_URL: the `iss` of the tokens Sigil issues, and the base of its discovery document. */
  publicUrl: string;
  /** Keyed by the SDK's provider enum (OAUTH2_PROVIDER_X, OAUTH2_PROVIDER_DISCORD, …). */
  providers: ReadonlyMap<string, OAuthProviderEndpoints>;
  /** Trusted issuers other than Sigil itself; an issuer not listed is never fetched. */
  issuers: readonly TrustedIssuer[];
  /** Provider and JWKS calls give up after this (SIGIL_OAUTH_TIMEOUT_MS, default 10 s). */
  timeoutMs: number;
  /** SIGIL_OAUTH_ALLOW_LOOPBACK=true: providers on loopback/private addresses (development, tests). */
  allowLoopback: boolean;
}
