// A tiny OAuth 2.0 provider on 127.0.0.1 for the in-process tests of oauth2_authenticate: a
// token endpoint (authorization_code with PKCE S256, single-use codes bound to the redirect
// URI, client_secret_basic or _post, an id_token in the answer) and X-, Discord- and OIDC-shaped user-info endpoints. The test
// plays the authorization step itself (issueCode), as a browser would after the user
// consented. Switches make either endpoint answer 500, garbage, a redirect, an oversized body,
// or hang. (The full e2e runs against the real oidc-provider package elsewhere.)
import http from "node:http";
import { createHash, randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { OAuthProviderEndpoints } from "../../src/logins/oauth/settings.ts";
import { encryptOauth2ClientSecret } from "@turnkey/crypto";
import { completed, type Creds, type Harness } from "./inproc.ts";
import { DEFAULT_LOGIN_SETTINGS, type LoginSettings } from "../../src/logins/settings.ts";
import { createOauth2Credential } from "../../src/activities/oauth2/create_oauth2_credential.ts";

export interface FakeUser {
  id: string;
  name?: string;
  email?: string;
  emailVerified?: boolean;
}

export type Mode = "ok" | "500" | "garbage" | "hang" | "redirect" | "huge";
export type Shape = "x" | "discord" | "oidc";

interface Grant {
  user: FakeUser;
  challenge: string;
  redirectUri: string;
}

export interface OAuthProviderFixture {
  /** http://127.0.0.1:<port> */
  base: string;
  clientId: string;
  clientSecret: string;
  /** Token and user-info URLs of one user-info shape. */
  endpoints(shape: Shape): OAuthProviderEndpoints;
  /** The authorization step: a code for `user`, bound to the verifier's S256 challenge and the redirect URI. */
  issueCode(user: FakeUser, codeVerifier: string, redirectUri: string): string;
  /** Bearer tokens issued, in order (what encrypted_bearer_token must decrypt to). */
  readonly accessTokens: string[];
  /** Requests received per endpoint. */
  readonly hits: { token: number; userInfo: number };
  /** How each endpoint answers from now on. */
  mode: { token: Mode; userInfo: Mode };
  close(): Promise<void>;
}

export const newVerifier = () => randomBytes(32).toString("base64url");
const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

export async function startOAuthProvider(): Promise<OAuthProviderFixture> {
  const clientId = `client-${randomBytes(4).toString("hex")}`;
  const clientSecret = `secret-${randomBytes(16).toString("hex")}`;
  const grants = new Map<string, Grant>();
  const tokens = new Map<string, FakeUser>();
  const accessTokens: string[] = [];
  const hits = { token: 0, userInfo: 0 };
  const mode: { token: Mode; userInfo: Mode } = { token: "ok", userInfo: "ok" };

  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  };
  // The abnormal answers; true when one was given (or is being withheld).
  const misbehave = (res: http.ServerResponse, m: Mode): boolean => {
    switch (m) {
      case "ok":
        return false;
      case "500":
        send(res, 500, { error: "server_error", error_description: "internal details the client must not echo" });
        return true;
      case "garbage":
        res.writeHead(200, { "content-type": "text/html" }).end("<html>not json</html>");
        return true;
      case "redirect":
        res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data" }).end();
        return true;
      case "huge":
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ access_token: "a".repeat(200_000) }));
        return true;
      case "hang":
        return true; // never answers; close() cuts the connection
    }
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://x");
      if (req.method === "POST" && url.pathname === "/token") {
        hits.token++;
        if (misbehave(res, mode.token)) return;
        const form = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
        // client_secret_basic, or client_secret_post (Apple's way) when no Basic header is sent.
        const auth = /^Basic (.+)$/.exec(req.headers.authorization ?? "");
        const [id, secret] = auth
          ? Buffer.from(auth[1]!, "base64").toString("utf8").split(":").map(decodeURIComponent)
          : [form.get("client_id"), form.get("client_secret")];
        if (id !== clientId || secret !== clientSecret) return send(res, 401, { error: "invalid_client" });
        if (form.get("grant_type") !== "authorization_code") return send(res, 400, { error: "unsupported_grant_type" });
        const code = form.get("code") ?? "";
        const grant = grants.get(code);
        // Single use: a code is gone once presented, whatever the outcome (RFC 6749 §4.1.2).
        grants.delete(code);
        if (!grant) return send(res, 400, { error: "invalid_grant", error_description: "code unknown or already used" });
        if (form.get("redirect_uri") !== grant.redirectUri)
          return send(res, 400, { error: "invalid_grant", error_description: "redirect_uri mismatch" });
        if (s256(form.get("code_verifier") ?? "") !== grant.challenge)
          return send(res, 400, { error: "invalid_grant", error_description: "PKCE verification failed" });
        const accessToken = `at-${randomBytes(24).toString("base64url")}`;
        tokens.set(accessToken, grant.user);
        accessTokens.push(accessToken);
        // An id_token as OIDC servers (and Apple) add: unsigned here, which is what the client
        // may rely on for an answer it got straight from the token endpoint.
        const claims = {
          iss: base,
          aud: clientId,
          sub: grant.user.id,
          ...(grant.user.email ? { email: grant.user.email, email_verified: grant.user.emailVerified ?? false } : {}),
        };
        const idToken = `${Buffer.from('{"alg":"none"}').toString("base64url")}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.`;
        return send(res, 200, {
          access_token: accessToken,
          token_type: "bearer",
          expires_in: 7200,
          scope: "users.read",
          id_token: idToken,
        });
      }
      if (req.method === "GET") {
        const shape =
          url.pathname === "/x/2/users/me"
            ? "x"
            : url.pathname === "/discord/api/users/@me"
              ? "discord"
              : url.pathname === "/oidc/userinfo"
                ? "oidc"
                : undefined;
        if (!shape) return send(res, 404, { error: "not_found" });
        hits.userInfo++;
        if (misbehave(res, mode.userInfo)) return;
        const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "");
        const user = bearer ? tokens.get(bearer[1]!) : undefined;
        if (!user) return send(res, 401, { error: "invalid_token" });
        if (shape === "x") return send(res, 200, { data: { id: user.id, name: user.name ?? "", username: "user" } });
        if (shape === "discord")
          return send(res, 200, {
            id: user.id,
            username: user.name ?? "user",
            ...(user.email ? { email: user.email, verified: user.emailVerified ?? false } : {}),
          });
        return send(res, 200, {
          sub: user.id,
          ...(user.name ? { name: user.name } : {}),
          ...(user.email ? { email: user.email, email_verified: user.emailVerified ?? false } : {}),
        });
      }
      send(res, 404, { error: "not_found" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const userInfoPath: Record<Shape, string> = { x: "/x/2/users/me", discord: "/discord/api/users/@me", oidc: "/oidc/userinfo" };

  return {
    base,
    clientId,
    clientSecret,
    endpoints: (shape) => ({ tokenUrl: `${base}/token`, userInfoUrl: `${base}${userInfoPath[shape]}` }),
    issueCode(user, codeVerifier, redirectUri) {
      const code = `code-${randomBytes(16).toString("base64url")}`;
      grants.set(code, { user, challenge: s256(codeVerifier), redirectUri });
      return code;
    },
    accessTokens,
    hits,
    mode,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// Harness helpers for the OAuth 2.0 credential tests.

/** The OAUTH2_CLIENT_SECRET key GET /public/v1/discovery/keys publishes: what clients encrypt the secret to. */
export async function clientSecretKey(h: Harness): Promise<string> {
  const res = await h.app.inject({ method: "GET", url: "/public/v1/discovery/keys" });
  const keys = (JSON.parse(res.body) as { keys: { purpose: string; publicKey: string; status: string }[] }).keys;
  const key = keys.find((k) => k.purpose === "OAUTH2_CLIENT_SECRET" && k.status === "active");
  if (!key) throw new Error(`no OAUTH2_CLIENT_SECRET key in ${res.body}`);
  return key.publicKey;
}

/** A credential created through create_oauth2_credential, its secret encrypted as the SDK does. */
export async function newCredential(
  h: Harness,
  opts: { provider: string; clientId: string; clientSecret: string; as?: Creds },
): Promise<{ oauth2CredentialId: string; encryptedClientSecret: string }> {
  const encryptedClientSecret = await encryptOauth2ClientSecret(opts.clientSecret, await clientSecretKey(h));
  const res = await h.submit(
    "create_oauth2_credential",
    "ACTIVITY_TYPE_CREATE_OAUTH2_CREDENTIAL",
    { provider: opts.provider, clientId: opts.clientId, encryptedClientSecret },
    opts.as ? { as: opts.as } : {},
  );
  return { oauth2CredentialId: completed(res, createOauth2Credential).oauth2CredentialId, encryptedClientSecret };
}

export const TEST_ISSUER = "https://sigil.test.example";

/** Login settings whose OAuth providers (X, Discord, generic OIDC) all point at the fixture, loopback allowed. */
export function loginsFor(provider: OAuthProviderFixture, timeoutMs = 500): LoginSettings {
  return {
    ...DEFAULT_LOGIN_SETTINGS,
    oauth: {
      publicUrl: TEST_ISSUER,
      providers: new Map([
        ["OAUTH2_PROVIDER_X", provider.endpoints("x")],
        ["OAUTH2_PROVIDER_DISCORD", provider.endpoints("discord")],
        ["OAUTH2_PROVIDER_OIDC", provider.endpoints("oidc")],
      ]),
      issuers: [],
      timeoutMs,
      allowLoopback: true,
    },
  };
}
