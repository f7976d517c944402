// What an anonymous caller can spend or claim through the auth proxy (docs/auth-proxy-service.md
// §2.2, §4.1), end to end on both engines: `sigil serve` with the proxy, requests from several
// real loopback addresses (127.0.0.x as the socket's source address), an OIDC issuer with a real
// JWKS (test/helpers/oidc-tokens.ts) the API trusts. SIGIL_TRUST_PROXY is left unset, as by
// default: X-Forwarded-For is whatever a script writes, and must not name the client.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { stampedPost } from "../helpers/raw-http.ts";
import { startIssuer, type FakeIssuer } from "../helpers/oidc-tokens.ts";
import type { Answer as JsonAnswer, Json } from "../helpers/proxy-stack.ts";

const PER_ADDRESS = 5;
const PER_ORIGIN = 20;

interface Answer extends JsonAnswer {
  headers: http.IncomingHttpHeaders;
}

/** One POST to the proxy from `from` (a loopback address of this machine), with the headers given. */
function post(proxyUrl: string, from: string, p: string, body: Json, headers: Record<string, string>): Promise<Answer> {
  const u = new URL(p, proxyUrl);
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: "POST",
        localAddress: from,
        agent: false,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers },
      },
      (res) => {
        let data = "";
        res.on("data", (c: Buffer) => (data += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode!, json: data ? JSON.parse(data) : undefined, headers: res.headers }));
      },
    );
    req.on("error", reject);
    req.end(text);
  });
}

const assertLimited = (a: Answer, what: RegExp) => {
  assert.equal(a.status, 429, JSON.stringify(a.json));
  assert.equal(a.json.code, 8, JSON.stringify(a.json));
  assert.ok(Array.isArray(a.json.details));
  assert.match(a.json.message, what);
  const retry = Number(a.headers["retry-after"]);
  assert.ok(retry >= 1 && retry <= 60, `Retry-After ${a.headers["retry-after"]}`);
};

for (const spec of engines()) {
  describe(`auth proxy: limits and what an anonymous caller can claim [${spec.name}]`, { skip: spec.skip, timeout: 120_000 }, () => {
    let inst: Instance;
    let server: RunningServer;
    let issuer: FakeIssuer;
    let init: InitResult;
    let configId: string;
    let n = 0;
    const invented = () => `https://app-${++n}-${randomBytes(3).toString("hex")}.example`;
    const rootKey = () => ({ publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey });
    async function submit(op: string, type: string, parameters: Json): Promise<Json> {
      const r = await stampedPost(
        server.url,
        `/public/v1/submit/${op}`,
        JSON.stringify({ type, timestampMs: String(Date.now()), organizationId: init.organizationId, parameters }),
        rootKey(),
      );
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.activity.status, "ACTIVITY_STATUS_COMPLETED", r.text);
      return r.json.activity;
    }
    /** A browser-shaped proxy request: no stamp, the config id, an Origin (null: none). */
    const proxy = (from: string, p: string, body: Json, origin: string | null, extra: Record<string, string> = {}) =>
      post(server.proxyUrl!, from, p, body, { "X-Auth-Proxy-Config-ID": configId, ...(origin === null ? {} : { origin }), ...extra });

    before(async () => {
      issuer = await startIssuer();
      inst = await newInstance(spec.name, {
        SIGIL_OAUTH_ALLOW_LOOPBACK: "true",
        SIGIL_AUTH_PROXY_REQUESTS_PER_ADDRESS_PER_MINUTE: String(PER_ADDRESS),
        SIGIL_AUTH_PROXY_REQUESTS_PER_ORIGIN_PER_MINUTE: String(PER_ORIGIN),
      });
      const providersFile = path.join(inst.dataDir, "oauth-providers.json");
      writeFileSync(providersFile, JSON.stringify({ issuers: [{ issuer: issuer.issuer, jwksUrl: issuer.jwksUrl }] }));
      inst.env.SIGIL_OAUTH_PROVIDERS_FILE = providersFile;
      init = await sigilInit(inst, ["--name", "Limits Org"]);
      server = await startServer(inst, [], { authProxy: true });
      assert.ok(server.proxyUrl, "the proxy runs in the server");
      await submit("enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {});
      // No allowedOrigins: every origin is admitted, the configuration the limits must hold for.
      await submit("update_auth_proxy_config", "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG", {
        verificationTokenRequiredForGetAccountPii: true,
      });
      const got = await stampedPost(
        server.url,
        "/public/v1/query/get_auth_proxy_config",
        JSON.stringify({ organizationId: init.organizationId }),
        rootKey(),
      );
      assert.equal(got.status, 200, got.text);
      configId = got.json.authProxyConfig.configId;
      assert.deepEqual(got.json.authProxyConfig.allowedOrigins, []);
    });
    after(async () => {
      await server?.stop();
      await issuer?.close();
      await inst?.cleanup();
    });

    it("account by EMAIL with an oidcToken: the token's email counts only when email_verified is true", async () => {
      const from = "127.0.0.5";
      const email = `victim-${randomBytes(3).toString("hex")}@example.com`;
      const made = await submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7", {
        subOrganizationName: "victim",
        rootQuorumThreshold: 1,
        rootUsers: [{ userName: "victim", userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [] }],
      });
      const victimOrg = made.result.createSubOrganizationResultV7.subOrganizationId as string;
      const lookUp = async (claims: Json) =>
        proxy(
          from,
          "/v1/account",
          { filterType: "EMAIL", filterValue: email, oidcToken: await issuer.sign({ aud: "app-client", ...claims }) },
          invented(),
        );
      // A token the API accepts in full (trusted issuer, signature, expiry), whose provider never said it checked the address.
      for (const claims of [{ email }, { email, email_verified: false }, { email, extra: { email_verified: "yes" } }]) {
        const a = await lookUp(claims);
        assert.equal(a.status, 403, `${JSON.stringify(claims)}: ${JSON.stringify(a.json)}`);
        assert.equal(a.json.code, 7);
        assert.match(a.json.message, /oidcToken does not carry this email/);
      }
      const proved = await lookUp({ email: email.toUpperCase(), email_verified: true });
      assert.equal(proved.status, 200, JSON.stringify(proved.json));
      assert.deepEqual(proved.json, { organizationId: victimOrg });
    });

    it("per client address: rotating Origins and spoofed X-Forwarded-For from one address are 429 with Retry-After after the limit; another address is served", async () => {
      const from = "127.0.0.1";
      const spoof = () => `203.0.113.${++n % 250}`;
      for (let i = 0; i < PER_ADDRESS; i++) {
        const ok = await proxy(from, "/v1/wallet_kit_config", {}, invented(), { "x-forwarded-for": spoof() });
        assert.equal(ok.status, 200, JSON.stringify(ok.json));
      }
      const origin = invented();
      const limited = await proxy(from, "/v1/wallet_kit_config", {}, origin, { "x-forwarded-for": spoof() });
      assertLimited(limited, /client address/);
      // The config admits every origin: the browser may read the refusal.
      assert.equal(limited.headers["access-control-allow-origin"], origin);
      // Refused before the config is looked up: a made-up config id or no Origin changes nothing.
      assertLimited(
        await post(server.proxyUrl!, from, "/v1/wallet_kit_config", {}, { "X-Auth-Proxy-Config-ID": "made-up" }),
        /client address/,
      );
      const other = await proxy("127.0.0.2", "/v1/wallet_kit_config", {}, invented());
      assert.equal(other.status, 200, JSON.stringify(other.json));
    });

    it("per origin: origins a config admits without listing them share one count per config, however many are invented", async () => {
      // Spread over addresses, each under its own limit: only the origin count can refuse.
      let served = 0;
      let limited: Answer | undefined;
      for (let i = 0; i <= PER_ORIGIN && !limited; i++) {
        const from = `127.0.1.${Math.floor(i / (PER_ADDRESS - 1)) + 1}`;
        const a = await proxy(from, "/v1/wallet_kit_config", {}, i % 3 === 0 ? null : invented());
        if (a.status === 200) served++;
        else limited = a;
      }
      assert.ok(limited, `no 429 after ${served} requests from invented origins`);
      assertLimited(limited, /unlisted origins/);
      assert.ok(served <= PER_ORIGIN, `at most ${PER_ORIGIN} in all, the earlier tests' included; served ${served}`);
    });
  });
}
