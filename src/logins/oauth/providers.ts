// The OAuth 2.0 providers oauth2_authenticate can exchange a code with, keyed by the SDK's
// provider enum (X and Discord as @turnkey/http has them; Google, Apple and a generic OIDC
// provider beyond it). Each says where it lives by default (SIGIL_OAUTH_PROVIDERS_FILE
// overrides), how the client authenticates at its token endpoint, and how its user-info
// answer becomes a provider-scoped subject (`x:<id>`, …) for the token Sigil issues.
import type { OAuthProviderEndpoints } from "./settings.ts";

/** What Sigil's OIDC token says about the user, from the provider's answer. */
export interface ProviderIdentity {
  /** Provider-scoped: `x:<id>`, `discord:<id>`, `google:<sub>`, `apple:<sub>`, `oidc:<sub>`. */
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export interface OAuthProvider {
  /** The SDK enum value (OAUTH2_PROVIDER_X, …). */
  name: string;
  /** Built-in endpoints; absent: the provider must be configured (the generic OIDC one). */
  builtIn?: OAuthProviderEndpoints;
  /**
   * How the client id and secret reach the token endpoint: HTTP Basic (RFC 6749 §2.3.1, what
   * X requires) or form fields (Apple accepts only those).
   */
  clientAuth: "basic" | "post";
  /**
   * Who the user is, from the user-info answer (or, when the provider has no user-info
   * endpoint, the claims of the id_token its token endpoint returned over TLS — OIDC Core
   * §3.1.3.7 lets a client trust those without a signature check). A string is why the
   * answer is not usable.
   */
  identity(info: Record<string, unknown>): ProviderIdentity | string;
}

// Provider ids become part of `sub`: printable, no separators that would make two
// providers' subjects collide, bounded.
const ID = /^[A-Za-z0-9._@|:-]{1,255}$/;
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const bool = (v: unknown): boolean | undefined => (typeof v === "boolean" ? v : v === "true" ? true : v === "false" ? false : undefined);
const text = (v: unknown, max = 256): string | undefined => {
  const s = str(v);
  return s && s.length <= max ? s : undefined;
};

function scoped(prefix: string, id: unknown, field: string): string | { sub: string } {
  // Numeric ids (X and Discord send strings; a JSON number would lose digits past 2^53).
  const s = typeof id === "string" ? id : undefined;
  if (!s || !ID.test(s)) return `the user-info answer has no usable "${field}"`;
  return { sub: `${prefix}:${s}` };
}

/** OIDC standard claims (userinfo or id_token): sub, email, email_verified, name. */
function oidcIdentity(prefix: string) {
  return (info: Record<string, unknown>): ProviderIdentity | string => {
    const s = scoped(prefix, info.sub, "sub");
    if (typeof s === "string") return s;
    const email = text(info.email, 254);
    const verified = bool(info.email_verified);
    const name = text(info.name);
    return {
      ...s,
      ...(email ? { email } : {}),
      ...(email && verified !== undefined ? { email_verified: verified } : {}),
      ...(name ? { name } : {}),
    };
  };
}

const PROVIDERS: readonly OAuthProvider[] = [
  {
    name: "OAUTH2_PROVIDER_X",
    // X API v2: confidential clients authenticate with Basic; GET /2/users/me → {data: {id, name, username}}.
    builtIn: { tokenUrl: "https://api.x.com/2/oauth2/token", userInfoUrl: "https://api.x.com/2/users/me" },
    clientAuth: "basic",
    identity(info) {
      const data = info.data;
      if (typeof data !== "object" || data === null) return 'the user-info answer has no "data" object';
      const d = data as Record<string, unknown>;
      const s = scoped("x", d.id, "data.id");
      if (typeof s === "string") return s;
      const name = text(d.name) ?? text(d.username);
      return { ...s, ...(name ? { name } : {}) };
    },
  },
  {
    name: "OAUTH2_PROVIDER_DISCORD",
    // GET /api/users/@me → {id, username, global_name, email?, verified?} (email needs the email scope).
    builtIn: { tokenUrl: "https://discord.com/api/oauth2/token", userInfoUrl: "https://discord.com/api/users/@me" },
    clientAuth: "basic",
    identity(info) {
      const s = scoped("discord", info.id, "id");
      if (typeof s === "string") return s;
      const email = text(info.email, 254);
      const verified = bool(info.verified);
      const name = text(info.global_name) ?? text(info.username);
      return {
        ...s,
        ...(email ? { email } : {}),
        ...(email && verified !== undefined ? { email_verified: verified } : {}),
        ...(name ? { name } : {}),
      };
    },
  },
  {
    name: "OAUTH2_PROVIDER_GOOGLE",
    builtIn: { tokenUrl: "https://oauth2.googleapis.com/token", userInfoUrl: "https://openidconnect.googleapis.com/v1/userinfo" },
    clientAuth: "basic",
    identity: oidcIdentity("google"),
  },
  {
    name: "OAUTH2_PROVIDER_APPLE",
    // Apple has no user-info endpoint: the identity is the id_token of the token answer
    // (empty userInfoUrl). Its client secret is the ES256 JWT the client signs, sent as a form field.
    builtIn: { tokenUrl: "https://appleid.apple.com/auth/token", userInfoUrl: "" },
    clientAuth: "post",
    identity: oidcIdentity("apple"),
  },
  {
    name: "OAUTH2_PROVIDER_OIDC",
    // Any OpenID Connect / OAuth 2.0 server: its endpoints come from SIGIL_OAUTH_PROVIDERS_FILE.
    clientAuth: "basic",
    identity: oidcIdentity("oidc"),
  },
];

/** The providers by their enum value. */
export const OAUTH_PROVIDERS: ReadonlyMap<string, OAuthProvider> = new Map(PROVIDERS.map((p) => [p.name, p]));

/** For messages: the accepted values. */
export const PROVIDER_NAMES: readonly string[] = PROVIDERS.map((p) => p.name);

/** The endpoints every provider has without configuration. */
export function builtInEndpoints(): Map<string, OAuthProviderEndpoints> {
  const out = new Map<string, OAuthProviderEndpoints>();
  for (const p of PROVIDERS) if (p.builtIn) out.set(p.name, { ...p.builtIn });
  return out;
}
