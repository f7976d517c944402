// init_otp_auth V3 (docs/logins.md §9.5): init_otp under its legacy name — the code arrives by
// mail, the result is initOtpAuthResultV2 {otpId}; the older versions are refused naming V3.
import { after, it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, completed, forbidden, invalidRequest, perEngine } from "../helpers/inproc.ts";
import { codeFrom, sinkPerHarness } from "../helpers/smtp-sink.ts";
import { subOrgWithEmail } from "../helpers/credential-bundles.ts";
import { initOtpAuthV3 } from "../../src/activities/otp/init_otp_auth.ts";
import { createPolicyV3 } from "../../src/activities/policies/create_policy.ts";

const OP = "init_otp_auth";
const TYPE = "ACTIVITY_TYPE_INIT_OTP_AUTH_V3";
let n = 0;
const fresh = () => `otpauth-init${++n}-${Date.now()}@example.com`;

const s = sinkPerHarness();
perEngine(
  "init_otp_auth",
  (h) => {
    after(s.stop);

    it("the parent's backend sends a code for its sub-organization; an OTP row is live, holding no code in plain", async () => {
      const email = fresh();
      const user = await subOrgWithEmail(h(), email);
      const mark = s.sink().mark();
      const res = await h().submit(
        OP,
        TYPE,
        { otpType: "OTP_TYPE_EMAIL", contact: email, appName: "Demo", otpLength: 6, alphanumeric: false },
        { organizationId: user.orgId },
      );
      const r = completed(res, initOtpAuthV3);
      assert.ok(res.json.activity.result.initOtpAuthResultV2);
      const code = codeFrom(await s.sink().nextMail(email, mark));
      assert.match(code, /^[0-9]{6}$/);
      const row = await h().service.store.db.selectFrom("otps").selectAll().where("id", "=", r.otpId).executeTakeFirstOrThrow();
      assert.equal(row.organization_id, user.orgId);
      assert.equal(row.status, "live");
      assert.ok(!JSON.stringify(row).includes(code));
    });

    it("policy facts: resource AUTH, action CREATE, kind INIT_OTP_AUTH, params.otp_length (an int, 9 when absent)", async () => {
      // Not a root user: the root quorum (1/1) would bypass policies.
      const [user] = await addUsersWithKeys(h(), 1);
      const allow = await h().submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", {
        policyName: "long codes only",
        effect: "EFFECT_ALLOW",
        notes: "",
        condition:
          "activity.resource == 'AUTH' && activity.action == 'CREATE' && activity.kind == 'INIT_OTP_AUTH' && activity.params.otp_length >= 8",
        consensus: `approvers.any(user, user.id == '${user!.userId}')`,
      });
      completed(allow, createPolicyV3);
      forbidden(await h().submit(OP, TYPE, { otpType: "OTP_TYPE_EMAIL", contact: fresh(), appName: "Demo", otpLength: 6 }, { as: user! }));
      completed(
        await h().submit(OP, TYPE, { otpType: "OTP_TYPE_EMAIL", contact: fresh(), appName: "Demo", otpLength: 8 }, { as: user! }),
        initOtpAuthV3,
      );
      completed(await h().submit(OP, TYPE, { otpType: "OTP_TYPE_EMAIL", contact: fresh(), appName: "Demo" }, { as: user! }), initOtpAuthV3);
    });

    it("refuses the init_otp form errors and the older versions, naming V3", async () => {
      invalidRequest(await h().submit(OP, TYPE, { otpType: "OTP_TYPE_EMAIL", contact: "not-an-email", appName: "Demo" }), /contact/);
      invalidRequest(
        await h().submit(OP, TYPE, { otpType: "OTP_TYPE_EMAIL", contact: fresh(), appName: "Demo", otpLength: 4 }),
        /otpLength/,
      );
      for (const old of ["ACTIVITY_TYPE_INIT_OTP_AUTH", "ACTIVITY_TYPE_INIT_OTP_AUTH_V2"]) {
        invalidRequest(await h().submit(OP, old, { otpType: "OTP_TYPE_EMAIL", contact: fresh() }), /ACTIVITY_TYPE_INIT_OTP_AUTH_V3/);
      }
    });
  },
  undefined,
  s.options,
);
