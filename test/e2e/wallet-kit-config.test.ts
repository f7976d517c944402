// wallet_kit_config.enabledProviders lists only what the server can deliver
// (docs/auth-proxy-service.md §5.1), on both engines: the real API app over a real store,
// listening on loopback with the OTP transports of each case, and the real auth proxy reading
// its configuration from it over HTTP, as `sigil serve` runs them. The kit turns each entry
// into a button (@turnkey/react-wallet-kit's buildConfig): an entry the server cannot deliver
// is a button that ends in an error.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import pino from "pino";
import type { FastifyInstance } from "fastify";
import { completed, perEngine, type Creds, type Harness, type Json } from "../helpers/inproc.ts";
import { enabledOrg, update, UPDATE } from "../helpers/auth-proxy.ts";
import { TEST_FROM } from "../helpers/smtp-sink.ts";
import { testApp } from "../helpers/inproc.ts";
import { DEFAULT_LOGIN_SETTINGS, type LoginSettings } from "../../src/logins/settings.ts";
import { smsHttpTransport, smtpTransport } from "../../src/logins/otp/transports/index.ts";
import { buildProxyApp, type ProxyApp } from "../../src/proxy/app.ts";
import { proxySettingsFrom } from "../../src/proxy/settings.ts";

/** Transports that are configured but never reached here (nothing is sent in these tests). */
const EMAIL = smtpTransport({ url: "smtp://127.0.0.1:9", from: TEST_FROM });
const SMS = smsHttpTransport({ url: "http://127.0.0.1:9/sms" });

interface Deployment {
  api: FastifyInstance;
  proxy: ProxyApp;
  close(): Promise<void>;
}

/** The API with these logins on a loopback port, and an auth proxy in front of it (config read on every request). */
async function deploy(h: Harness, logins: LoginSettings): Promise<Deployment> {
  const api = testApp(h.service, { logins });
  await api.listen({ port: 0, host: "127.0.0.1" });
  const address = api.server.address();
  const apiPort = typeof address === "object" && address ? address.port : 0;
  const settings = { ...proxySettingsFrom(h.service.config, { apiPort, masterKey: h.service.masterKey }), configTtlMs: 0 };
  const proxy = buildProxyApp(settings, pino({ level: "silent" }));
  await proxy.app.ready();
  return {
    api,
    proxy,
    async close() {
      await proxy.app.close();
      await proxy.limiter.close();
      await api.close();
    },
  };
}

async function kitConfig(d: Deployment, configId: string): Promise<Json> {
  const r = await d.proxy.app.inject({
    method: "POST",
    url: "/v1/wallet_kit_config",
    payload: "{}",
    headers: { "content-type": "application/json", "x-auth-proxy-config-id": configId },
  });
  assert.equal(r.statusCode, 200, r.body);
  return JSON.parse(r.body) as Json;
}

perEngine("wallet_kit_config: enabledProviders tells the truth", (h) => {
  let org: Creds;
  let configId: string;
  const deployments: Deployment[] = [];
  const withLogins = async (logins: LoginSettings) => {
    const d = await deploy(h(), logins);
    deployments.push(d);
    return d;
  };
  let none: Deployment;
  let both: Deployment;
  let emailOnly: Deployment;
  const providers = async (d: Deployment) => (await kitConfig(d, configId)).enabledProviders as string[];

  before(async () => {
    const e = await enabledOrg(h(), "kit-org");
    org = e.org;
    configId = e.config.configId as string;
    none = await withLogins(DEFAULT_LOGIN_SETTINGS);
    both = await withLogins({ ...DEFAULT_LOGIN_SETTINGS, email: EMAIL, sms: SMS });
    emailOnly = await withLogins({ ...DEFAULT_LOGIN_SETTINGS, email: EMAIL });
  });
  after(async () => {
    for (const d of deployments) await d.close();
  });

  describe("the default methods (the config lists none)", () => {
    it("no transport: passkey and wallet only", async () => {
      assert.deepEqual(await providers(none), ["passkey", "wallet"]);
    });
    it("a mail transport and no SMS transport: email, not sms", async () => {
      assert.deepEqual(await providers(emailOnly), ["email", "passkey", "wallet"]);
    });
    it("both transports: email and sms", async () => {
      assert.deepEqual(await providers(both), ["email", "sms", "passkey", "wallet"]);
    });
  });

  it("a channel whose feature is off in the organization is not offered, transport or not", async () => {
    completed(
      await h().submit(
        "remove_organization_feature",
        "ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE",
        { name: "FEATURE_NAME_SMS_AUTH" },
        { as: org },
      ),
      "removeOrganizationFeatureResult",
    );
    try {
      assert.deepEqual(await providers(both), ["email", "passkey", "wallet"]);
    } finally {
      completed(
        await h().submit(
          "set_organization_feature",
          "ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE",
          { name: "FEATURE_NAME_SMS_AUTH", value: "" },
          { as: org },
        ),
        "setOrganizationFeatureResult",
      );
    }
    assert.deepEqual(await providers(both), ["email", "sms", "passkey", "wallet"]);
  });

  it("SMS enabled without a transport: the config takes it (stored as given), wallet_kit_config leaves it out", async () => {
    const res = await update(h(), org, {
      allowedAuthMethods: ["AUTH_METHOD_SMS", "AUTH_METHOD_EMAIL", "AUTH_METHOD_PASSKEY", "AUTH_METHOD_OAUTH"],
    });
    assert.equal(res.json.activity?.status, "ACTIVITY_STATUS_COMPLETED", JSON.stringify(res.json));
    assert.equal(res.json.activity.type, UPDATE[1]);
    const stored = (await h().query("get_auth_proxy_config", {}, { as: org })).json.authProxyConfig as Json;
    assert.deepEqual(stored.allowedAuthMethods, ["AUTH_METHOD_SMS", "AUTH_METHOD_EMAIL", "AUTH_METHOD_PASSKEY", "AUTH_METHOD_OAUTH"]);
    assert.deepEqual(await providers(none), ["passkey"], "no transport: neither OTP channel; a name the kit reads nothing from is dropped");
    assert.deepEqual(await providers(emailOnly), ["email", "passkey"]);
    assert.deepEqual(await providers(both), ["sms", "email", "passkey"], "in the config's order");
  });

  it("a social provider only with its client id (the kit cannot start a login without one)", async () => {
    const res = await update(h(), org, {
      allowedAuthMethods: ["AUTH_METHOD_PASSKEY"],
      walletKitSettings: {
        enabledSocialProviders: ["google", "x", "apple"],
        oauthClientIds: { x: "x-client", discord: "discord-client" },
        oauthRedirectUrl: "https://app.example/cb",
      },
    });
    assert.equal(res.json.activity?.status, "ACTIVITY_STATUS_COMPLETED", JSON.stringify(res.json));
    const cfg = await kitConfig(none, configId);
    assert.deepEqual(cfg.enabledProviders, ["passkey", "x"], "google and apple have no client id; discord is not enabled");
    assert.deepEqual(cfg.oauthClientIds, { x: "x-client", discord: "discord-client" });
    assert.equal(cfg.oauthRedirectUrl, "https://app.example/cb");
  });
});
