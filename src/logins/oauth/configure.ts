// OAuth settings from the configuration: Sigil's issuer URL (SIGIL_PUBLIC_URL), the provider
// endpoints (built-in, overridden by SIGIL_OAUTH_PROVIDERS_FILE), trusted OIDC issuers, the
// provider-call deadline and the loopback development switch. A bad file stops `sigil serve`
// at start with the reason, never at the first login.
import { readFileSync } from "node:fs";
import type { OAuthConfig } from "./knobs.ts";
import type { LoginSettings } from "../settings.ts";
import { urlProblem } from "../../webhooks/url-policy.ts";
import { builtInEndpoints, OAUTH_PROVIDERS, PROVIDER_NAMES } from "./providers.ts";
import type { OAuthProviderEndpoints, OAuthSettings, TrustedIssuer } from "./settings.ts";

export const DEFAULT_OAUTH_TIMEOUT_MS = 10_000;

/** SIGIL_PUBLIC_URL when unset: what a client on the same machine reaches (docs/configuration.md §1). */
export const defaultPublicUrl = (port: number) => `http://localhost:${port}`;

/** For harnesses that configure nothing: built-in providers, no trusted issuers, no loopback. */
export const DEFAULT_OAUTH_SETTINGS: OAuthSettings = {
  publicUrl: defaultPublicUrl(8080),
  providers: builtInEndpoints(),
  issuers: [],
  timeoutMs: DEFAULT_OAUTH_TIMEOUT_MS,
  allowLoopback: false,
};

/** The OAuth settings an activity runs with. */
export function oauthSettingsOf(logins: LoginSettings): OAuthSettings {
  return logins.oauth ?? DEFAULT_OAUTH_SETTINGS;
}

const MAX_FILE_BYTES = 1024 * 1024;

export function oauthSettingsFrom(config: OAuthConfig & { port: number }): OAuthSettings {
  const allowLoopback = config.oauthAllowLoopback;
  const providers = builtInEndpoints();
  let issuers: TrustedIssuer[] = [];
  if (config.oauthProvidersFile) {
    const file = config.oauthProvidersFile;
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      throw new Error(`SIGIL_OAUTH_PROVIDERS_FILE ${file}: ${(err as Error).message}`);
    }
    if (text.length > MAX_FILE_BYTES) throw new Error(`SIGIL_OAUTH_PROVIDERS_FILE ${file}: larger than ${MAX_FILE_BYTES} bytes`);
    const parsed = parseProvidersFile(text, allowLoopback, `SIGIL_OAUTH_PROVIDERS_FILE ${file}`);
    for (const [name, endpoints] of parsed.providers) providers.set(name, endpoints);
    issuers = parsed.issuers;
  }
  return {
    publicUrl: (config.publicUrl ?? defaultPublicUrl(config.port)).replace(/\/+$/, ""),
    providers,
    issuers,
    timeoutMs: config.oauthTimeoutMs,
    allowLoopback,
  };
}

/**
 * `{"providers": {"OAUTH2_PROVIDER_X": {"tokenUrl", "userInfoUrl"}, …}, "issuers": [{"issuer", "jwksUrl"}]}`.
 * Provider names must be ones Sigil knows; URLs must pass the same destination policy the
 * calls will (https and public unless loopback is allowed). `userInfoUrl` may be "" only for a
 * provider whose identity is its id_token (Apple).
 */
export function parseProvidersFile(
  text: string,
  allowLoopback: boolean,
  where = "OAuth providers file",
): { providers: Map<string, OAuthProviderEndpoints>; issuers: TrustedIssuer[] } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new Error(`${where}: not JSON (${(err as Error).message})`);
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) throw new Error(`${where}: must be a JSON object`);
  const d = doc as Record<string, unknown>;
  for (const key of Object.keys(d))
    if (key !== "providers" && key !== "issuers")
      throw new Error(`${where}: unknown key ${JSON.stringify(key)} (expected "providers", "issuers")`);
  const use = { allowLoopback, what: "OAuth provider" };
  const checkUrl = (value: unknown, at: string, optional = false): string => {
    if (typeof value !== "string") throw new Error(`${where}: ${at} must be a string URL`);
    if (optional && value === "") return value;
    const problem = urlProblem(value, use);
    if (problem)
      throw new Error(
        `${where}: ${at} ${problem}${allowLoopback ? "" : " (SIGIL_OAUTH_ALLOW_LOOPBACK=true allows loopback in development)"}`,
      );
    return value;
  };
  const providers = new Map<string, OAuthProviderEndpoints>();
  if (d.providers !== undefined) {
    if (typeof d.providers !== "object" || d.providers === null || Array.isArray(d.providers))
      throw new Error(`${where}: "providers" must be an object`);
    for (const [name, value] of Object.entries(d.providers as Record<string, unknown>)) {
      const provider = OAUTH_PROVIDERS.get(name);
      if (!provider) throw new Error(`${where}: unknown provider ${JSON.stringify(name)} (expected one of ${PROVIDER_NAMES.join(", ")})`);
      if (typeof value !== "object" || value === null || Array.isArray(value))
        throw new Error(`${where}: providers.${name} must be an object`);
      const v = value as Record<string, unknown>;
      for (const key of Object.keys(v))
        if (key !== "tokenUrl" && key !== "userInfoUrl") throw new Error(`${where}: providers.${name}: unknown key ${JSON.stringify(key)}`);
      // Without a user-info endpoint the identity is the token answer's id_token: Apple has
      // none, a generic OIDC server may be used either way; X and Discord need theirs.
      const optional = provider.builtIn?.userInfoUrl === "" || !provider.builtIn;
      providers.set(name, {
        tokenUrl: checkUrl(v.tokenUrl, `providers.${name}.tokenUrl`),
        userInfoUrl: checkUrl(v.userInfoUrl ?? (optional ? "" : undefined), `providers.${name}.userInfoUrl`, optional),
      });
    }
  }
  const issuers: TrustedIssuer[] = [];
  if (d.issuers !== undefined) {
    if (!Array.isArray(d.issuers)) throw new Error(`${where}: "issuers" must be an array`);
    d.issuers.forEach((value: unknown, i) => {
      if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error(`${where}: issuers[${i}] must be an object`);
      const v = value as Record<string, unknown>;
      for (const key of Object.keys(v))
        if (key !== "issuer" && key !== "jwksUrl") throw new Error(`${where}: issuers[${i}]: unknown key ${JSON.stringify(key)}`);
      if (typeof v.issuer !== "string" || v.issuer === "") throw new Error(`${where}: issuers[${i}].issuer must be a non-empty string`);
      if (issuers.some((x) => x.issuer === v.issuer)) throw new Error(`${where}: issuer ${JSON.stringify(v.issuer)} listed twice`);
      issuers.push({ issuer: v.issuer, jwksUrl: checkUrl(v.jwksUrl, `issuers[${i}].jwksUrl`) });
    });
  }
  return { providers, issuers };
}
