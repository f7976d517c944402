import { after, it } from "node:test";
import assert from "node:assert/strict";
import { verifyOtpVerificationToken } from "@turnkey/crypto";
import {
  completed,
  exhausted,
  invalidRequest,
  notFound,
  newEndpoint,
  perEngine,
  precondition,
  twoOfTwo,
  type Harness,
  type Json,
  type Res,
} from "../helpers/inproc.ts";
import { codeFrom, encryptedCode, publishedKey, sinkPerHarness, startOtp } from "../helpers/smtp-sink.ts";
import { SECRET_PLACEHOLDER } from "../../src/activities/secret-params.ts";
import { initOtpV3 } from "../../src/activities/otp/init_otp.ts";
import { generateP256 } from "../../src/crypto/p256.ts";
import { DEFAULT_OTP_LIMITS } from "../../src/logins/settings.ts";
import { verifyOtpV2 } from "../../src/activities/otp/verify_otp.ts";

const OP = "verify_otp";
const V2 = "ACTIVITY_TYPE_VERIFY_OTP_V2";
const V1 = "ACTIVITY_TYPE_VERIFY_OTP";
const CONSENSUS = "ACTIVITY_STATUS_CONSENSUS_NEEDED";
let n = 0;
const fresh = () => `verify${++n}-${Date.now()}@example.com`;

async function otpRow(h: Harness, id: string) {
  return h.service.store.db.selectFrom("otps").select(["attempts", "status"]).where("id", "=", id).executeTakeFirstOrThrow();
}
/** The activity's row and its votes' messages, read from the engine's own tables. */
async function activityRow(h: Harness, id: string) {
  return h.service.store.db.selectFrom("activities").select(["intent"]).where("id", "=", id).executeTakeFirstOrThrow();
}
async function voteMessages(h: Harness, id: string): Promise<string[]> {
  return (await h.service.store.db.selectFrom("votes").select(["message"]).where("activity_id", "=", id).execute()).map((v) => v.message);
}
/** A code of the same form that is not `code`. */
const wrong = (code: string, i = 0) => {
  const alphabet = /^[0-9]+$/.test(code) ? "0123456789" : "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  const c = alphabet[(alphabet.indexOf(code[0]!) + 1 + i) % alphabet.length]!;
  return c + code.slice(1);
};
const invalidCode = (res: Res) => invalidRequest(res, /Invalid OTP code/);

const s = sinkPerHarness();
perEngine(
  "verify_otp",
  (h) => {
    after(s.stop);
    const submitCode = async (otpId: string, code: string, bundle: string, over: Record<string, unknown> = {}) =>
      h().submit(OP, V2, { otpId, encryptedOtpBundle: (await encryptedCode(h(), code, bundle)).encryptedOtpBundle, ...over });

    it("V2: the right code, encrypted as the SDK does, gives a verification token the SDK verifies, bound to the client key", async () => {
      const contact = fresh();
      const otp = await startOtp(h(), s.sink(), contact);
      const key = generateP256();
      const { encryptedOtpBundle } = await encryptedCode(h(), otp.code.toLowerCase(), otp.bundle, key);
      const t0 = Date.now();
      const res = await h().submit(OP, V2, { otpId: otp.otpId, encryptedOtpBundle, expirationSeconds: "600" });
      const { verificationToken } = completed(res, verifyOtpV2);
      const claims = await verifyOtpVerificationToken(verificationToken, await publishedKey(h(), "VERIFICATION_TOKEN"));
      assert.equal(claims.contact, contact);
      assert.equal(claims.verification_type, "OTP_TYPE_EMAIL");
      assert.equal(claims.public_key, key.publicCompressed);
      assert.equal(claims.organization_id, h().root.organizationId);
      const exp = Number(claims.exp);
      assert.ok(exp >= t0 + 590_000 && exp <= Date.now() + 600_000, `exp ${exp}`);
      assert.equal((await otpRow(h(), otp.otpId)).status, "verified");
      await assert.rejects(verifyOtpVerificationToken(verificationToken, generateP256().publicUncompressed));
    });

    it("V1: the code in plain with a publicKey gives a token bound to that key; without publicKey it is refused", async () => {
      const otp = await startOtp(h(), s.sink(), fresh());
      invalidRequest(await h().submit(OP, "ACTIVITY_TYPE_VERIFY_OTP", { otpId: otp.otpId, otpCode: otp.code }), /publicKey/, [
        "parameters.publicKey",
      ]);
      const key = generateP256();
      const res = await h().submit(OP, "ACTIVITY_TYPE_VERIFY_OTP", {
        otpId: otp.otpId,
        otpCode: otp.code,
        publicKey: key.publicCompressed,
      });
      const claims = await verifyOtpVerificationToken(
        completed(res, verifyOtpV2).verificationToken,
        await publishedKey(h(), "VERIFICATION_TOKEN"),
      );
      assert.equal(claims.public_key, key.publicCompressed);
    });

    it("3 wrong codes burn the OTP: each says Invalid OTP code and counts although the activity fails; then even the right code is refused", async () => {
      const otp = await startOtp(h(), s.sink(), fresh());
      for (let i = 1; i <= 3; i++) {
        const body = invalidCode(await submitCode(otp.otpId, wrong(otp.code, i), otp.bundle));
        assert.match(body.message, i < 3 ? new RegExp(`${3 - i} attempts? left`) : /locked/);
        assert.deepEqual(await otpRow(h(), otp.otpId), { attempts: i, status: i < 3 ? "live" : "burnt" });
      }
      invalidRequest(await submitCode(otp.otpId, otp.code, otp.bundle), /locked after 3 invalid codes/);
      // The failed attempts are recorded as FAILED activities; no token was issued.
      const tokens = await h().service.store.db.selectFrom("verification_tokens").select("id").where("otp_id", "=", otp.otpId).execute();
      assert.deepEqual(tokens, []);
    });

    it("concurrent wrong codes are all counted: 6 at once → exactly 3 'Invalid OTP code', the rest 'locked', the OTP burnt", async () => {
      const otp = await startOtp(h(), s.sink(), fresh());
      const bundles = await Promise.all(Array.from({ length: 6 }, (_, i) => encryptedCode(h(), wrong(otp.code, i), otp.bundle)));
      const results = await Promise.all(
        bundles.map((b) => h().submit(OP, V2, { otpId: otp.otpId, encryptedOtpBundle: b.encryptedOtpBundle })),
      );
      const messages = results.map((r) => String(r.json.message));
      assert.equal(messages.filter((m) => /^Invalid OTP code/.test(m)).length, 3, messages.join("\n"));
      assert.equal(messages.filter((m) => /this OTP is locked after 3/.test(m)).length, 3, messages.join("\n"));
      assert.deepEqual(await otpRow(h(), otp.otpId), { attempts: 3, status: "burnt" });
    });

    it("a code verifies once; two concurrent right answers give one token", async () => {
      const otp = await startOtp(h(), s.sink(), fresh());
      const results = await Promise.all([submitCode(otp.otpId, otp.code, otp.bundle), submitCode(otp.otpId, otp.code, otp.bundle)]);
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 400], JSON.stringify(results.map((r) => r.json.message)));
      invalidRequest(
        results.find((r) => r.status === 400)!,
        /already been verified/,
      );
      invalidRequest(await submitCode(otp.otpId, otp.code, otp.bundle), /already been verified/);
    });

    it("an expired OTP is refused clearly", async () => {
      const otp = await startOtp(h(), s.sink(), fresh(), { expirationSeconds: "1" });
      // Poll with a bundle that never decrypts (refused before it would count) until expiry.
      const deadline = Date.now() + 5000;
      let res: Res;
      do res = await h().submit(OP, V2, { otpId: otp.otpId, encryptedOtpBundle: "not yet" });
      while (!/expired/.test(String(res.json.message)) && Date.now() < deadline);
      invalidRequest(res, /expired/);
      invalidRequest(await submitCode(otp.otpId, otp.code, otp.bundle), /expired/);
    });

    it("verifying a code frees its place among the contact's 3 live codes; burning one does not (it counts until it expires)", async () => {
      const contact = fresh();
      const otps = [await startOtp(h(), s.sink(), contact), await startOtp(h(), s.sink(), contact), await startOtp(h(), s.sink(), contact)];
      const full = await h().submit("init_otp", "ACTIVITY_TYPE_INIT_OTP_V3", { otpType: "OTP_TYPE_EMAIL", contact, appName: "A" });
      assert.equal(full.status, 429);
      completed(await submitCode(otps[0]!.otpId, otps[0]!.code, otps[0]!.bundle), verifyOtpV2);
      await startOtp(h(), s.sink(), contact);
      for (let i = 0; i < 3; i++) invalidCode(await submitCode(otps[1]!.otpId, wrong(otps[1]!.code, i), otps[1]!.bundle));
      assert.equal((await otpRow(h(), otps[1]!.otpId)).status, "burnt");
      const again = await h().submit("init_otp", "ACTIVITY_TYPE_INIT_OTP_V3", { otpType: "OTP_TYPE_EMAIL", contact, appName: "A" });
      assert.equal(again.status, 429, JSON.stringify(again.json));
      assert.match(again.json.message, /3 live codes/);
    });

    it("an OTP belongs to its organization: verifying it from another one is 404", async () => {
      const otp = await startOtp(h(), s.sink(), fresh());
      const other = await h().newOrg("Elsewhere");
      const { encryptedOtpBundle } = await encryptedCode(h(), otp.code, otp.bundle);
      notFound(await h().submit(OP, V2, { otpId: otp.otpId, encryptedOtpBundle }, { as: other }), /no OTP/);
      assert.deepEqual(await otpRow(h(), otp.otpId), { attempts: 0, status: "live" });
    });

    it("a bundle that is not the SDK's encryption, or encrypted to another OTP, is 400 and does not count", async () => {
      const [a, b] = [await startOtp(h(), s.sink(), fresh()), await startOtp(h(), s.sink(), fresh())];
      invalidRequest(await h().submit(OP, V2, { otpId: a.otpId, encryptedOtpBundle: "garbage" }), /encryptedOtpBundle/, [
        "parameters.encryptedOtpBundle",
      ]);
      const toB = await encryptedCode(h(), a.code, b.bundle);
      invalidRequest(await h().submit(OP, V2, { otpId: a.otpId, encryptedOtpBundle: toB.encryptedOtpBundle }), /could not be decrypted/);
      assert.deepEqual(await otpRow(h(), a.otpId), { attempts: 0, status: "live" });
      invalidRequest(await submitCode(a.otpId, a.code, a.bundle, { expirationSeconds: "86401" }), /86400/);
      notFound(await submitCode("00000000-0000-4000-8000-000000000000", a.code, a.bundle), /no OTP/);
    });

    // docs/activities.md §10: a plain code is a secret parameter.
    it("V1: the recorded intent and vote hold the code sealed, never in plain; get_activity shows the placeholder", async () => {
      const otp = await startOtp(h(), s.sink(), fresh());
      const key = generateP256();
      const res = await h().submit(OP, V1, { otpId: otp.otpId, otpCode: otp.code, publicKey: key.publicCompressed });
      completed(res, verifyOtpV2);
      const id = res.json.activity.id as string;
      const row = await activityRow(h(), id);
      assert.ok(!row.intent.includes(otp.code), `intent ${row.intent}`);
      const recorded = JSON.parse(row.intent) as { otpCode: string; otpId: string };
      assert.match(recorded.otpCode, /^sgl1\./);
      assert.equal(recorded.otpId, otp.otpId);
      for (const v of await voteMessages(h(), id)) assert.ok(!v.includes(otp.code), `vote message ${v}`);
      assert.equal(res.json.activity.intent.verifyOtpIntent.otpCode, SECRET_PLACEHOLDER);
      const got = (await h().query("get_activity", { activityId: id })).json.activity;
      assert.equal(got.intent.verifyOtpIntent.otpCode, SECRET_PLACEHOLDER);
      assert.equal(got.intent.verifyOtpIntent.otpId, otp.otpId);
      assert.ok(!JSON.stringify(got).includes(otp.code));
      const listed = (await h().query("list_activities", {})).json.activities as Json[];
      assert.equal(listed.find((a) => a.id === id)?.intent.verifyOtpIntent.otpCode, SECRET_PLACEHOLDER);
      assert.ok(!JSON.stringify(listed).includes(otp.code));
    });

    it("V1: the webhook event's payload shows the placeholder", async () => {
      const org = await h().newOrg("Hooked");
      await newEndpoint(h(), org);
      const otp = await startOtp(h(), s.sink(), fresh(), {}, { as: org });
      const res = await h().submit(
        OP,
        V1,
        { otpId: otp.otpId, otpCode: otp.code, publicKey: generateP256().publicCompressed },
        { as: org },
      );
      completed(res, verifyOtpV2);
      const events = await h()
        .service.store.db.selectFrom("webhook_events")
        .select(["payload"])
        .where("activity_id", "=", res.json.activity.id)
        .execute();
      assert.equal(events.length, 1);
      assert.ok(!events[0]!.payload.includes(otp.code), events[0]!.payload);
      assert.equal(JSON.parse(events[0]!.payload).intent.verifyOtpIntent.otpCode, SECRET_PLACEHOLDER);
    });

    it("V1 awaiting consensus: executed on approval with the unsealed code; a sealed code copied into another activity does not open", async () => {
      const { a, b } = await twoOfTwo(h());
      const contact = fresh();
      const mark = s.sink().mark();
      const init = await h().submit(
        "init_otp",
        "ACTIVITY_TYPE_INIT_OTP_V3",
        { otpType: "OTP_TYPE_EMAIL", contact, appName: "Sigil Test" },
        { as: a },
      );
      assert.equal(init.json.activity?.status, CONSENSUS, JSON.stringify(init.json));
      const otpId = completed(
        await h().submit("approve_activity", "ACTIVITY_TYPE_APPROVE_ACTIVITY", { fingerprint: init.json.activity.fingerprint }, { as: b }),
        initOtpV3,
      ).otpId;
      const code = codeFrom(await s.sink().nextMail(contact, mark));
      const key = generateP256();
      const mine = await h().submit(OP, V1, { otpId, otpCode: code, publicKey: key.publicCompressed }, { as: a });
      assert.equal(mine.json.activity?.status, CONSENSUS, JSON.stringify(mine.json));
      // While it waits, the database and every reader hold no code.
      assert.ok(!(await activityRow(h(), mine.json.activity.id)).intent.includes(code));
      const seen = (await h().query("get_activity", { activityId: mine.json.activity.id }, { as: b })).json.activity;
      assert.equal(seen.intent.verifyOtpIntent.otpCode, SECRET_PLACEHOLDER);
      assert.ok(!JSON.stringify(seen).includes(code));
      // Another pending verify_otp (a wrong code) given the first one's sealed code: it must not open there.
      const other = await h().submit(OP, V1, { otpId, otpCode: wrong(code), publicKey: generateP256().publicCompressed }, { as: a });
      assert.equal(other.json.activity?.status, CONSENSUS, JSON.stringify(other.json));
      const sealed = (await activityRow(h(), mine.json.activity.id)).intent;
      await h().service.store.db.updateTable("activities").set({ intent: sealed }).where("id", "=", other.json.activity.id).execute();
      precondition(
        await h().submit("approve_activity", "ACTIVITY_TYPE_APPROVE_ACTIVITY", { fingerprint: other.json.activity.fingerprint }, { as: b }),
        /secret parameters do not open/,
      );
      assert.deepEqual(await otpRow(h(), otpId), { attempts: 0, status: "live" });
      // The approval executes the first with its own code, opened.
      const approved = await h().submit(
        "approve_activity",
        "ACTIVITY_TYPE_APPROVE_ACTIVITY",
        { fingerprint: mine.json.activity.fingerprint },
        { as: b },
      );
      const claims = await verifyOtpVerificationToken(
        completed(approved, verifyOtpV2).verificationToken,
        await publishedKey(h(), "VERIFICATION_TOKEN"),
      );
      assert.equal(claims.public_key, key.publicCompressed);
      assert.equal(claims.contact, contact);
      assert.deepEqual(await otpRow(h(), otpId), { attempts: 0, status: "verified" });
      assert.equal(approved.json.activity.intent.verifyOtpIntent.otpCode, SECRET_PLACEHOLDER);
      assert.ok(!(await activityRow(h(), mine.json.activity.id)).intent.includes(code));
    });
  },
  undefined,
  s.options,
);

// The contact's guess window (docs/otp-limits-and-mail.md §2.1) with small limits: 2 wrong codes per second.
const small = sinkPerHarness({ otpLimits: { ...DEFAULT_OTP_LIMITS, guessesPerContact: 2, guessWindowSeconds: 1 } });
perEngine(
  "verify_otp guess window",
  (h) => {
    after(small.stop);
    it("with the contact's guesses used up the right code is 429 and counts nothing; once the window passes it verifies", async () => {
      const otp = await startOtp(h(), small.sink(), fresh());
      const submit = async (code: string) =>
        h().submit(OP, V2, { otpId: otp.otpId, encryptedOtpBundle: (await encryptedCode(h(), code, otp.bundle)).encryptedOtpBundle });
      for (let i = 0; i < 2; i++) invalidCode(await submit(wrong(otp.code, i)));
      exhausted(await submit(otp.code), /Too many invalid OTP codes for this contact \(2 per 1 second\)/);
      assert.deepEqual(await otpRow(h(), otp.otpId), { attempts: 2, status: "live" });
      // Poll (bounded) until the first wrong guess leaves the 1-second window.
      const deadline = Date.now() + 5000;
      let res: Res;
      do res = await submit(otp.code);
      while (res.status === 429 && Date.now() < deadline);
      completed(res, verifyOtpV2);
      assert.deepEqual(await otpRow(h(), otp.otpId), { attempts: 2, status: "verified" });
    });
  },
  undefined,
  small.options,
);
