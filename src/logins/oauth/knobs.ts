// The knobs of OAuth and OIDC logins (docs/oauth.md §7): Sigil's issuer URL, the provider
// file, the provider-call deadline and the loopback development switch. Apart from the method
// (./index.ts) because configure.ts reads their Config fields.
import { bool, defineKnob, int, str, url, type ConfigOf } from "../../config/define.ts";

/** An issuer URL: http(s), no credentials, query or fragment; kept without a trailing slash (it is compared as a string). */
function publicUrl(v: string): string {
  url("SIGIL_PUBLIC_URL", ["http:", "https:"])(v);
  const u = new URL(v);
  if (u.username || u.password || u.search || u.hash)
    throw new Error("SIGIL_PUBLIC_URL must not contain credentials, a query or a fragment");
  return v.replace(/\/+$/, "");
}

export const OAUTH_KNOBS = [
  defineKnob({
    env: "SIGIL_PUBLIC_URL",
    flag: "--public-url",
    key: "publicUrl",
    parse: publicUrl,
    default: undefined,
    // Depends on PORT: computed where the OAuth settings are built, so a harness that changes
    // the port of DEFAULTS gets the matching issuer.
    computedBy: "oauthSettingsFrom (src/logins/oauth/configure.ts): http://localhost:<port>",
    doc: {
      meaning:
        "Sigil's public base URL: `iss` of its OIDC tokens and the base of its discovery document (http/https, no credentials, query or fragment; a trailing slash is dropped). Set it in every deployment reached by another name",
      default: "`http://localhost:<PORT>`",
    },
  }),
  defineKnob({
    env: "SIGIL_OAUTH_PROVIDERS_FILE",
    flag: "--oauth-providers-file",
    key: "oauthProvidersFile",
    parse: str,
    default: undefined,
    doc: {
      meaning:
        'JSON `{"providers":{"OAUTH2_PROVIDER_X":{"tokenUrl","userInfoUrl"},…},"issuers":[{"issuer","jwksUrl"}]}`: overrides built-in provider endpoints and lists the trusted OIDC issuers. Checked at startup (unknown providers or keys, non-https or private URLs stop the server with the reason); `userInfoUrl` may be omitted for Apple and OIDC',
    },
  }),
  defineKnob({
    env: "SIGIL_OAUTH_TIMEOUT_MS",
    flag: "--oauth-timeout-ms",
    key: "oauthTimeoutMs",
    parse: int("SIGIL_OAUTH_TIMEOUT_MS", 100, 120_000),
    default: 10_000,
    doc: { meaning: "Deadline of one provider or JWKS call (100–120000)" },
  }),
  defineKnob({
    env: "SIGIL_OAUTH_ALLOW_LOOPBACK",
    flag: "--oauth-allow-loopback",
    key: "oauthAllowLoopback",
    parse: bool("SIGIL_OAUTH_ALLOW_LOOPBACK"),
    default: false,
    doc: {
      meaning:
        "**Development only.** OAuth providers and issuers on loopback (127.0.0.0/8, ::1, `localhost`), http allowed there. Logged as a warning at startup",
    },
  }),
] as const;

/** The OAuth part of the configuration. */
export type OAuthConfig = ConfigOf<typeof OAUTH_KNOBS>;
