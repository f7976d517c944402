import { after, it } from "node:test";
import assert from "node:assert/strict";
import {
  addUsersWithKeys,
  completed,
  failsWith,
  forbidden,
  invalidRequest,
  onSqlite,
  perEngine,
  precondition,
  type Json,
} from "../helpers/inproc.ts";
import { sinkPerHarness, startOtp } from "../helpers/smtp-sink.ts";
import { subOrganization } from "../helpers/sub-organizations.ts";
import { setOrganizationFeature } from "../../src/activities/organizations/set_organization_feature.ts";
import { queryWithPasskey, SoftPasskey, submitWithPasskey } from "../helpers/webauthn.ts";

const OP = "set_organization_feature";
const TYPE = "ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE";
const names = (features: Json[]) => features.map((f) => f.name);

onSqlite("set_organization_feature", (h) => {
  it("sets a valued feature and answers with the organization's features that are on (defaults included)", async () => {
    const org = await h().newOrg();
    const r = completed(
      await h().submit(
        OP,
        TYPE,
        { name: "FEATURE_NAME_WEBAUTHN_ORIGINS", value: "https://app.example.com,http://localhost:3000" },
        { as: org },
      ),
      setOrganizationFeature,
    );
    assert.deepEqual(
      r.features.find((f) => f.name === "FEATURE_NAME_WEBAUTHN_ORIGINS"),
      { name: "FEATURE_NAME_WEBAUTHN_ORIGINS", value: "https://app.example.com,http://localhost:3000" },
    );
    assert.ok(names(r.features).includes("FEATURE_NAME_OTP_EMAIL_AUTH"), "on by default");
    // Setting again overrides the value.
    const again = completed(
      await h().submit(OP, TYPE, { name: "FEATURE_NAME_WEBAUTHN_ORIGINS", value: "https://other.example" }, { as: org }),
      setOrganizationFeature,
    );
    assert.equal(again.features.find((f) => f.name === "FEATURE_NAME_WEBAUTHN_ORIGINS")!.value, "https://other.example");
    const configs = (await h().query("get_organization_configs", {}, { as: org })).json.configs;
    assert.deepEqual(configs.features, again.features);
  });

  it("WEBAUTHN_ORIGINS: a parent's list applies to its sub-organizations' passkey stamps, and a sub-organization can only narrow it", async () => {
    const parent = await h().newOrg();
    const pk = new SoftPasskey({ origin: "https://app.example" });
    const sub = await subOrganization(
      h(),
      { rootUsers: [{ userName: "pk", apiKeys: [], authenticators: [pk.registration()], oauthProviders: [] }] },
      parent,
    );
    const configs = (origin: string) =>
      queryWithPasskey(h(), pk, "get_organization_configs", { organizationId: sub.organizationId }, { origin });
    // Set nowhere: any origin the server accepts (this harness configures none).
    assert.equal((await configs("https://elsewhere.example")).status, 200);
    completed(
      await h().submit(
        OP,
        TYPE,
        { name: "FEATURE_NAME_WEBAUTHN_ORIGINS", value: "https://app.example,https://other.example" },
        { as: parent },
      ),
      setOrganizationFeature,
    );
    assert.equal((await configs("https://app.example")).status, 200);
    failsWith(await configs("https://elsewhere.example"), 401, 16, "SIGNATURE_INVALID", /not among the WebAuthn origins/);
    const narrowed = await submitWithPasskey(
      h(),
      pk,
      OP,
      TYPE,
      { name: "FEATURE_NAME_WEBAUTHN_ORIGINS", value: "https://other.example" },
      sub.organizationId,
      { origin: "https://app.example" },
    );
    completed(narrowed, setOrganizationFeature);
    failsWith(await configs("https://app.example"), 401, 16, "SIGNATURE_INVALID", /not among the WebAuthn origins/);
    assert.equal((await configs("https://other.example")).status, 200);
  });

  it("switches a removed feature back on (an on/off feature's value is empty; absent reads as empty)", async () => {
    const org = await h().newOrg();
    completed(
      await h().submit(
        "remove_organization_feature",
        "ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE",
        { name: "FEATURE_NAME_SMS_AUTH" },
        { as: org },
      ),
      "removeOrganizationFeatureResult",
    );
    const r = completed(await h().submit(OP, TYPE, { name: "FEATURE_NAME_SMS_AUTH" }, { as: org }), setOrganizationFeature);
    assert.deepEqual(
      r.features.find((f) => f.name === "FEATURE_NAME_SMS_AUTH"),
      { name: "FEATURE_NAME_SMS_AUTH", value: "" },
    );
  });

  it("is decided by the root quorum alone, before policies: an allow-everything policy does not let another user (403)", async () => {
    const org = await h().newOrg();
    const [u] = await addUsersWithKeys(h(), 1, org);
    const policy = { policyName: "all", effect: "EFFECT_ALLOW", condition: "true", consensus: "true", notes: "" };
    completed(await h().submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", policy, { as: org }), "createPolicyResult");
    forbidden(
      await h().submit(OP, TYPE, { name: "FEATURE_NAME_SMS_AUTH", value: "" }, { as: u }),
      /can only be approved by the root quorum/,
    );
  });

  it("a parent cannot set a feature in its sub-organization (403)", async () => {
    const sub = await subOrganization(h());
    forbidden(
      await h().submit(OP, TYPE, { name: "FEATURE_NAME_SMS_AUTH", value: "" }, { organizationId: sub.organizationId }),
      /parent of organization/,
    );
  });

  const refused: [string, Json, RegExp, string][] = [
    [
      "a feature this service does not serve",
      { name: "FEATURE_NAME_SWAP_CONFIG", value: "" },
      /not served by this service/,
      "parameters.name",
    ],
    ["an unknown feature", { name: "FEATURE_NAME_TELEPORT", value: "" }, /unknown feature name/, "parameters.name"],
    ["a value for an on/off feature", { name: "FEATURE_NAME_EMAIL_AUTH", value: "true" }, /value must be empty/, "parameters.value"],
    [
      "an origin with a path",
      { name: "FEATURE_NAME_WEBAUTHN_ORIGINS", value: "https://app.example.com/login" },
      /is not an origin/,
      "parameters.value",
    ],
    [
      "a plain-http origin",
      { name: "FEATURE_NAME_WEBAUTHN_ORIGINS", value: "http://app.example.com" },
      /is not an origin/,
      "parameters.value",
    ],
    ["no origin", { name: "FEATURE_NAME_WEBAUTHN_ORIGINS", value: "" }, /1 to 10 comma-separated origins/, "parameters.value"],
    [
      "eleven origins",
      { name: "FEATURE_NAME_WEBAUTHN_ORIGINS", value: Array.from({ length: 11 }, (_, i) => `https://a${i}.example`).join(",") },
      /1 to 10/,
      "parameters.value",
    ],
    ["a webhook that is not an https URL", { name: "FEATURE_NAME_WEBHOOK", value: "ftp://hooks.example" }, /https URL/, "parameters.value"],
    [
      "a value over 2048 characters",
      { name: "FEATURE_NAME_WEBHOOK", value: `https://h.example/${"a".repeat(2048)}` },
      /at most 2048/,
      "parameters.value",
    ],
    ["a missing name", { value: "" }, /name/, "parameters.name"],
  ];
  for (const [what, params, message, field] of refused) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().submit(OP, TYPE, params), message, [field]);
    });
  }
});

const s = sinkPerHarness();
perEngine(
  "set_organization_feature switches OTP back on",
  (h) => {
    after(s.stop);
    it("email OTP refused after removal, served again once set", async () => {
      const org = await h().newOrg();
      completed(
        await h().submit(
          "remove_organization_feature",
          "ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE",
          { name: "FEATURE_NAME_OTP_EMAIL_AUTH" },
          { as: org },
        ),
        "removeOrganizationFeatureResult",
      );
      const contact = `back-on-${Date.now()}@example.com`;
      precondition(
        await h().submit("init_otp", "ACTIVITY_TYPE_INIT_OTP_V3", { otpType: "OTP_TYPE_EMAIL", contact, appName: "T" }, { as: org }),
        /FEATURE_NAME_OTP_EMAIL_AUTH/,
      );
      assert.equal(s.sink().mailTo(contact).length, 0);
      completed(await h().submit(OP, TYPE, { name: "FEATURE_NAME_OTP_EMAIL_AUTH", value: "" }, { as: org }), setOrganizationFeature);
      const otp = await startOtp(h(), s.sink(), contact, {}, { as: org });
      assert.ok(otp.code.length > 0);
    });
  },
  undefined,
  s.options,
);
