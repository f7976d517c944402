// otp_auth (docs/logins.md §9.5): the code from init_otp_auth, checked as verify_otp checks
// it, logs its contact's user in with a credential bundle sealed to targetPublicKey. Wrong
// codes count and burn the OTP; a code serves once.
import { after, it } from "node:test";
import assert from "node:assert/strict";
import { completed, forbidden, invalidRequest, notFound, perEngine, type Creds, type Harness } from "../helpers/inproc.ts";
import { codeFrom, sinkPerHarness, type SmtpSink } from "../helpers/smtp-sink.ts";
import { openBundle, subOrgWithEmail, targetKey } from "../helpers/credential-bundles.ts";
import { initOtpAuthV3 } from "../../src/activities/otp/init_otp_auth.ts";
import { otpAuth } from "../../src/activities/otp/otp_auth.ts";
import { createSessionProfile } from "../../src/activities/sessions/create_session_profile.ts";
import { stampLogin } from "../../src/activities/sessions/stamp_login.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";

const OP = "otp_auth";
const TYPE = "ACTIVITY_TYPE_OTP_AUTH";
let n = 0;
const fresh = () => `otpauth${++n}-${Date.now()}@example.com`;

async function started(
  h: Harness,
  sink: SmtpSink,
  email: string,
  organizationId: string,
  as?: Creds,
): Promise<{ otpId: string; code: string }> {
  const mark = sink.mark();
  const res = await h.submit(
    "init_otp_auth",
    "ACTIVITY_TYPE_INIT_OTP_AUTH_V3",
    { otpType: "OTP_TYPE_EMAIL", contact: email, appName: "Demo" },
    { organizationId, ...(as ? { as } : {}) },
  );
  return { otpId: completed(res, initOtpAuthV3).otpId, code: codeFrom(await sink.nextMail(email, mark)) };
}

const s = sinkPerHarness();
perEngine(
  "otp_auth",
  (h) => {
    after(s.stop);

    it("the right code yields a credential bundle for the contact's user; it opens with @turnkey/crypto and stamps whoami", async () => {
      const email = fresh();
      const user = await subOrgWithEmail(h(), email);
      const otp = await started(h(), s.sink(), email, user.orgId);
      const target = targetKey();
      const r = completed(
        await h().submit(
          OP,
          TYPE,
          { otpId: otp.otpId, otpCode: otp.code, targetPublicKey: target.publicKey, expirationSeconds: "300" },
          { organizationId: user.orgId },
        ),
        otpAuth,
      );
      assert.equal(r.userId, user.userId);
      const credential = openBundle(r.credentialBundle, target);
      const who = await h().query("whoami", {}, { as: { organizationId: user.orgId, userId: user.userId, key: credential } });
      assert.equal(who.status, 200, JSON.stringify(who.json));
      assert.equal(who.json.userId, user.userId);
      // A code serves once.
      invalidRequest(
        await h().submit(
          OP,
          TYPE,
          { otpId: otp.otpId, otpCode: otp.code, targetPublicKey: targetKey().publicKey },
          { organizationId: user.orgId },
        ),
        /already been verified/,
      );
    });

    it("submitted by a session with a profile, the credential keeps that profile: a scoped session never mints an unscoped one", async () => {
      const email = fresh();
      const user = await subOrgWithEmail(h(), email);
      // The parent's profile (visible below it), taken by the end user's own login.
      const profileId = completed(
        await h().submit("create_session_profile", "ACTIVITY_TYPE_CREATE_SESSION_PROFILE", {
          sessionProfileName: `otp auth only ${n}`,
          scope: "activity.kind == 'INIT_OTP_AUTH' || activity.kind == 'OTP_AUTH'",
        }),
        createSessionProfile,
      ).sessionProfileId;
      const login = generateP256KeyPair();
      const own: Creds = { organizationId: user.orgId, userId: user.userId, key: user.key };
      completed(
        await h().submit(
          "stamp_login",
          "ACTIVITY_TYPE_STAMP_LOGIN",
          { publicKey: login.publicKey, sessionProfileId: profileId },
          { as: own },
        ),
        stampLogin,
      );
      const scoped: Creds = { ...own, key: login };
      forbidden(
        await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "t0", userIds: [] }, { as: scoped }),
        /session's scope/,
      );
      const otp = await started(h(), s.sink(), email, user.orgId, scoped);
      const target = targetKey();
      const r = completed(
        await h().submit(OP, TYPE, { otpId: otp.otpId, otpCode: otp.code, targetPublicKey: target.publicKey }, { as: scoped }),
        otpAuth,
      );
      const credential: Creds = { organizationId: user.orgId, userId: user.userId, key: openBundle(r.credentialBundle, target) };
      const keys = (await h().query("get_api_keys", { userId: user.userId }, { as: own })).json.apiKeys as {
        apiKeyId: string;
        credential: { sessionProfileId?: string };
      }[];
      assert.equal(keys.find((k) => k.apiKeyId === r.apiKeyId)?.credential.sessionProfileId, profileId);
      forbidden(
        await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "t1", userIds: [] }, { as: credential }),
        /session's scope/,
      );
    });

    it("wrong codes count (the third burns the OTP); nothing is issued", async () => {
      const email = fresh();
      const user = await subOrgWithEmail(h(), email);
      const otp = await started(h(), s.sink(), email, user.orgId);
      const wrong = otp.code === "000000000" ? "111111111" : "000000000";
      invalidRequest(
        await h().submit(
          OP,
          TYPE,
          { otpId: otp.otpId, otpCode: wrong, targetPublicKey: targetKey().publicKey },
          { organizationId: user.orgId },
        ),
        /Invalid OTP code: 2 attempts left/,
      );
      invalidRequest(
        await h().submit(
          OP,
          TYPE,
          { otpId: otp.otpId, otpCode: wrong, targetPublicKey: targetKey().publicKey },
          { organizationId: user.orgId },
        ),
        /1 attempt left/,
      );
      invalidRequest(
        await h().submit(
          OP,
          TYPE,
          { otpId: otp.otpId, otpCode: wrong, targetPublicKey: targetKey().publicKey },
          { organizationId: user.orgId },
        ),
        /now locked/,
      );
      invalidRequest(
        await h().submit(
          OP,
          TYPE,
          { otpId: otp.otpId, otpCode: otp.code, targetPublicKey: targetKey().publicKey },
          { organizationId: user.orgId },
        ),
        /locked/,
      );
      const keys = await h()
        .service.store.db.selectFrom("api_keys")
        .select("id")
        .where("user_id", "=", user.userId)
        .where("credential_type", "=", "CREDENTIAL_TYPE_LOGIN")
        .execute();
      assert.equal(keys.length, 0);
    });

    it("a code for a contact no user of the organization has is 404, and the code stays usable; a bad target key is 400", async () => {
      const email = fresh();
      const user = await subOrgWithEmail(h(), fresh());
      const otp = await started(h(), s.sink(), email, user.orgId);
      notFound(
        await h().submit(
          OP,
          TYPE,
          { otpId: otp.otpId, otpCode: otp.code, targetPublicKey: targetKey().publicKey },
          { organizationId: user.orgId },
        ),
        /no user with the verified email/,
      );
      const row = await h().service.store.db.selectFrom("otps").select("status").where("id", "=", otp.otpId).executeTakeFirstOrThrow();
      assert.equal(row.status, "live");
      invalidRequest(
        await h().submit(OP, TYPE, { otpId: otp.otpId, otpCode: otp.code, targetPublicKey: "zz" }, { organizationId: user.orgId }),
        /targetPublicKey/,
      );
    });
  },
  undefined,
  s.options,
);
