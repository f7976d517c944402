// The public API's side of the auth proxy against a spawned server (docs/auth-proxy.md):
// enable and read the configuration through stamped requests, fetch the proxy key through the
// internal channel the way the proxy does (signed with the proxy secret derived from the
// server's master key, re-sealed for transport), then act as the proxy with the official SDK
// client: the forwarded flows pass, everything else in the parent is refused. And the proxy
// key's plaintext is nowhere in the database.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import SQLite from "better-sqlite3";
import { Turnkey, type TurnkeyApiClient } from "@turnkey/sdk-server";
import {
  engines,
  newInstance,
  rejection,
  sigilInit,
  startServer,
  type InitResult,
  type Instance,
  type RunningServer,
} from "../helpers/server.ts";
import { pollUntil, rawPost, stampedPost } from "../helpers/raw-http.ts";
import { SmtpSink } from "../helpers/smtp-sink.ts";
import { MasterKey } from "../../src/crypto/envelope.ts";
import { p256FromPkcs8, privateScalar } from "../../src/crypto/p256.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import {
  CONFIG_ROUTE,
  MAX_SKEW_MS,
  ORIGINS_ROUTE,
  SIGNATURE_HEADER,
  openFromTransport,
  proxySecretFromMasterKey,
  signChannelBody,
} from "../../src/auth-proxy/channel.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const apiKey = () => ({ apiKeyName: "k", publicKey: generateP256KeyPair().publicKey, curveType: "API_KEY_CURVE_P256" as const });

for (const spec of engines()) {
  describe(`auth proxy configuration and key [${spec.name}]`, { skip: spec.skip, timeout: 120_000 }, () => {
    let inst: Instance;
    let server: RunningServer;
    let sink: SmtpSink;
    let root: InitResult;
    let secret: Buffer;
    let configId: string;
    let proxyUserId: string;
    let pkcs8: Buffer;
    let proxy: TurnkeyApiClient;

    const rootKey = () => ({ publicKey: root.apiPublicKey, privateKey: root.apiPrivateKey });
    const submit = (op: string, type: string, parameters: Json) =>
      stampedPost(
        server.url,
        `/public/v1/submit/${op}`,
        JSON.stringify({ type, timestampMs: String(Date.now()), organizationId: root.organizationId, parameters }),
        rootKey(),
      );
    const query = (op: string, body: Json = {}) =>
      stampedPost(server.url, `/public/v1/query/${op}`, JSON.stringify({ organizationId: root.organizationId, ...body }), rootKey());
    const channel = (route: string, body: Json, sign: (raw: string) => string = (raw) => signChannelBody(secret, raw)) => {
      const raw = JSON.stringify(body);
      return rawPost(server.url, route, raw, { [SIGNATURE_HEADER]: sign(raw) });
    };

    before(async () => {
      sink = await SmtpSink.start();
      // A short SIGIL_AUTH_PROXY_CONFIG_TTL_MS: CORS follows configuration changes within it.
      inst = await newInstance(spec.name, {
        SMTP_URL: sink.url,
        SIGIL_SMTP_FROM: "Sigil <otp@sigil.test>",
        SIGIL_AUTH_PROXY_CONFIG_TTL_MS: "300",
      });
      root = await sigilInit(inst);
      server = await startServer(inst);
      secret = proxySecretFromMasterKey(MasterKey.parse(inst.env.SIGIL_MASTER_KEY!));
    });
    after(async () => {
      pkcs8?.fill(0);
      await server?.stop();
      await sink?.stop();
      await inst?.cleanup();
    });

    it("enable_auth_proxy, then get_auth_proxy_config answers the configuration without its private key", async () => {
      const res = await submit("enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {});
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.activity.status, "ACTIVITY_STATUS_COMPLETED");
      proxyUserId = res.json.activity.result.enableAuthProxyResult.userId;
      assert.match(proxyUserId, UUID);
      const got = await query("get_auth_proxy_config");
      assert.equal(got.status, 200, got.text);
      const c = got.json.authProxyConfig as Json;
      configId = c.configId;
      assert.match(configId, UUID);
      assert.deepEqual([c.organizationId, c.userId, c.enabled], [root.organizationId, proxyUserId, true]);
      assert.equal(/private|sealed/i.test(got.text), false);
    });

    it("the channel hands out the configuration and the key sealed for transport; the key is the configuration's", async () => {
      const res = await channel(CONFIG_ROUTE, { configId, timestampMs: String(Date.now()) });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.config.configId, configId);
      assert.equal(res.json.config.enabled, true);
      assert.equal(typeof res.json.sealedKey, "string");
      pkcs8 = openFromTransport(secret, res.json.sealedKey, configId);
      const key = p256FromPkcs8(pkcs8);
      assert.equal(key.publicCompressed, res.json.config.publicKey);
      proxy = new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: key.publicCompressed,
        apiPrivateKey: privateScalar(key).toString("hex"),
        defaultOrganizationId: root.organizationId,
      }).apiClient();
      const origins = await channel(ORIGINS_ROUTE, { timestampMs: String(Date.now()) });
      assert.equal(origins.status, 200, origins.text);
      assert.deepEqual(origins.json, { origins: [], anyOrigin: true });
    });

    it("the internal routes refuse a wrong or missing signature and a stale timestamp (401, code 16); an unknown config is 404", async () => {
      const body = { configId, timestampMs: String(Date.now()) };
      const wrongSecret = Buffer.alloc(32, 7);
      for (const res of [
        await channel(CONFIG_ROUTE, body, (raw) => signChannelBody(wrongSecret, raw)),
        await channel(CONFIG_ROUTE, body, () => ""),
        await channel(CONFIG_ROUTE, body, (raw) => signChannelBody(secret, raw + " ")),
        await channel(ORIGINS_ROUTE, { timestampMs: String(Date.now()) }, (raw) => signChannelBody(wrongSecret, raw)),
        await channel(CONFIG_ROUTE, { configId, timestampMs: String(Date.now() - MAX_SKEW_MS - 5_000) }),
        await channel(CONFIG_ROUTE, { configId, timestampMs: String(Date.now() + MAX_SKEW_MS + 5_000) }),
        await channel(CONFIG_ROUTE, { configId }),
      ]) {
        assert.equal(res.status, 401, res.text);
        assert.equal(res.json.code, 16);
        assert.equal(res.json.sealedKey, undefined);
      }
      const unknown = await channel(CONFIG_ROUTE, { configId: "00000000-0000-4000-8000-000000000000", timestampMs: String(Date.now()) });
      assert.equal(unknown.status, 404, unknown.text);
      assert.equal(unknown.json.code, 5);
    });

    it("the proxy key can init_otp and create a sub-organization in the organization", async () => {
      const otp = await proxy.initOtp({ otpType: "OTP_TYPE_EMAIL", contact: "new.user@example.com", appName: "Example" });
      assert.match(otp.otpId, UUID);
      const sub = await proxy.createSubOrganization({
        subOrganizationName: "signed up",
        rootQuorumThreshold: 1,
        rootUsers: [
          { userName: "end user", userEmail: "new.user@example.com", apiKeys: [apiKey()], authenticators: [], oauthProviders: [] },
        ],
      });
      assert.match(sub.subOrganizationId, UUID);
    });

    it("the proxy key cannot create a policy, a user or an API key in the parent (403)", async () => {
      const refusals = [
        await rejection(
          proxy.createPolicy({ policyName: "mine", effect: "EFFECT_ALLOW", condition: "true", consensus: "true", notes: "" }),
        ),
        await rejection(
          proxy.createUsers({
            users: [{ userName: "intruder", apiKeys: [apiKey()], authenticators: [], oauthProviders: [], userTags: [] }],
          }),
        ),
        await rejection(proxy.createApiKeys({ userId: proxyUserId, apiKeys: [apiKey()] })),
        await rejection(proxy.createApiKeys({ userId: root.userId, apiKeys: [apiKey()] })),
      ];
      for (const r of refusals) assert.equal(r.code, 7, r.message);
      const users = await query("list_users");
      assert.equal(users.status, 200, users.text);
      assert.equal(
        (users.json.users as Json[]).some((u) => u.userName === "intruder"),
        false,
      );
      const policies = await query("list_policies");
      assert.equal(
        (policies.json.policies as Json[]).some((p) => p.policyName === "mine"),
        false,
      );
    });

    it("the proxy key's plaintext (PKCS#8 and raw scalar, hex and base64) is nowhere in the database", async () => {
      const scalar = privateScalar(p256FromPkcs8(pkcs8));
      const needles = [
        pkcs8.toString("hex"),
        scalar.toString("hex"),
        pkcs8.toString("base64"),
        scalar.toString("base64"),
        scalar.toString("base64url"),
      ];
      const texts = await everyTextValue(inst, spec.name);
      assert.ok(texts.length > 50, `read the rows (${texts.length} values)`);
      assert.ok(
        texts.some((t) => t.includes(p256FromPkcs8(pkcs8).publicCompressed)),
        "the public key is there (the search reads the right rows)",
      );
      for (const t of texts)
        for (const n of needles) assert.equal(t.toLowerCase().includes(n.toLowerCase()), false, "plaintext proxy key in a row");
      if (spec.name === "sqlite") {
        for (const f of readdirSync(inst.dataDir).filter((f) => f.startsWith("sigil.db"))) {
          const bytes = readFileSync(path.join(inst.dataDir, f));
          assert.equal(bytes.includes(scalar), false, `raw scalar in ${f}`);
          assert.equal(bytes.includes(pkcs8), false, `raw PKCS#8 in ${f}`);
          const text = bytes.toString("latin1").toLowerCase();
          for (const n of needles) assert.equal(text.includes(n.toLowerCase()), false, `plaintext proxy key in ${f}`);
        }
      }
      scalar.fill(0);
    });

    it("the public API's CORS admits an enabled configuration's explicit origins within the configuration TTL, never 'every origin' (docs/auth-proxy.md §5)", async () => {
      const APP = "https://proxy-app.example.com";
      // Allowing every origin (the default so far) opens the proxy, not the public API.
      assert.equal((await preflight(server.url, APP)).allowOrigin, undefined);
      const res = await submit("update_auth_proxy_config", "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG", { allowedOrigins: [APP] });
      assert.equal(res.json.activity?.status, "ACTIVITY_STATUS_COMPLETED", res.text);
      const admitted = await pollUntil("the proxy origin admitted", 10_000, 250, async () =>
        (await preflight(server.url, APP)).allowOrigin === APP ? true : undefined,
      );
      assert.equal(admitted, true);
      assert.equal((await preflight(server.url, "https://other.example.com")).allowOrigin, undefined);
      assert.deepEqual((await channel(ORIGINS_ROUTE, { timestampMs: String(Date.now()) })).json, { origins: [APP], anyOrigin: false });
    });

    it("disabled: the channel still answers (enabled: false), the API refuses the key (401)", async () => {
      const res = await submit("disable_auth_proxy", "ACTIVITY_TYPE_DISABLE_AUTH_PROXY", {});
      assert.equal(res.json.activity?.status, "ACTIVITY_STATUS_COMPLETED", res.text);
      const c = await channel(CONFIG_ROUTE, { configId, timestampMs: String(Date.now()) });
      assert.equal(c.json.config.enabled, false);
      const r = await rejection(proxy.initOtp({ otpType: "OTP_TYPE_EMAIL", contact: "other@example.com", appName: "Example" }));
      assert.equal(r.code, 16, r.message);
      assert.deepEqual((await channel(ORIGINS_ROUTE, { timestampMs: String(Date.now()) })).json, { origins: [], anyOrigin: false });
      // A disabled configuration's origins leave the public API's CORS within the configuration TTL.
      await pollUntil("the proxy origin dropped", 10_000, 250, async () =>
        (await preflight(server.url, "https://proxy-app.example.com")).allowOrigin === undefined ? true : undefined,
      );
    });
  });
}

/** A browser's preflight for the SDK's POST; the Access-Control-Allow-Origin it got, if any. */
async function preflight(base: string, origin: string): Promise<{ status: number; allowOrigin: string | undefined }> {
  const { request } = await import("node:http");
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}/public/v1/query/whoami`,
      {
        method: "OPTIONS",
        headers: { Origin: origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type,x-stamp" },
      },
      (res) => {
        res.resume();
        res.on("end", () =>
          resolve({ status: res.statusCode!, allowOrigin: res.headers["access-control-allow-origin"] as string | undefined }),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** Every text value of every table (SQLite: the file, read-only; PostgreSQL: the instance's database). */
async function everyTextValue(inst: Instance, engine: "sqlite" | "postgres"): Promise<string[]> {
  const out: string[] = [];
  const take = (rows: Json[]) => rows.forEach((r) => Object.values(r).forEach((v) => typeof v === "string" && out.push(v)));
  if (engine === "sqlite") {
    const db = new SQLite(path.join(inst.dataDir, "sigil.db"), { readonly: true, fileMustExist: true });
    try {
      const tables = db.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[];
      for (const { name } of tables) take(db.prepare(`select * from "${name.replace(/"/g, '""')}"`).all() as Json[]);
    } finally {
      db.close();
    }
    return out;
  }
  const c = new pg.Client({ connectionString: inst.env.DATABASE_URL });
  await c.connect();
  try {
    const tables = await c.query<{ table_name: string }>(
      "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
    );
    for (const { table_name } of tables.rows) take((await c.query(`select * from "${table_name.replace(/"/g, '""')}"`)).rows as Json[]);
  } finally {
    await c.end();
  }
  return out;
}
