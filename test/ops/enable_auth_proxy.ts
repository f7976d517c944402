import { it } from "node:test";
import assert from "node:assert/strict";
import {
  addUsersWithKeys,
  completed,
  failsWith,
  forbidden,
  invalidRequest,
  perEngine,
  stampedFrom,
  UUID,
  type Json,
} from "../helpers/inproc.ts";
import { activitiesOf, disable, enable, enabledOrg, getConfig, proxyCreds, subOrgRoot, update } from "../helpers/auth-proxy.ts";
import { DEFAULT_LOGIN_SETTINGS } from "../../src/logins/settings.ts";
import { FORWARDED_ACTIVITY_TYPES } from "../../src/auth-proxy/forwarded.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";

const OP = "enable_auth_proxy";
const TYPE = "ACTIVITY_TYPE_ENABLE_AUTH_PROXY";

const subOrgParams = (name: string): Json => ({
  subOrganizationName: name,
  rootQuorumThreshold: 1,
  rootUsers: [
    {
      userName: "end user",
      apiKeys: [{ apiKeyName: "k", publicKey: generateP256KeyPair().publicKey, curveType: "API_KEY_CURVE_P256" }],
      authenticators: [],
      oauthProviders: [],
    },
  ],
});

perEngine(OP, (h) => {
  it("creates the configuration, a proxy user without email or phone, its API key and the two policies (docs/auth-proxy.md §3)", async () => {
    const { org, userId, config } = await enabledOrg(h(), "enable-basic");
    assert.match(userId, UUID);
    assert.match(config.configId, UUID);
    assert.equal(config.enabled, true);
    assert.equal(config.userId, userId);
    assert.match(config.publicKey, /^0[23][0-9a-f]{64}$/);
    assert.deepEqual(config.allowedOrigins, []);
    assert.equal(JSON.stringify(config).includes("private"), false);
    const user = (await h().query("get_user", { userId }, { as: org })).json.user as Json;
    assert.equal(user.userName, "auth proxy");
    assert.equal(user.userEmail ?? "", "");
    assert.equal(user.userPhoneNumber ?? "", "");
    assert.deepEqual(
      user.apiKeys.map((k: Json) => k.credential.publicKey),
      [config.publicKey],
    );
    const policies = (await h().query("list_policies", {}, { as: org })).json.policies as Json[];
    const mine = policies.filter((p) => p.consensus.includes(userId));
    assert.deepEqual(mine.map((p) => p.effect).sort(), ["EFFECT_ALLOW", "EFFECT_DENY"]);
    for (const t of FORWARDED_ACTIVITY_TYPES) assert.ok(mine.every((p) => p.condition.includes(`'${t}'`)));
  });

  it("enabling again is the same configuration, user and key, and adds nothing", async () => {
    const { org, userId, config } = await enabledOrg(h(), "enable-twice");
    const policiesBefore = (await h().query("list_policies", {}, { as: org })).json.policies.length;
    assert.equal(completed(await enable(h(), org), "enableAuthProxyResult").userId, userId);
    const again = (await getConfig(h(), org)).json.authProxyConfig as Json;
    assert.equal(again.configId, config.configId);
    assert.equal(again.publicKey, config.publicKey);
    assert.equal((await h().query("list_policies", {}, { as: org })).json.policies.length, policiesBefore);
    assert.equal((await h().query("list_users", {}, { as: org })).json.users.length, 2);
  });

  it("re-enabling a disabled configuration keeps its id, user and key", async () => {
    const { org, userId, config } = await enabledOrg(h(), "enable-again");
    completed(await disable(h(), org), "disableAuthProxyResult");
    assert.equal(completed(await enable(h(), org), "enableAuthProxyResult").userId, userId);
    const again = (await getConfig(h(), org)).json.authProxyConfig as Json;
    assert.deepEqual([again.configId, again.publicKey, again.enabled], [config.configId, config.publicKey, true]);
    const proxy = await proxyCreds(h(), org.organizationId);
    assert.equal((await h().query("list_suborgs", {}, { as: proxy })).status, 200);
  });

  it("re-enabling puts back a proxy key and policies a root user deleted", async () => {
    const { org, userId, config } = await enabledOrg(h(), "enable-repair");
    const apiKeyId = ((await h().query("get_user", { userId }, { as: org })).json.user as Json).apiKeys[0].apiKeyId;
    completed(
      await h().submit("delete_api_keys", "ACTIVITY_TYPE_DELETE_API_KEYS", { userId, apiKeyIds: [apiKeyId] }, { as: org }),
      "deleteApiKeysResult",
    );
    const ids = ((await h().query("list_policies", {}, { as: org })).json.policies as Json[])
      .filter((p) => p.consensus.includes(userId))
      .map((p) => p.policyId);
    completed(
      await h().submit("delete_policies", "ACTIVITY_TYPE_DELETE_POLICIES", { policyIds: ids }, { as: org }),
      "deletePoliciesResult",
    );
    completed(await enable(h(), org), "enableAuthProxyResult");
    const user = (await h().query("get_user", { userId }, { as: org })).json.user as Json;
    assert.deepEqual(
      user.apiKeys.map((k: Json) => k.credential.publicKey),
      [config.publicKey],
    );
    const back = ((await h().query("list_policies", {}, { as: org })).json.policies as Json[]).filter((p) => p.consensus.includes(userId));
    assert.equal(back.length, 2);
  });

  it("a sub-organization is refused before validation and policy (403, code 7), nothing recorded", async () => {
    const parent = await h().newOrg("enable-parent");
    const subRoot = await subOrgRoot(h(), parent);
    forbidden(await enable(h(), subRoot), /only by a top-level organization/);
    forbidden(await h().submit(OP, TYPE, { unexpected: 1 }, { as: subRoot }), /only by a top-level organization/);
    assert.deepEqual(await activitiesOf(h(), subRoot, /AUTH_PROXY/), []);
    assert.equal((await getConfig(h(), subRoot)).status, 404);
    // The parent's credential on the sub-organization: a parent never writes below itself.
    forbidden(await h().submit(OP, TYPE, {}, { as: parent, organizationId: subRoot.organizationId }));
  });

  it("a non-root user of the organization needs a policy like any other activity", async () => {
    const org = await h().newOrg("enable-nonroot");
    const [other] = await addUsersWithKeys(h(), 1, org);
    const res = await enable(h(), other!);
    assert.equal(res.status, 403);
    assert.equal((await getConfig(h(), org)).status, 404);
  });

  it("the proxy key may sign the forwarded activities and nothing else (docs/auth-proxy.md §3)", async () => {
    const { org } = await enabledOrg(h(), "enable-scope");
    const proxy = await proxyCreds(h(), org.organizationId);
    const made = completed(
      await h().submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7", subOrgParams("signed-up"), { as: proxy }),
      "createSubOrganizationResultV7",
    );
    assert.match(made.subOrganizationId, UUID);
    // Allowed by policy: init_otp gets as far as its handler (no mail transport here).
    const otp = await h().submit(
      "init_otp",
      "ACTIVITY_TYPE_INIT_OTP_V3",
      { otpType: "OTP_TYPE_EMAIL", contact: "a@example.com", appName: "app" },
      { as: proxy },
    );
    assert.notEqual(otp.status, 403, JSON.stringify(otp.json));
    const refused: [string, string, Json][] = [
      ["create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", { policyName: "p", effect: "EFFECT_ALLOW", notes: "" }],
      ["create_users", "ACTIVITY_TYPE_CREATE_USERS_V4", { users: [] }],
      [
        "create_api_keys",
        "ACTIVITY_TYPE_CREATE_API_KEYS_V2",
        {
          userId: proxy.userId,
          apiKeys: [{ apiKeyName: "x", publicKey: generateP256KeyPair().publicKey, curveType: "API_KEY_CURVE_P256" }],
        },
      ],
      ["stamp_login", "ACTIVITY_TYPE_STAMP_LOGIN", { publicKey: generateP256KeyPair().publicKey }],
      ["update_auth_proxy_config", "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG", { otpLength: 7 }],
      ["disable_auth_proxy", "ACTIVITY_TYPE_DISABLE_AUTH_PROXY", {}],
    ];
    for (const [op, type, p] of refused) forbidden(await h().submit(op, type, p, { as: proxy }), /auth proxy's key may not sign/);
    forbidden(await h().query("list_users", {}, { as: proxy }), /auth proxy's key may not sign query list_users/);
    assert.equal((await h().query("list_suborgs", {}, { as: proxy })).status, 200);
  });

  it("the proxy user is confined by its policies too: another key of that user cannot change credentials", async () => {
    const { org, userId } = await enabledOrg(h(), "enable-policies");
    const other = generateP256KeyPair();
    completed(
      await h().submit(
        "create_api_keys",
        "ACTIVITY_TYPE_CREATE_API_KEYS_V2",
        { userId, apiKeys: [{ apiKeyName: "extra", publicKey: other.publicKey, curveType: "API_KEY_CURVE_P256" }] },
        { as: org },
      ),
      "createApiKeysResult",
    );
    const asProxyUser = { organizationId: org.organizationId, userId, key: other };
    // Own credentials are implicitly allowed to everyone else; the explicit DENY stops it here.
    const res = await h().submit(
      "create_api_keys",
      "ACTIVITY_TYPE_CREATE_API_KEYS_V2",
      { userId, apiKeys: [{ apiKeyName: "more", publicKey: generateP256KeyPair().publicKey, curveType: "API_KEY_CURVE_P256" }] },
      { as: asProxyUser },
    );
    failsWith(res, 403, 7, "REQUEST_NOT_AUTHORIZED");
    assert.equal(res.json.activity, undefined);
    const made = await h().submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7", subOrgParams("by-other-key"), {
      as: asProxyUser,
    });
    completed(made, "createSubOrganizationResultV7");
  });

  it("the proxy key is exempt from the organization's IP allowlist; the root key is not", async () => {
    const { org } = await enabledOrg(h(), "enable-allowlist");
    const proxy = await proxyCreds(h(), org.organizationId);
    const body = (type: string, parameters: Json) => ({
      type,
      timestampMs: String(Date.now()),
      organizationId: org.organizationId,
      parameters,
    });
    const set = await stampedFrom(
      h(),
      "10.1.2.3",
      org,
      "/public/v1/submit/set_ip_allowlist",
      body("ACTIVITY_TYPE_SET_IP_ALLOWLIST", { enabled: true, rules: [{ cidr: "10.1.0.0/20" }] }),
    );
    completed(set, "setIpAllowlistResult");
    const outside = "192.0.2.7";
    failsWith(
      await stampedFrom(h(), outside, org, "/public/v1/query/list_suborgs", { organizationId: org.organizationId }),
      403,
      7,
      "FORBIDDEN",
      /IP allowlist/,
    );
    assert.equal(
      (await stampedFrom(h(), outside, proxy, "/public/v1/query/list_suborgs", { organizationId: org.organizationId })).status,
      200,
    );
    completed(
      await stampedFrom(
        h(),
        outside,
        proxy,
        "/public/v1/submit/create_sub_organization",
        body("ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7", subOrgParams("from-anywhere")),
      ),
      "createSubOrganizationResultV7",
    );
  });
});

// The operator allows From / Reply-To in example.com only (SIGIL_MAIL_SENDER_DOMAINS).
perEngine(
  `${OP} sender domains`,
  (h) => {
    it("re-enabling a configuration whose From or Reply-To is outside SIGIL_MAIL_SENDER_DOMAINS is refused (400 naming each), writing nothing; fixed, it enables", async () => {
      const { org, userId } = await enabledOrg(h(), "enable-sender");
      completed(await update(h(), org, { sendFromEmailAddress: "login@example.com" }), "updateAuthProxyConfigResult");
      completed(await disable(h(), org), "disableAuthProxyResult");
      // Written when the operator still allowed old.example (update_auth_proxy_config refuses it now).
      const db = h().service.store.db;
      const stale = JSON.stringify({ sendFromEmailAddress: "login@old.example", replyToEmailAddress: "help@old.example" });
      await db.updateTable("auth_proxy_configs").set({ settings: stale }).where("organization_id", "=", org.organizationId).execute();
      const before = await db
        .selectFrom("auth_proxy_configs")
        .selectAll()
        .where("organization_id", "=", org.organizationId)
        .executeTakeFirstOrThrow();
      invalidRequest(await enable(h(), org), /SIGIL_MAIL_SENDER_DOMAINS/, [
        "authProxyConfig.sendFromEmailAddress",
        "authProxyConfig.replyToEmailAddress",
      ]);
      assert.deepEqual(
        await db.selectFrom("auth_proxy_configs").selectAll().where("organization_id", "=", org.organizationId).executeTakeFirstOrThrow(),
        before,
      );
      assert.equal((await getConfig(h(), org)).json.authProxyConfig.enabled, false);
      completed(
        await update(h(), org, { sendFromEmailAddress: "login@example.com", replyToEmailAddress: "help@example.com" }),
        "updateAuthProxyConfigResult",
      );
      assert.equal(completed(await enable(h(), org), "enableAuthProxyResult").userId, userId);
      assert.equal((await getConfig(h(), org)).json.authProxyConfig.enabled, true);
    });
  },
  undefined,
  { logins: { ...DEFAULT_LOGIN_SETTINGS, mailSenderDomains: ["example.com"] } },
);
