// OIDC tokens for the tests of what verifies them (oauth_login, attested OIDC stamps, OAuth
// providers on users, list_suborgs OIDC_TOKEN): Sigil-issued ones signed straight with a
// harness's real OIDC_TOKEN service key (as oauth2_authenticate would), and a "trusted
// issuer" — a tiny JWKS server on 127.0.0.1 with its own jose keys — that counts requests,
// so a test can show an untrusted issuer is never fetched.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWTPayload } from "jose";
import { activeServiceKey } from "../../src/auth/service-keys.ts";
import { nonceFor } from "../../src/logins/oauth/nonce.ts";
import { DEFAULT_OAUTH_SETTINGS } from "../../src/logins/oauth/configure.ts";
import type { OAuthSettings } from "../../src/logins/oauth/settings.ts";
import { DEFAULT_LOGIN_SETTINGS, type LoginSettings } from "../../src/logins/settings.ts";
import type { Harness } from "./inproc.ts";

export interface TokenClaims {
  iss?: string;
  aud?: string | string[];
  sub?: string;
  nonce?: string;
  tknonce?: string;
  email?: string;
  email_verified?: boolean;
  /** Seconds from now; negative: already expired. Default 3600. */
  ttl?: number;
  /** Any other claims (or undefined to drop a default one). */
  extra?: JWTPayload;
  /** Drop these claims entirely. */
  omit?: string[];
}

function payloadOf(c: TokenClaims, defaults: { iss: string }): JWTPayload {
  const now = Math.floor(Date.now() / 1000);
  const p: JWTPayload = {
    iss: c.iss ?? defaults.iss,
    aud: c.aud ?? "client-1",
    sub: c.sub ?? `x:${Math.random().toString(36).slice(2)}`,
    iat: now,
    exp: now + (c.ttl ?? 3600),
    ...(c.nonce !== undefined ? { nonce: c.nonce } : {}),
    ...(c.tknonce !== undefined ? { tknonce: c.tknonce } : {}),
    ...(c.email !== undefined ? { email: c.email } : {}),
    ...(c.email_verified !== undefined ? { email_verified: c.email_verified } : {}),
    ...c.extra,
  };
  for (const k of c.omit ?? []) delete p[k];
  return p;
}

/** A token Sigil itself issued: ES256 with the store's active OIDC_TOKEN key, iss = publicUrl. */
export async function sigilToken(h: Harness, c: TokenClaims = {}, publicUrl = DEFAULT_OAUTH_SETTINGS.publicUrl): Promise<string> {
  const key = await activeServiceKey(h.service.state.serviceKeys, h.service.store.db, h.service.masterKey, "OIDC_TOKEN");
  return new SignJWT(payloadOf(c, { iss: publicUrl })).setProtectedHeader({ alg: "ES256", typ: "JWT", kid: key.id }).sign(key.signer.key);
}

export const nonceOf = nonceFor;

/** A trusted OIDC issuer: its JWKS on loopback, RS256 keys of its own. */
export interface FakeIssuer {
  issuer: string;
  jwksUrl: string;
  /** JWKS requests served so far. */
  readonly requests: number;
  sign(c?: TokenClaims, opts?: { alg?: "RS256" | "none"; key?: "own" | "stranger"; kid?: string }): Promise<string>;
  close(): Promise<void>;
}

export async function startIssuer(issuer = "https://issuer.example"): Promise<FakeIssuer> {
  const own = await generateKeyPair("RS256");
  const stranger = await generateKeyPair("RS256");
  const jwk = { ...(await exportJWK(own.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    issuer,
    jwksUrl: `http://127.0.0.1:${port}/jwks`,
    get requests() {
      return requests;
    },
    async sign(c = {}, opts = {}) {
      const payload = payloadOf(c, { iss: issuer });
      if (opts.alg === "none") {
        const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
        return `${enc({ alg: "none", typ: "JWT" })}.${enc(payload)}.`;
      }
      const key: CryptoKey = opts.key === "stranger" ? stranger.privateKey : own.privateKey;
      return new SignJWT(payload).setProtectedHeader({ alg: "RS256", typ: "JWT", kid: opts.kid ?? "k1" }).sign(key);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** OAuth settings trusting `issuers` (Sigil's own public URL as the default). */
export function oauthSettings(issuers: readonly FakeIssuer[], over: Partial<OAuthSettings> = {}): OAuthSettings {
  return { ...DEFAULT_OAUTH_SETTINGS, issuers: issuers.map((i) => ({ issuer: i.issuer, jwksUrl: i.jwksUrl })), timeoutMs: 2000, ...over };
}

/** Login settings for a harness whose trusted issuers are `issuers`. */
export function loginsTrusting(issuers: readonly FakeIssuer[]): LoginSettings {
  return { ...DEFAULT_LOGIN_SETTINGS, oauth: oauthSettings(issuers) };
}
