// The auth proxy service end to end (docs/auth-proxy-service.md), on both engines: `sigil serve`
// with the proxy in the same process, a real SMTP sink, a real OAuth 2.0 / OIDC server
// (oidc-provider), a small real captcha verifier, and browser-shaped requests (no stamp, an
// Origin, X-Auth-Proxy-Config-ID) as @turnkey/core sends them. SIGIL_TRUST_PROXY=1 lets each
// request name its client address (X-Forwarded-For), so the per-address limit is testable.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import path from "node:path";
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { encryptOauth2ClientSecret, encryptOtpCodeToBundle, verifySessionJwtSignature } from "@turnkey/crypto";
import { getClientSignatureMessageForLogin, getClientSignatureMessageForSignup } from "@turnkey/core";
import {
  engines,
  freePort,
  newInstance,
  proxySecret,
  sigilInit,
  startProxyProcess,
  startServer,
  type InitResult,
  type Instance,
  type RunningServer,
} from "../helpers/server.ts";
import { SmtpSink, codeFrom, discoveredKeys } from "../helpers/smtp-sink.ts";
import { OidcServer, type Account } from "../helpers/oidc-server.ts";
import { generateP256, privateScalar, signP256, type P256Private } from "../../src/crypto/p256.ts";
import { MasterKey } from "../../src/crypto/envelope.ts";
import {
  CONFIG_ROUTE,
  SIGNATURE_HEADER,
  openFromTransport,
  proxySecretFromMasterKey,
  signChannelBody,
  type ConfigResponse,
} from "../../src/auth-proxy/channel.ts";

const APP = "https://app.sigil.test";
const EVIL = "https://evil.sigil.test";
const LIMIT_OTP_PER_CONTACT = 2;
const LIMIT_SIGNUPS_PER_ADDRESS = 2;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
interface Answer {
  status: number;
  json: Json;
  headers: Headers;
}

const nonceOf = (publicKeyHex: string) => createHash("sha256").update(publicKeyHex, "utf8").digest("hex");
let ipCounter = 1;
/** A fresh client address per request unless a test names one. */
const nextIp = () => `198.51.100.${(ipCounter++ % 250) + 1}`;

/** Polls (bounded) until `check` answers true: config changes reach the proxy within 5 s. */
const CONFIG_TTL_MS = 300;

async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 12_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.fail(`${what}: not within ${timeoutMs} ms`);
}

/** A Turnstile-shaped verifier: token "pass" succeeds, anything else fails; `down` answers 500. */
class CaptchaVerifier {
  readonly seen: URLSearchParams[] = [];
  down = false;
  private constructor(private readonly server: http.Server) {}
  static async start(): Promise<CaptchaVerifier> {
    const server = http.createServer();
    const v = new CaptchaVerifier(server);
    server.on("request", (req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        const form = new URLSearchParams(body);
        v.seen.push(form);
        if (v.down) {
          res.writeHead(500).end("down");
          return;
        }
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ success: form.get("response") === "pass" && form.get("secret") === "captcha-secret" }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return v;
  }
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/siteverify`;
  }
  stop(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}

const ACCOUNTS: Account[] = ["olivia", "pete"].map((id) => ({
  id: `${id}-${randomBytes(3).toString("hex")}`,
  username: `${id}_h`,
  name: id,
}));

for (const spec of engines()) {
  describe(`auth proxy service [${spec.name}]`, { skip: spec.skip }, () => {
    let inst: Instance;
    let server: RunningServer;
    let sink: SmtpSink;
    let captcha: CaptchaVerifier;
    let oidc: OidcServer;
    let init: InitResult;
    let configId: string;
    let proxyPublicKey: string;

    async function api(op: string, body: Json, key = { publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey }): Promise<Answer> {
      const text = JSON.stringify(body);
      const stamp = await new ApiKeyStamper({ apiPublicKey: key.publicKey, apiPrivateKey: key.privateKey }).stamp(text);
      const res = await fetch(`${server.url}/public/v1/${op}`, {
        method: "POST",
        body: text,
        headers: { "content-type": "application/json", [stamp.stampHeaderName]: stamp.stampHeaderValue },
      });
      return { status: res.status, json: await res.json(), headers: res.headers };
    }
    async function submit(op: string, type: string, parameters: Json): Promise<Json> {
      const r = await api(`submit/${op}`, { type, timestampMs: String(Date.now()), organizationId: init.organizationId, parameters });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.equal(r.json.activity.status, "ACTIVITY_STATUS_COMPLETED", JSON.stringify(r.json));
      return r.json.activity;
    }
    const updateConfig = (parameters: Json) => submit("update_auth_proxy_config", "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG", parameters);

    async function proxy(
      p: string,
      body: Json,
      o: { configId?: string | null; origin?: string | null; captcha?: string; ip?: string; headerName?: string; raw?: string } = {},
    ): Promise<Answer> {
      const headers: Record<string, string> = { "content-type": "application/json", "x-forwarded-for": o.ip ?? nextIp() };
      const id = o.configId === undefined ? configId : o.configId;
      if (id !== null) headers[o.headerName ?? "X-Auth-Proxy-Config-ID"] = id;
      const origin = o.origin === undefined ? APP : o.origin;
      if (origin !== null) headers.origin = origin;
      if (o.captcha !== undefined) headers["x-captcha-token"] = o.captcha;
      const res = await fetch(`${server.proxyUrl}${p}`, { method: "POST", body: o.raw ?? JSON.stringify(body), headers });
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : undefined, headers: res.headers };
    }
    const assertSdkError = (a: Answer, status: number, code: number, pattern?: RegExp) => {
      assert.equal(a.status, status, JSON.stringify(a.json));
      assert.equal(a.json.code, code, JSON.stringify(a.json));
      assert.equal(typeof a.json.message, "string");
      assert.ok(Array.isArray(a.json.details));
      if (pattern) assert.match(a.json.message, pattern);
    };

    /** otp_init_v2 → mail → encrypted code → otp_verify_v2: a verification token bound to `key`. */
    async function verifiedEmail(email: string, key: P256Private = generateP256()): Promise<{ token: string; key: P256Private }> {
      const mark = sink.mark();
      const started = await proxy("/v1/otp_init_v2", {
        otpType: "OTP_TYPE_EMAIL",
        contact: email,
        emailCustomization: { logoUrl: "https://evil.example/logo.png" },
      });
      assert.equal(started.status, 200, JSON.stringify(started.json));
      assert.deepEqual(Object.keys(started.json).sort(), ["otpEncryptionTargetBundle", "otpId"]);
      const mail = await sink.nextMail(email, mark);
      assert.match(mail.text, /Proxy App/, "the config's app name, not the organization's");
      assert.ok(!mail.html.includes("evil.example"), "the browser's customization is ignored");
      const code = codeFrom(mail);
      assert.match(code, /^[0-9]{6}$/, "the config's length and alphabet");
      const keys = await discoveredKeys(server.url);
      const encryptedOtpBundle = await encryptOtpCodeToBundle(code, started.json.otpEncryptionTargetBundle, key.publicCompressed, keys.otp);
      const verified = await proxy("/v1/otp_verify_v2", { otpId: started.json.otpId, encryptedOtpBundle });
      assert.equal(verified.status, 200, JSON.stringify(verified.json));
      return { token: verified.json.verificationToken, key };
    }

    before(async () => {
      sink = await SmtpSink.start();
      captcha = await CaptchaVerifier.start();
      oidc = await OidcServer.start([{ clientId: "proxy-x", clientSecret: `cs-${randomBytes(16).toString("hex")}` }], ACCOUNTS);
      const port = await freePort();
      inst = await newInstance(spec.name, {
        SMTP_URL: sink.url,
        SIGIL_SMTP_FROM: "Sigil <otp@sigil.test>",
        SIGIL_TRUST_PROXY: "1",
        SIGIL_PUBLIC_URL: `http://127.0.0.1:${port}`,
        SIGIL_OAUTH_ALLOW_LOOPBACK: "true",
        SIGIL_CAPTCHA_VERIFY_URL: captcha.url,
        SIGIL_CAPTCHA_SECRET: "captcha-secret",
        SIGIL_CAPTCHA_SITE_KEY: "site-key-1",
        SIGIL_AUTH_PROXY_OTP_INITS_PER_CONTACT_PER_HOUR: String(LIMIT_OTP_PER_CONTACT),
        SIGIL_AUTH_PROXY_SIGNUPS_PER_ADDRESS_PER_HOUR: String(LIMIT_SIGNUPS_PER_ADDRESS),
        // Config changes reach the proxy within its TTL (docs/auth-proxy-service.md §2): a short one
        // here, so the tests of changes wait a fraction of a second instead of five.
        SIGIL_AUTH_PROXY_CONFIG_TTL_MS: String(CONFIG_TTL_MS),
        LOG_LEVEL: "trace",
      });
      const providersFile = path.join(inst.dataDir, "oauth-providers.json");
      writeFileSync(
        providersFile,
        JSON.stringify({
          providers: { OAUTH2_PROVIDER_X: { tokenUrl: oidc.tokenUrl, userInfoUrl: `${oidc.issuer}/2/users/me` } },
          issuers: [{ issuer: oidc.issuer, jwksUrl: oidc.jwksUrl }],
        }),
      );
      inst.env.SIGIL_OAUTH_PROVIDERS_FILE = providersFile;
      init = await sigilInit(inst, ["--name", "Proxy Org"]);
      server = await startServer(inst, [], { port, authProxy: true });
      assert.ok(server.proxyUrl, "the proxy runs in the server");
      await submit("enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {});
      const got = await api("query/get_auth_proxy_config", { organizationId: init.organizationId });
      assert.equal(got.status, 200, JSON.stringify(got.json));
      configId = got.json.authProxyConfig.configId;
      proxyPublicKey = got.json.authProxyConfig.publicKey;
      await updateConfig({
        allowedOrigins: [APP],
        sessionExpirationSeconds: 1200,
        otpLength: 6,
        otpAlphanumeric: false,
        emailCustomizationParams: { appName: "Proxy App" },
        verificationTokenRequiredForGetAccountPii: true,
        walletKitSettings: {
          enabledSocialProviders: ["x"],
          oauthClientIds: { x: "proxy-x" },
          oauthRedirectUrl: "https://app.sigil.test/oauth/callback",
        },
      });
      const keys = (await (await fetch(`${server.url}/public/v1/discovery/keys`)).json()) as {
        keys: { purpose: string; publicKey: string; status: string }[];
      };
      const secretKey = keys.keys.find((k) => k.purpose === "OAUTH2_CLIENT_SECRET" && k.status === "active")!;
      const client = oidc.clients.get("proxy-x")!;
      await submit("create_oauth2_credential", "ACTIVITY_TYPE_CREATE_OAUTH2_CREDENTIAL", {
        provider: "OAUTH2_PROVIDER_X",
        clientId: "proxy-x",
        encryptedClientSecret: await encryptOauth2ClientSecret(client.clientSecret, secretKey.publicKey),
      });
      // The first proxy request sees the settings just written (nothing cached yet).
    });
    after(async () => {
      await server?.stop();
      await sink?.stop();
      await captcha?.stop();
      await oidc?.stop();
      await inst?.cleanup();
    });

    it("CORS: a preflight from an allowed origin is answered with the allow headers; another origin is refused", async () => {
      const pre = (origin: string) =>
        fetch(`${server.proxyUrl}/v1/otp_init_v2`, {
          method: "OPTIONS",
          headers: {
            origin,
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type,x-auth-proxy-config-id,x-captcha-token",
          },
        });
      await eventually("the origins route lists the app", async () => (await pre(APP)).status === 204);
      const ok = await pre(APP);
      assert.equal(ok.headers.get("access-control-allow-origin"), APP);
      assert.match(ok.headers.get("access-control-allow-methods") ?? "", /POST/);
      for (const h of ["content-type", "x-auth-proxy-config-id", "x-captcha-token", "x-client-version"])
        assert.match(ok.headers.get("access-control-allow-headers") ?? "", new RegExp(h));
      const bad = await pre(EVIL);
      assert.equal(bad.status, 403);
      assert.equal(bad.headers.get("access-control-allow-origin"), null);
      // Actual answers carry the header for the allowed origin.
      const cfg = await proxy("/v1/wallet_kit_config", {});
      assert.equal(cfg.headers.get("access-control-allow-origin"), APP);
    });

    it("config id: missing 400, unknown 404, any header casing; wallet_kit_config from the config (also with no body)", async () => {
      assertSdkError(await proxy("/v1/wallet_kit_config", {}, { configId: null }), 400, 3, /X-Auth-Proxy-Config-ID/);
      assertSdkError(await proxy("/v1/wallet_kit_config", {}, { configId: "00000000-0000-4000-8000-000000000000" }), 404, 5);
      assertSdkError(await proxy("/v1/wallet_kit_config", {}, { configId: "not-a-config" }), 404, 5);
      const r = await proxy("/v1/wallet_kit_config", undefined, { headerName: "x-auth-proxy-config-id", raw: "" });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.deepEqual(r.json, {
        // SMTP_URL and no SMS transport: email, not sms (docs/auth-proxy-service.md §5.1).
        enabledProviders: ["email", "passkey", "wallet", "x"],
        sessionExpirationSeconds: "1200",
        organizationId: init.organizationId,
        oauthClientIds: { x: "proxy-x" },
        oauthRedirectUrl: "https://app.sigil.test/oauth/callback",
        otpAlphanumeric: false,
        otpLength: "6",
      });
      assertSdkError(await proxy("/v1/wallet_kit_config", undefined, { raw: "{not json" }), 400, 3);
      assertSdkError(await proxy("/v1/wallet_kit_config", undefined, { raw: JSON.stringify({ pad: "x".repeat(70 * 1024) }) }), 413, 3);
      // 10,000 levels deep within the size limit: a 400, never a 500 from re-serializing it.
      assertSdkError(
        await proxy("/v1/signup_v2", undefined, {
          raw: `{"apiKeys":[],"authenticators":[],"oauthProviders":[],"wallet":${"[".repeat(10_000)}${"]".repeat(10_000)}}`,
        }),
        400,
        3,
      );
      assertSdkError(await proxy("/v1/nothing", {}), 404, 5);
    });

    it("a disallowed origin (or none) is refused 403 before any work: no mail, no activity", async () => {
      const email = `evil-${randomBytes(3).toString("hex")}@sigil.test`;
      const before = (await api("query/list_activities", { organizationId: init.organizationId, paginationOptions: { limit: "100" } })).json
        .activities.length;
      const r = await proxy("/v1/otp_init_v2", { otpType: "OTP_TYPE_EMAIL", contact: email }, { origin: EVIL });
      assertSdkError(r, 403, 7);
      assert.equal(r.headers.get("access-control-allow-origin"), null);
      assertSdkError(await proxy("/v1/otp_init_v2", { otpType: "OTP_TYPE_EMAIL", contact: email }, { origin: null }), 403, 7);
      // An allowed request to the same address afterwards: its mail is the only one.
      const mark = sink.mark();
      assert.equal((await proxy("/v1/otp_init_v2", { otpType: "OTP_TYPE_EMAIL", contact: email })).status, 200);
      await sink.nextMail(email, mark);
      assert.equal(sink.mailTo(email).length, 1);
      const after = (await api("query/list_activities", { organizationId: init.organizationId, paginationOptions: { limit: "100" } })).json
        .activities.length;
      assert.equal(after, before + 1, "only the allowed request made an activity");
    });

    let signedUp: { organizationId: string; userId: string; email: string; sessionKey: P256Private };

    it("OTP: otp_init_v2 → otp_verify_v2 → account (none) → signup_v2 → account → otp_login_v2 → a session of the config's lifetime", async () => {
      const email = `user-${randomBytes(3).toString("hex")}@sigil.test`;
      const { token, key } = await verifiedEmail(email);
      const none = await proxy("/v1/account", { filterType: "EMAIL", filterValue: email, verificationToken: token });
      assert.equal(none.status, 200, JSON.stringify(none.json));
      assert.deepEqual(none.json, {});
      const sessionKey = generateP256();
      const apiKeys = [{ apiKeyName: "session", publicKey: sessionKey.publicCompressed, curveType: "API_KEY_CURVE_P256" as const }];
      const sig = getClientSignatureMessageForSignup({ verificationToken: token, email, apiKeys, authenticators: [], oauthProviders: [] });
      const clientSignature = {
        publicKey: sig.publicKey,
        scheme: "CLIENT_SIGNATURE_SCHEME_API_P256",
        message: sig.message,
        signature: signP256(key, Buffer.from(sig.message, "utf8"), "raw").toString("hex"),
      };
      const up = await proxy("/v1/signup_v2", {
        userEmail: email,
        verificationToken: token,
        apiKeys,
        authenticators: [],
        oauthProviders: [],
        clientSignature,
      });
      assert.equal(up.status, 200, JSON.stringify(up.json));
      assert.equal(typeof up.json.organizationId, "string");
      assert.equal(typeof up.json.userId, "string");
      const found = await proxy("/v1/account", { filterType: "EMAIL", filterValue: email.toUpperCase(), verificationToken: token });
      assert.deepEqual(found.json, { organizationId: up.json.organizationId });
      const loginKey = generateP256();
      const msg = getClientSignatureMessageForLogin({ verificationToken: token, sessionPublicKey: loginKey.publicCompressed });
      const login = await proxy("/v1/otp_login_v2", {
        verificationToken: token,
        publicKey: loginKey.publicCompressed,
        clientSignature: {
          publicKey: msg.publicKey,
          scheme: "CLIENT_SIGNATURE_SCHEME_API_P256",
          message: msg.message,
          signature: signP256(key, Buffer.from(msg.message, "utf8"), "raw").toString("hex"),
        },
      });
      assert.equal(login.status, 200, JSON.stringify(login.json));
      const keys = await discoveredKeys(server.url);
      assert.ok(await verifySessionJwtSignature(login.json.session, keys.session));
      const claims = JSON.parse(Buffer.from(login.json.session.split(".")[1], "base64url").toString("utf8"));
      assert.equal(claims.organization_id, up.json.organizationId);
      const lifetime = Number(claims.exp) - Date.now() / 1000;
      assert.ok(lifetime > 1100 && lifetime <= 1200, `session lifetime ${lifetime} s (config: 1200)`);
      signedUp = { organizationId: up.json.organizationId, userId: up.json.userId, email, sessionKey: loginKey };
    });

    it("account look-ups: EMAIL needs proof when the config says so; a token for another contact is refused; PUBLIC_KEY and bad types", async () => {
      assert.ok(signedUp, "the sign-up test ran");
      assertSdkError(await proxy("/v1/account", { filterType: "EMAIL", filterValue: signedUp.email }), 403, 7, /verificationToken/);
      const other = await verifiedEmail(`other-${randomBytes(3).toString("hex")}@sigil.test`);
      assertSdkError(
        await proxy("/v1/account", { filterType: "EMAIL", filterValue: signedUp.email, verificationToken: other.token }),
        403,
        7,
      );
      assertSdkError(await proxy("/v1/account", { filterType: "EMAIL", filterValue: signedUp.email, verificationToken: "a.b.c" }), 403, 7);
      // The login's session key is a key of the sub-organization, offered once it has stamped
      // a request (a registration its key never used is offered to nobody: docs/login-lookups.md
      // §3.3); a fresh key is nobody's.
      const bySessionKey = () => proxy("/v1/account", { filterType: "PUBLIC_KEY", filterValue: signedUp!.sessionKey.publicCompressed });
      assert.deepEqual((await bySessionKey()).json, {});
      const me = await api(
        "query/whoami",
        { organizationId: signedUp.organizationId },
        { publicKey: signedUp.sessionKey.publicCompressed, privateKey: privateScalar(signedUp.sessionKey).toString("hex") },
      );
      assert.equal(me.status, 200, JSON.stringify(me.json));
      assert.deepEqual((await bySessionKey()).json, { organizationId: signedUp.organizationId });
      assert.deepEqual((await proxy("/v1/account", { filterType: "PUBLIC_KEY", filterValue: generateP256().publicCompressed })).json, {});
      assertSdkError(await proxy("/v1/account", { filterType: "NOPE", filterValue: "x" }), 400, 3);
      assertSdkError(await proxy("/v1/account", { filterType: "EMAIL" }), 400, 3, /filterValue/);
    });

    it("OAuth: oauth2_authenticate (credential found by provider and clientId) → signup_v2 → account by OIDC_TOKEN and OIDC_CLAIMS → oauth_login", async () => {
      const key = generateP256();
      const a = await oidc.authorize({ clientId: "proxy-x", accountId: ACCOUNTS[0]!.id });
      const body = {
        provider: "OAUTH2_PROVIDER_X",
        clientId: "proxy-x",
        authCode: a.code,
        redirectUri: a.redirectUri,
        codeVerifier: a.codeVerifier,
        nonce: nonceOf(key.publicCompressed),
      };
      assertSdkError(await proxy("/v1/oauth2_authenticate", { ...body, clientId: "unknown-client" }), 404, 5);
      const auth = await proxy("/v1/oauth2_authenticate", body);
      assert.equal(auth.status, 200, JSON.stringify(auth.json));
      const oidcToken = auth.json.oidcToken as string;
      const claims = JSON.parse(Buffer.from(oidcToken.split(".")[1]!, "base64url").toString("utf8"));
      const up = await proxy("/v1/signup_v2", {
        userName: "x user",
        apiKeys: [],
        authenticators: [],
        oauthProviders: [{ providerName: "x", oidcToken }],
      });
      assert.equal(up.status, 200, JSON.stringify(up.json));
      assert.deepEqual((await proxy("/v1/account", { filterType: "OIDC_TOKEN", filterValue: oidcToken })).json, {
        organizationId: up.json.organizationId,
      });
      const byClaims = await proxy("/v1/account", {
        filterType: "OIDC_CLAIMS",
        filterValue: JSON.stringify({ iss: claims.iss, sub: claims.sub, aud: Array.isArray(claims.aud) ? claims.aud[0] : claims.aud }),
      });
      assert.deepEqual(byClaims.json, { organizationId: up.json.organizationId });
      const login = await proxy("/v1/oauth_login", { oidcToken, publicKey: key.publicCompressed });
      assert.equal(login.status, 200, JSON.stringify(login.json));
      const s = JSON.parse(Buffer.from(login.json.session.split(".")[1], "base64url").toString("utf8"));
      assert.equal(s.organization_id, up.json.organizationId);
      // An API refusal passes through with its status and body.
      const again = await proxy("/v1/oauth2_authenticate", body);
      assert.ok(again.status >= 400 && again.status < 500, JSON.stringify(again.json));
      assert.equal(typeof again.json.code, "number");
    });

    it("limits: OTP initiations per contact and sign-ups per client address answer 429 with Retry-After", async () => {
      const email = `limit-${randomBytes(3).toString("hex")}@sigil.test`;
      for (let i = 0; i < LIMIT_OTP_PER_CONTACT; i++)
        assert.equal((await proxy("/v1/otp_init", { otpType: "OTP_TYPE_EMAIL", contact: email })).status, 200);
      const mark = sink.mark();
      const r = await proxy("/v1/otp_init", { otpType: "OTP_TYPE_EMAIL", contact: email.toUpperCase() });
      assertSdkError(r, 429, 8, /auth proxy rate limit/);
      assert.ok(Number(r.headers.get("retry-after")) > 3000, r.headers.get("retry-after") ?? "no Retry-After");
      assert.equal(sink.mails.length, mark, "no mail past the limit");
      const ip = "203.0.113.77";
      for (let i = 0; i < LIMIT_SIGNUPS_PER_ADDRESS; i++) {
        assert.equal((await proxy("/v1/signup", { apiKeys: [], authenticators: [], oauthProviders: [] }, { ip })).status, 200);
      }
      const s = await proxy("/v1/signup", { apiKeys: [], authenticators: [], oauthProviders: [] }, { ip });
      assertSdkError(s, 429, 8);
      assert.ok(Number(s.headers.get("retry-after")) > 0);
      // Another address is not limited.
      assert.equal((await proxy("/v1/signup", { apiKeys: [], authenticators: [], oauthProviders: [] })).status, 200);
    });

    it("captcha: required when the config enables it, checked with the verifier (secret, response, remoteip); a verifier that is down is 503", async () => {
      await updateConfig({ captchaEnabled: true });
      await eventually(
        "the captcha setting reaches the proxy",
        async () => (await proxy("/v1/wallet_kit_client_params", {})).json?.turnstileSiteKey === "site-key-1",
      );
      const email = `captcha-${randomBytes(3).toString("hex")}@sigil.test`;
      const init = (o: { captcha?: string; ip?: string }) => proxy("/v1/otp_init_v2", { otpType: "OTP_TYPE_EMAIL", contact: email }, o);
      assertSdkError(await init({}), 400, 3, /X-Captcha-Token/);
      assertSdkError(await init({ captcha: "wrong" }), 403, 7, /captcha/);
      const seen = captcha.seen.length;
      assert.equal((await init({ captcha: "pass", ip: "192.0.2.44" })).status, 200);
      const form = captcha.seen[seen]!;
      assert.deepEqual([form.get("secret"), form.get("response"), form.get("remoteip")], ["captcha-secret", "pass", "192.0.2.44"]);
      assertSdkError(await proxy("/v1/signup_v2", { apiKeys: [], authenticators: [], oauthProviders: [] }), 400, 3);
      captcha.down = true;
      try {
        assertSdkError(await init({ captcha: "pass" }), 503, 14);
      } finally {
        captcha.down = false;
      }
      // Endpoints without captcha are not affected.
      assert.equal((await proxy("/v1/wallet_kit_config", {})).status, 200);
      await updateConfig({ captchaEnabled: false });
      await eventually(
        "captcha off again",
        async () =>
          (await proxy("/v1/wallet_kit_client_params", {})).json &&
          !("turnstileSiteKey" in (await proxy("/v1/wallet_kit_client_params", {})).json),
      );
    });

    it("the forwarded activities are in the organization's list_activities, stamped by the proxy key", async () => {
      const acts = (await api("query/list_activities", { organizationId: init.organizationId, paginationOptions: { limit: "100" } })).json
        .activities as Json[];
      const forwarded = acts.filter((a) => /INIT_OTP_V3|VERIFY_OTP_V2|CREATE_SUB_ORGANIZATION_V[78]|OAUTH2_AUTHENTICATE/.test(a.type));
      assert.ok(forwarded.length >= 6, `forwarded activities: ${forwarded.map((a) => a.type).join(", ")}`);
      for (const a of forwarded) {
        assert.equal(a.status, "ACTIVITY_STATUS_COMPLETED");
        assert.equal(a.votes[0]?.publicKey, proxyPublicKey, JSON.stringify(a.votes));
      }
      // The login ran in the sub-organization, by the same key.
      const sub = (await api("query/list_activities", { organizationId: signedUp.organizationId })).json.activities as Json[];
      const login = sub.find((a) => a.type === "ACTIVITY_TYPE_OTP_LOGIN_V2");
      assert.equal(login?.votes[0]?.publicKey, proxyPublicKey);
    });

    it("a disabled config is 403; enabling it again serves again", async () => {
      await submit("disable_auth_proxy", "ACTIVITY_TYPE_DISABLE_AUTH_PROXY", {});
      await eventually("disabled reaches the proxy", async () => (await proxy("/v1/wallet_kit_config", {})).status === 403);
      assertSdkError(await proxy("/v1/wallet_kit_config", {}), 403, 7, /disabled/);
      await submit("enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {});
      await eventually("enabled again", async () => (await proxy("/v1/wallet_kit_config", {})).status === 200);
    });

    it("a proxy on another host, given only the secret, serves the same config", async () => {
      const secret = await proxySecret(inst);
      assert.match(secret, /^[0-9a-f]{64}$/);
      const other = await startProxyProcess({
        PATH: process.env.PATH,
        SIGIL_AUTH_PROXY_SECRET: secret,
        SIGIL_AUTH_PROXY_API_URL: server.url,
        SIGIL_DATA_DIR: path.join(inst.dataDir, "nowhere"),
      });
      try {
        const r = await fetch(`${other.url}/v1/wallet_kit_config`, {
          method: "POST",
          headers: { "x-auth-proxy-config-id": configId, origin: APP, "content-type": "application/json" },
          body: "{}",
        });
        assert.equal(r.status, 200);
        assert.equal(((await r.json()) as Json).organizationId, init.organizationId);
      } finally {
        await other.stop();
      }
      // Without a secret and without a master key, the proxy refuses to start (and creates no key).
      await assert.rejects(
        startProxyProcess({ PATH: process.env.PATH, SIGIL_DATA_DIR: path.join(inst.dataDir, "empty") }),
        /SIGIL_AUTH_PROXY_SECRET/,
      );
    });

    it("the proxy's private key appears in no log line and no database row", async () => {
      // Fetched as the proxy fetches it (the channel), opened with the secret.
      const secret = proxySecretFromMasterKey(MasterKey.parse(inst.env.SIGIL_MASTER_KEY!));
      const body = JSON.stringify({ configId, timestampMs: String(Date.now()) });
      const res = await fetch(`${server.url}${CONFIG_ROUTE}`, {
        method: "POST",
        body,
        headers: { "content-type": "application/json", [SIGNATURE_HEADER]: signChannelBody(secret, body) },
      });
      const cfg = (await res.json()) as ConfigResponse;
      const pkcs8 = openFromTransport(secret, cfg.sealedKey, configId);
      const { p256FromPkcs8 } = await import("../../src/crypto/p256.ts");
      const scalar = privateScalar(p256FromPkcs8(pkcs8));
      assert.equal(p256FromPkcs8(pkcs8).publicCompressed, proxyPublicKey);
      const forms = [
        scalar.toString("hex"),
        scalar.toString("base64"),
        scalar.toString("base64url"),
        pkcs8.toString("hex"),
        pkcs8.toString("base64"),
      ];
      const logs = server.output();
      assert.ok(logs.includes("sigil auth proxy listening") && logs.includes("/v1/otp_init_v2"), "the log covers the proxy");
      let stored: string;
      if (spec.name === "sqlite") {
        const files = readdirSync(inst.dataDir).filter((f) => f.startsWith("sigil.db"));
        stored = files.map((f) => readFileSync(path.join(inst.dataDir, f)).toString("latin1")).join("\n");
      } else {
        const c = new pg.Client({ connectionString: inst.env.DATABASE_URL });
        await c.connect();
        try {
          const tables = (await c.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).rows;
          const dumps: string[] = [];
          for (const t of tables)
            dumps.push(
              (await c.query<{ j: string }>(`SELECT row_to_json(x)::text AS j FROM "${t.tablename}" x`)).rows.map((r) => r.j).join("\n"),
            );
          stored = dumps.join("\n");
        } finally {
          await c.end();
        }
      }
      assert.ok(stored.includes(proxyPublicKey), "the dump holds the proxy's public key");
      const raw = scalar.toString("latin1");
      for (const f of forms) {
        assert.ok(!logs.includes(f), "private key in the logs");
        assert.ok(!stored.includes(f), "private key in the database");
      }
      assert.ok(!stored.includes(raw), "raw private key bytes in the database");
    });
  });
}
