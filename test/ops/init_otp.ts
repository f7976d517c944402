import { after, it } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { encryptOtpCodeToBundle } from "@turnkey/crypto";
import { completed, exhausted, failsWith, invalidRequest, perEngine, UUID, type Harness, type Json } from "../helpers/inproc.ts";
import { otpSignerKey, refusedPort, sinkPerHarness, startOtp, TEST_FROM } from "../helpers/smtp-sink.ts";
import { DEFAULT_LOGIN_SETTINGS } from "../../src/logins/settings.ts";
import { smsHttpTransport, smtpTransport } from "../../src/logins/otp/transports/index.ts";
import { generateP256 } from "../../src/crypto/p256.ts";
import { createSubOrganizationV8 } from "../../src/activities/organizations/create_sub_organization.ts";
import { initOtpV2 } from "../../src/activities/otp/init_otp.ts";

const OP = "init_otp";
const V3 = "ACTIVITY_TYPE_INIT_OTP_V3";
let n = 0;
const fresh = () => `user${++n}-${Date.now()}@example.com`;
const email = (contact: string, over: Json = {}) => ({ otpType: "OTP_TYPE_EMAIL", contact, appName: "Sigil Test", ...over });

/** The number of activities recorded in the root organization (nothing recorded = unchanged). */
async function activityCount(h: Harness): Promise<number> {
  const r = await h.service.store.db
    .selectFrom("activities")
    .select((eb) => eb.fn.countAll().as("n"))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}
async function otpRows(h: Harness, contact: string): Promise<number> {
  const r = await h.service.store.db
    .selectFrom("otps")
    .select((eb) => eb.fn.countAll().as("n"))
    .where("contact_normalized", "=", contact.toLowerCase())
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

const s = sinkPerHarness();
perEngine(
  "init_otp",
  (h) => {
    after(s.stop);

    it("V3 mails a code and returns a target bundle signed by the published OTP key, which the SDK encrypts to", async () => {
      const contact = fresh();
      // From and Reply-To in the operator's sender domain (by default SIGIL_SMTP_FROM's: sigil.test).
      const otp = await startOtp(h(), s.sink(), contact, {
        sendFromEmailAddress: "login@sigil.test",
        sendFromEmailSenderName: "Shop Login",
        replyToEmailAddress: "help@sigil.test",
        otpLength: 6,
        alphanumeric: false,
        emailCustomization: { magicLinkTemplate: "https://shop.example/otp?c=%s", logoUrl: "https://shop.example/logo.png" },
      });
      assert.match(otp.otpId, UUID);
      assert.match(otp.code, /^[0-9]{6}$/);
      assert.equal(otp.mail.text.split(/\r?\n/)[0], otp.code, "the text part starts with the code");
      assert.match(otp.mail.subject, /Sigil Test/);
      assert.match(otp.mail.headers.get("from")!, /Shop Login.*login@sigil\.test/);
      assert.match(otp.mail.headers.get("reply-to")!, /help@sigil\.test/);
      assert.ok(otp.mail.text.includes(`https://shop.example/otp?c=${otp.code}`));
      assert.ok(otp.mail.html.includes("https://shop.example/logo.png"));
      const signer = await otpSignerKey(h());
      assert.equal(JSON.parse(otp.bundle).enclaveQuorumPublic, signer);
      // The SDK checks the signature before encrypting; a wrong expected key fails.
      await encryptOtpCodeToBundle(otp.code, otp.bundle, generateP256().publicCompressed, signer);
      await assert.rejects(
        encryptOtpCodeToBundle(otp.code, otp.bundle, generateP256().publicCompressed, generateP256().publicUncompressed),
      );
      // The default sender and 9-character Crockford code.
      const plain = await startOtp(h(), s.sink(), fresh());
      assert.match(plain.code, /^[0-9A-HJKMNP-TV-Z]{9}$/);
      assert.match(plain.mail.headers.get("from")!, /otp@sigil\.test/);
      // The database holds neither the code nor the target key in plain.
      const row = await h().service.store.db.selectFrom("otps").selectAll().where("id", "=", plain.otpId).executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(row).includes(plain.code));
      assert.equal(row.status, "live");
    });

    it("V2 and V1 (the older versions) return only an otpId, and mail a code", async () => {
      for (const [type, params] of [
        ["ACTIVITY_TYPE_INIT_OTP_V2", email(fresh())],
        ["ACTIVITY_TYPE_INIT_OTP", { otpType: "OTP_TYPE_EMAIL", contact: fresh(), emailCustomization: { appName: "Legacy App" } }],
      ] as const) {
        const mark = s.sink().mark();
        const r = completed(await h().submit(OP, type, params), initOtpV2);
        assert.deepEqual(Object.keys(r), ["otpId"]);
        const mail = await s.sink().nextMail(params.contact, mark);
        assert.match(mail.text, /^[0-9A-Z]{9}\r?\n/);
        assert.match(
          mail.subject,
          type === "ACTIVITY_TYPE_INIT_OTP" ? /Your Legacy App verification code/ : /Your Sigil Test verification code/,
        );
      }
    });

    it(`a 4th initiation while 3 codes for the contact are live is 429 "Max number of OTPs have been initiated"; any case counts as the same contact`, async () => {
      const contact = fresh();
      for (let i = 0; i < 3; i++) await startOtp(h(), s.sink(), i === 1 ? contact.toUpperCase() : contact);
      const before = await activityCount(h());
      const mark = s.sink().mark();
      exhausted(await h().submit(OP, V3, email(contact)), /Max number of OTPs have been initiated/);
      assert.equal(await activityCount(h()), before, "nothing recorded");
      assert.equal(await otpRows(h(), contact), 3);
      assert.equal(s.sink().mails.length, mark, "no 4th mail");
      // Another contact, or the same contact in another organization, is not affected.
      await startOtp(h(), s.sink(), fresh());
    });

    it("8 concurrent initiations for one contact: exactly 3 succeed", async () => {
      const contact = fresh();
      const results = await Promise.all(Array.from({ length: 8 }, () => h().submit(OP, V3, email(contact))));
      const ok = results.filter((r) => r.status === 200);
      assert.equal(ok.length, 3, JSON.stringify(results.map((r) => [r.status, r.json.message])));
      for (const r of results.filter((x) => x.status !== 200)) exhausted(r, /Max number of OTPs have been initiated/);
      assert.equal(await otpRows(h(), contact), 3);
    });

    it("with userIdentifier: at most 3 initiations per identifier per 3 minutes, whatever the contact", async () => {
      const userIdentifier = `ip-hash-${Date.now()}-${Math.random()}`;
      for (let i = 0; i < 3; i++) await startOtp(h(), s.sink(), fresh(), { userIdentifier });
      const before = await activityCount(h());
      exhausted(
        await h().submit(OP, V3, email(fresh(), { userIdentifier })),
        /Max number of OTPs have been initiated for this userIdentifier/,
      );
      assert.equal(await activityCount(h()), before);
      await startOtp(h(), s.sink(), fresh(), { userIdentifier: `${userIdentifier}-other` });
    });

    const refused: [string, Json, RegExp, string][] = [
      ["an email contact that is not an address", email("not-an-email"), /valid email/, "parameters.contact"],
      ["an SMS contact that is not E.164", { otpType: "OTP_TYPE_SMS", contact: "555-1234", appName: "A" }, /E\.164/, "parameters.contact"],
      [
        "WhatsApp",
        { otpType: "OTP_TYPE_WHATSAPP", contact: "+14155550100", appName: "A" },
        /OTP_TYPE_EMAIL or OTP_TYPE_SMS/,
        "parameters.otpType",
      ],
      ["otpLength 5", email("a@example.com", { otpLength: 5 }), /otpLength/, "parameters.otpLength"],
      ["otpLength 10", email("a@example.com", { otpLength: 10 }), /otpLength/, "parameters.otpLength"],
      ["expirationSeconds 601", email("a@example.com", { expirationSeconds: "601" }), /600/, "parameters.expirationSeconds"],
      ["expirationSeconds 0", email("a@example.com", { expirationSeconds: "0" }), /600/, "parameters.expirationSeconds"],
      [
        "a magic link without %s",
        email("a@example.com", { emailCustomization: { magicLinkTemplate: "https://x.example/" } }),
        /%s/,
        "parameters.emailCustomization.magicLinkTemplate",
      ],
      [
        "templateVariables that are not a JSON object",
        email("a@example.com", { emailCustomization: { templateVariables: "[1]" } }),
        /JSON object/,
        "parameters.emailCustomization.templateVariables",
      ],
      [
        "an SMS template without {{.OtpCode}}",
        { otpType: "OTP_TYPE_SMS", contact: "+14155550100", appName: "A", smsCustomization: { template: "hi" } },
        /OtpCode/,
        "parameters.smsCustomization.template",
      ],
      ["V3 without appName", { otpType: "OTP_TYPE_EMAIL", contact: "a@example.com" }, /appName/, "parameters.appName"],
    ];
    for (const [what, params, message, field] of refused) {
      it(`refuses ${what} (400)`, async () => {
        invalidRequest(await h().submit(OP, V3, params), message, [field]);
      });
    }

    it("a parent's API key initiates an OTP in its sub-organization (parentMayStamp)", async () => {
      const sub = await h().submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
        subOrganizationName: "otp-child",
        rootQuorumThreshold: 1,
        rootUsers: [{ userName: "c", userEmail: "child@example.com", apiKeys: [], authenticators: [], oauthProviders: [] }],
      });
      const subId = completed(sub, createSubOrganizationV8).subOrganizationId;
      const otp = await startOtp(h(), s.sink(), "child@example.com", {}, { organizationId: subId });
      const row = await h()
        .service.store.db.selectFrom("otps")
        .select("organization_id")
        .where("id", "=", otp.otpId)
        .executeTakeFirstOrThrow();
      assert.equal(row.organization_id, subId);
    });
  },
  undefined,
  s.options,
);

perEngine("init_otp without a configured channel", (h) => {
  it("email: 400 FAILED_PRECONDITION EMAIL_SENDING_DISABLED; SMS: 400 FAILED_PRECONDITION naming SIGIL_SMS_URL; nothing recorded", async () => {
    const before = await activityCount(h());
    failsWith(await h().submit(OP, V3, email("a@example.com")), 400, 9, "EMAIL_SENDING_DISABLED", /SMTP_URL/);
    failsWith(
      await h().submit(OP, V3, { otpType: "OTP_TYPE_SMS", contact: "+14155550100", appName: "A" }),
      400,
      9,
      "REQUEST_INVALID",
      /SIGIL_SMS_URL/,
    );
    assert.equal(await activityCount(h()), before);
    assert.equal(await otpRows(h(), "a@example.com"), 0);
  });
});

// A mail server that is down (connection refused) and one that accepts but never greets.
let silent: net.Server | undefined;
const silentSockets = new Set<net.Socket>();
perEngine(
  "init_otp when the mail server is down",
  (h) => {
    it("503 UNAVAILABLE, nothing recorded, no slot taken (3 more initiations still fail the same way, not with 429)", async () => {
      const before = await activityCount(h());
      for (let i = 0; i < 4; i++) {
        failsWith(await h().submit(OP, V3, email("down@example.com")), 503, 14, "UNSPECIFIED", /could not deliver the OTP email/);
      }
      assert.equal(await activityCount(h()), before);
      assert.equal(await otpRows(h(), "down@example.com"), 0);
      const slots = await h().service.store.db.selectFrom("limit_slots").selectAll().where("until", ">", Date.now()).execute();
      assert.deepEqual(slots, []);
    });
  },
  undefined,
  async () => ({
    logins: { ...DEFAULT_LOGIN_SETTINGS, email: smtpTransport({ url: `smtp://127.0.0.1:${await refusedPort()}`, from: TEST_FROM }) },
  }),
);

perEngine(
  "init_otp when the mail server never answers",
  (h) => {
    after(() => {
      for (const c of silentSockets) c.destroy();
      return new Promise<void>((r) => (silent ? silent.close(() => r()) : r()));
    });
    it("gives up within the transport's timeout: 503, nothing recorded", async () => {
      const t0 = Date.now();
      failsWith(await h().submit(OP, V3, email("slow@example.com")), 503, 14, "UNSPECIFIED", /within 1500 ms|could not deliver/);
      assert.ok(Date.now() - t0 < 5000, `took ${Date.now() - t0} ms`);
      assert.equal(await otpRows(h(), "slow@example.com"), 0);
    });
  },
  ["sqlite"],
  async () => {
    silent = net.createServer((c) => silentSockets.add(c));
    await new Promise<void>((r) => silent!.listen(0, "127.0.0.1", () => r()));
    const port = (silent.address() as net.AddressInfo).port;
    return {
      logins: { ...DEFAULT_LOGIN_SETTINGS, email: smtpTransport({ url: `smtp://127.0.0.1:${port}`, from: TEST_FROM, timeoutMs: 1500 }) },
    };
  },
);

// SMS through a Twilio-compatible endpoint: a form POST with basic auth; non-2xx fails.
interface SmsHit {
  auth: string | undefined;
  form: URLSearchParams;
}
const smsHits: SmsHit[] = [];
let smsStatus = 201;
let smsServer: http.Server | undefined;
perEngine(
  "init_otp by SMS",
  (h) => {
    after(() => new Promise<void>((r) => (smsServer ? smsServer.close(() => r()) : r())));
    it("posts To, From and Body (the template with the code) with basic auth", async () => {
      const r = completed(
        await h().submit(OP, V3, {
          otpType: "OTP_TYPE_SMS",
          contact: "+14155550123",
          appName: "A",
          otpLength: 7,
          alphanumeric: false,
          smsCustomization: { template: "Your code: {{.OtpCode}}" },
        }),
        "initOtpResultV2",
      );
      assert.match(r.otpId, UUID);
      const hit = smsHits.at(-1)!;
      assert.equal(hit.auth, `Basic ${Buffer.from("acct:secret").toString("base64")}`);
      assert.equal(hit.form.get("To"), "+14155550123");
      assert.equal(hit.form.get("From"), "+15005550006");
      assert.match(hit.form.get("Body")!, /^Your code: [0-9]{7}$/);
    });
    it("a gateway error (non-2xx) is 503 and nothing is recorded", async () => {
      smsStatus = 500;
      const before = await activityCount(h());
      failsWith(
        await h().submit(OP, V3, { otpType: "OTP_TYPE_SMS", contact: "+14155550124", appName: "A" }),
        503,
        14,
        "UNSPECIFIED",
        /HTTP 500/,
      );
      assert.equal(await activityCount(h()), before);
      smsStatus = 201;
    });
  },
  ["sqlite"],
  async () => {
    smsServer = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        smsHits.push({ auth: req.headers.authorization, form: new URLSearchParams(body) });
        res.writeHead(smsStatus, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((r) => smsServer!.listen(0, "127.0.0.1", () => r()));
    const url = `http://127.0.0.1:${(smsServer.address() as net.AddressInfo).port}/2010-04-01/Accounts/acct/Messages.json`;
    return {
      logins: {
        ...DEFAULT_LOGIN_SETTINGS,
        sms: smsHttpTransport({ url, from: "+15005550006", username: "acct", password: "secret", timeoutMs: 2000 }),
      },
    };
  },
);
