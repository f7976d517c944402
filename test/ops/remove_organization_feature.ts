import { after, it } from "node:test";
import assert from "node:assert/strict";
import {
  addUsersWithKeys,
  completed,
  forbidden,
  invalidRequest,
  onSqlite,
  perEngine,
  precondition,
  type Creds,
  type Harness,
  type Json,
} from "../helpers/inproc.ts";
import { encryptedCode, sinkPerHarness, startOtp, verifiedToken } from "../helpers/smtp-sink.ts";
import { clientSignature } from "../helpers/tokens.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { subOrganization } from "../helpers/sub-organizations.ts";
import { removeOrganizationFeature } from "../../src/activities/organizations/set_organization_feature.ts";

const OP = "remove_organization_feature";
const TYPE = "ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE";
const names = (features: Json[]) => features.map((f) => f.name);
const initEmailOtp = (h: Harness, contact: string, as: Creds) =>
  h.submit("init_otp", "ACTIVITY_TYPE_INIT_OTP_V3", { otpType: "OTP_TYPE_EMAIL", contact, appName: "T" }, { as });
let n = 0;
const fresh = () => `feature-${++n}-${Date.now()}@example.com`;

onSqlite("remove_organization_feature", (h) => {
  it("switches a default-on feature off and answers with what is still on", async () => {
    const org = await h().newOrg();
    const before = (await h().query("get_organization_configs", {}, { as: org })).json.configs.features as Json[];
    assert.ok(names(before).includes("FEATURE_NAME_EMAIL_RECOVERY"));
    const r = completed(await h().submit(OP, TYPE, { name: "FEATURE_NAME_EMAIL_RECOVERY" }, { as: org }), removeOrganizationFeature);
    assert.deepEqual(
      names(r.features),
      names(before).filter((x) => x !== "FEATURE_NAME_EMAIL_RECOVERY"),
    );
    // Removing what is off already is not an error.
    completed(await h().submit(OP, TYPE, { name: "FEATURE_NAME_WEBHOOK" }, { as: org }), removeOrganizationFeature);
  });

  it("is decided by the root quorum alone (403 to another user, whatever the policies)", async () => {
    const org = await h().newOrg();
    const [u] = await addUsersWithKeys(h(), 1, org);
    const policy = { policyName: "all", effect: "EFFECT_ALLOW", condition: "true", consensus: "true", notes: "" };
    completed(await h().submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", policy, { as: org }), "createPolicyResult");
    forbidden(await h().submit(OP, TYPE, { name: "FEATURE_NAME_OTP_EMAIL_AUTH" }, { as: u }), /can only be approved by the root quorum/);
  });

  it("a parent cannot remove a feature of its sub-organization (403)", async () => {
    const sub = await subOrganization(h());
    forbidden(
      await h().submit(OP, TYPE, { name: "FEATURE_NAME_OTP_EMAIL_AUTH" }, { organizationId: sub.organizationId }),
      /parent of organization/,
    );
  });

  it("create_sub_organization's disable* settings read as removed features", async () => {
    const sub = await subOrganization(h(), { disableOtpEmailAuth: true, disableSmsAuth: true });
    const features = names((await h().query("get_organization_configs", {}, { as: sub })).json.configs.features);
    assert.ok(!features.includes("FEATURE_NAME_OTP_EMAIL_AUTH") && !features.includes("FEATURE_NAME_SMS_AUTH"));
    assert.ok(features.includes("FEATURE_NAME_EMAIL_AUTH"));
  });

  for (const [what, params, message] of [
    ["a feature this service does not serve", { name: "FEATURE_NAME_EARN_CONFIG" }, /not served by this service/],
    ["an unknown feature", { name: "nope" }, /unknown feature name/],
    ["a name over 64 characters", { name: "F".repeat(65) }, /FEATURE_NAME_/],
  ] as const) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().submit(OP, TYPE, params), message, ["parameters.name"]);
    });
  }
});

const s = sinkPerHarness();
perEngine(
  "remove_organization_feature switches OTP off",
  (h) => {
    after(s.stop);

    it("email OTP removed: init_otp is refused (400) in the organization and in its sub-organizations, no mail is sent, nothing recorded", async () => {
      const parent = await h().newOrg();
      const sub = await subOrganization(h(), {}, parent);
      completed(await h().submit(OP, TYPE, { name: "FEATURE_NAME_OTP_EMAIL_AUTH" }, { as: parent }), removeOrganizationFeature);
      const db = h().service.store.db;
      const count = async () =>
        Number(
          (
            await db
              .selectFrom("activities")
              .select((eb) => eb.fn.countAll().as("n"))
              .where("type", "like", "ACTIVITY_TYPE_INIT_OTP%")
              .executeTakeFirstOrThrow()
          ).n,
        );
      const before = await count();
      const contact = fresh();
      precondition(await initEmailOtp(h(), contact, parent), /email OTP authentication is disabled.*FEATURE_NAME_OTP_EMAIL_AUTH/);
      // The parent's own credential starting the flow in its sub-organization: off there too.
      precondition(
        await h().submit(
          "init_otp",
          "ACTIVITY_TYPE_INIT_OTP_V3",
          { otpType: "OTP_TYPE_EMAIL", contact, appName: "T" },
          { as: parent, organizationId: sub.organizationId },
        ),
        /FEATURE_NAME_OTP_EMAIL_AUTH/,
      );
      assert.equal(await count(), before);
      assert.equal(s.sink().mailTo(contact).length, 0);
      const otps = await db.selectFrom("otps").select("id").where("contact_normalized", "=", contact).execute();
      assert.equal(otps.length, 0);
    });

    it("a sub-organization switching it off affects itself only", async () => {
      const parent = await h().newOrg();
      const sub = await subOrganization(h(), {}, parent);
      completed(await h().submit(OP, TYPE, { name: "FEATURE_NAME_OTP_EMAIL_AUTH" }, { as: sub }), removeOrganizationFeature);
      precondition(
        await h().submit(
          "init_otp",
          "ACTIVITY_TYPE_INIT_OTP_V3",
          { otpType: "OTP_TYPE_EMAIL", contact: fresh(), appName: "T" },
          { as: sub },
        ),
        /FEATURE_NAME_OTP_EMAIL_AUTH/,
      );
      const otp = await startOtp(h(), s.sink(), fresh(), {}, { as: parent });
      assert.ok(otp.code.length > 0);
    });

    it("a code sent before the removal can no longer be verified (400)", async () => {
      const org = await h().newOrg();
      const contact = fresh();
      const otp = await startOtp(h(), s.sink(), contact, {}, { as: org });
      completed(await h().submit(OP, TYPE, { name: "FEATURE_NAME_OTP_EMAIL_AUTH" }, { as: org }), removeOrganizationFeature);
      const { encryptedOtpBundle } = await encryptedCode(h(), otp.code, otp.bundle);
      precondition(
        await h().submit("verify_otp", "ACTIVITY_TYPE_VERIFY_OTP_V2", { otpId: otp.otpId, encryptedOtpBundle }, { as: org }),
        /FEATURE_NAME_OTP_EMAIL_AUTH/,
      );
    });

    it("a verification token issued before the removal logs in no more (400), no session made", async () => {
      const email = fresh();
      const sub = await subOrganization(h(), {
        rootUsers: [{ userName: "u", userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [] }],
      });
      const { token, key } = await verifiedToken(h(), s.sink(), email);
      completed(await h().submit(OP, TYPE, { name: "FEATURE_NAME_OTP_EMAIL_AUTH" }), removeOrganizationFeature);
      try {
        const session = generateP256KeyPair();
        const id = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")).id as string;
        const login = {
          verificationToken: token,
          publicKey: session.publicKey,
          clientSignature: clientSignature(key, { login: { publicKey: session.publicKey }, tokenId: id, type: "USAGE_TYPE_LOGIN" }),
        };
        precondition(
          await h().submit("otp_login", "ACTIVITY_TYPE_OTP_LOGIN_V2", login, { organizationId: sub.organizationId }),
          /FEATURE_NAME_OTP_EMAIL_AUTH/,
        );
        const sessions = await h()
          .service.store.db.selectFrom("api_keys")
          .select("id")
          .where("organization_id", "=", sub.organizationId)
          .execute();
        assert.deepEqual(sessions, []);
      } finally {
        // The harness's root organization serves the other tests.
        completed(
          await h().submit("set_organization_feature", "ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE", {
            name: "FEATURE_NAME_OTP_EMAIL_AUTH",
            value: "",
          }),
          "setOrganizationFeatureResult",
        );
      }
    });

    it("SMS removed: init_otp by SMS is refused (400) before any transport is asked", async () => {
      const org = await h().newOrg();
      completed(await h().submit(OP, TYPE, { name: "FEATURE_NAME_SMS_AUTH" }, { as: org }), removeOrganizationFeature);
      // This harness has no SMS transport: the organization's choice is answered first.
      const res = await h().submit(
        "init_otp",
        "ACTIVITY_TYPE_INIT_OTP_V3",
        { otpType: "OTP_TYPE_SMS", contact: "+15005550006", appName: "T" },
        { as: org },
      );
      precondition(res, /SMS OTP authentication is disabled.*FEATURE_NAME_SMS_AUTH/);
    });

    it("email_auth and email recovery are refused when EMAIL_AUTH, ROOT_USER_EMAIL_RECOVERY or EMAIL_RECOVERY is off above them; no mail is sent", async () => {
      const parent = await h().newOrg();
      const email = fresh();
      const key = generateP256KeyPair();
      const sub = completed(
        await h().submit(
          "create_sub_organization",
          "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8",
          {
            subOrganizationName: `features-${n}`,
            rootQuorumThreshold: 1,
            rootUsers: [
              {
                userName: "end user",
                userEmail: email,
                apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
                authenticators: [],
                oauthProviders: [],
              },
            ],
          },
          { as: parent },
        ),
        "createSubOrganizationResultV8",
      );
      const at = { as: parent, organizationId: sub.subOrganizationId as string };
      const params = () => ({ email, targetPublicKey: generateP256KeyPair().publicKey, emailCustomization: { appName: "Demo" } });
      // On by default: both flows mail a credential.
      completed(await h().submit("email_auth", "ACTIVITY_TYPE_EMAIL_AUTH_V3", params(), at), "emailAuthResult");
      completed(
        await h().submit("init_user_email_recovery", "ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY_V2", params(), at),
        "initUserEmailRecoveryResult",
      );
      const mark = s.sink().mails.length;
      completed(await h().submit(OP, TYPE, { name: "FEATURE_NAME_EMAIL_AUTH" }, { as: parent }), removeOrganizationFeature);
      precondition(
        await h().submit("email_auth", "ACTIVITY_TYPE_EMAIL_AUTH_V3", params(), at),
        /email authentication is disabled.*FEATURE_NAME_EMAIL_AUTH/,
      );
      // The sub-organization's only user is a root user: its own switch applies.
      completed(await h().submit(OP, TYPE, { name: "FEATURE_NAME_ROOT_USER_EMAIL_RECOVERY" }, { as: parent }), removeOrganizationFeature);
      precondition(
        await h().submit("init_user_email_recovery", "ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY_V2", params(), at),
        /FEATURE_NAME_ROOT_USER_EMAIL_RECOVERY/,
      );
      completed(await h().submit(OP, TYPE, { name: "FEATURE_NAME_EMAIL_RECOVERY" }, { as: parent }), removeOrganizationFeature);
      precondition(
        await h().submit("init_user_email_recovery", "ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY_V2", params(), at),
        /email recovery is disabled.*FEATURE_NAME_EMAIL_RECOVERY/,
      );
      assert.equal(s.sink().mails.length, mark);
    });
  },
  undefined,
  s.options,
);
