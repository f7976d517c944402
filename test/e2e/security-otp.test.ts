// OTP limits and whose content OTP messages carry (docs/otp-limits-and-mail.md), end to end:
// a child-process server on each engine with a real SMTP server (SMTP_URL) and a real HTTP
// SMS gateway (SIGIL_SMS_URL), driven through @turnkey/sdk-server's apiClient — the app's
// backend (the top-level organization's key from `sigil init`) and two end users, each root
// of their own sub-organization with an API key. Raw stamped requests (the stamper the SDK
// uses) only where the SDK hides what is checked: the Retry-After header.
//
// The server runs with small limits where that keeps the tests short (4 initiations per
// contact per hour, 6 messages per mailbox per hour, 40 messages per organization tree per
// hour) and with the default guess limit (5 wrong codes per contact per 15 minutes).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type net from "node:net";
import { Turnkey } from "@turnkey/sdk-server";
import { encryptOtpCodeToBundle } from "@turnkey/crypto";
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
import { SmtpSink, codeFrom, discoveredKeys, type Mail } from "../helpers/smtp-sink.ts";
import { goodStamp, newKeyPair, type KeyPair } from "../helpers/raw-http.ts";
import { generateP256 } from "../../src/crypto/p256.ts";
import { loadConfig } from "../../src/config.ts";

const APP = "Acme Wallet";
const LIMITS = {
  SIGIL_OTP_INITIATIONS_PER_CONTACT_PER_HOUR: "4",
  SIGIL_OTP_SENDS_PER_RECIPIENT_PER_HOUR: "6",
  SIGIL_OTP_SENDS_PER_ORGANIZATION_PER_HOUR: "40",
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Client = any;
interface Raw {
  status: number;
  retryAfter: string | null;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

/** A code of the same form that is not `code`. */
const wrongCode = (code: string, i = 0) => {
  const alphabet = /^[0-9]+$/.test(code) ? "0123456789" : "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  return alphabet[(alphabet.indexOf(code[0]!) + 1 + i) % alphabet.length]! + code.slice(1);
};

/** The field names of a 400's BadRequest detail. */
const violationFields = (details: unknown): string[] =>
  ((details as { fieldViolations?: { field: string }[] }[] | null) ?? []).flatMap((d) => (d.fieldViolations ?? []).map((v) => v.field));

for (const spec of engines()) {
  describe(`OTP limits and message content [${spec.name}]`, { skip: spec.skip }, () => {
    let inst: Instance;
    let server: RunningServer;
    let sink: SmtpSink;
    let smsServer: http.Server;
    const sms: { to: string; body: string }[] = [];
    let init: InitResult;
    let backend: Client;
    let otpKey: string;
    const users: { orgId: string; key: KeyPair; client: Client }[] = [];

    before(async () => {
      sink = await SmtpSink.start();
      smsServer = http.createServer((req, res) => {
        let body = "";
        req.on("data", (c: Buffer) => (body += c.toString()));
        req.on("end", () => {
          const form = new URLSearchParams(body);
          sms.push({ to: form.get("To") ?? "", body: form.get("Body") ?? "" });
          res.writeHead(201, { "content-type": "application/json" }).end("{}");
        });
      });
      await new Promise<void>((r) => smsServer.listen(0, "127.0.0.1", () => r()));
      inst = await newInstance(spec.name, {
        SMTP_URL: sink.url,
        SIGIL_SMTP_FROM: "Sigil <otp@sigil.test>",
        SIGIL_SMS_URL: `http://127.0.0.1:${(smsServer.address() as net.AddressInfo).port}/Messages.json`,
        SIGIL_SMS_FROM: "+15005550006",
        ...LIMITS,
      });
      init = await sigilInit(inst, ["--name", APP]);
      server = await startServer(inst);
      backend = new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: init.apiPublicKey,
        apiPrivateKey: init.apiPrivateKey,
        defaultOrganizationId: init.organizationId,
      }).apiClient();
      otpKey = (await discoveredKeys(server.url)).otp;
      // Two end users, each root of their own sub-organization with an API key of their own.
      for (const name of ["mallory", "trudy"]) {
        const key = newKeyPair();
        const sub = await backend.createSubOrganization({
          subOrganizationName: `${name}'s wallet`,
          rootQuorumThreshold: 1,
          rootUsers: [
            {
              userName: name,
              apiKeys: [{ apiKeyName: "own", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
              authenticators: [],
              oauthProviders: [],
            },
          ],
        });
        const client = new Turnkey({
          apiBaseUrl: server.url,
          apiPublicKey: key.publicKey,
          apiPrivateKey: key.privateKey,
          defaultOrganizationId: sub.subOrganizationId,
        }).apiClient();
        users.push({ orgId: sub.subOrganizationId, key, client });
      }
    });
    after(async () => {
      await server?.stop();
      await sink?.stop();
      await new Promise<void>((r) => (smsServer ? smsServer.close(() => r()) : r()));
      await inst?.cleanup();
    });

    const backendKey = (): KeyPair => ({ publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey });
    /** A submit exactly as the SDK builds and stamps it, answering status, Retry-After and body. */
    async function submitRaw(key: KeyPair, organizationId: string, op: string, type: string, parameters: object): Promise<Raw> {
      const body = JSON.stringify({ parameters, organizationId, timestampMs: String(Date.now()), type });
      const res = await fetch(`${server.url}/public/v1/submit/${op}`, {
        method: "POST",
        body,
        headers: { "content-type": "application/json", "X-Stamp": await goodStamp(key, body) },
      });
      return { status: res.status, retryAfter: res.headers.get("retry-after"), json: await res.json() };
    }
    /** init_otp V3 by email through `client` in `organizationId`; the code from the mail. */
    async function started(
      client: Client,
      organizationId: string,
      contact: string,
      over: object = {},
    ): Promise<{ otpId: string; bundle: string; code: string; mail: Mail }> {
      const mark = sink.mark();
      const r = await client.initOtp({ organizationId, otpType: "OTP_TYPE_EMAIL", contact, appName: "Some App", ...over });
      const mail = await sink.nextMail(contact, mark);
      return { otpId: r.otpId, bundle: r.otpEncryptionTargetBundle, code: codeFrom(mail), mail };
    }
    const encrypted = (code: string, bundle: string) => encryptOtpCodeToBundle(code, bundle, generateP256().publicCompressed, otpKey);
    /** A 429 RESOURCE_EXHAUSTED whose Retry-After is whole seconds in [min, max]. */
    function limited(r: Raw, message: RegExp, min: number, max: number): void {
      assert.equal(r.status, 429, JSON.stringify(r.json));
      assert.equal(r.json.code, 8);
      assert.equal(r.json.details?.[0]?.turnkeyErrorCode, "RATE_LIMIT_EXCEEDED");
      assert.match(r.json.message, message);
      assert.match(r.retryAfter ?? "", /^[0-9]+$/, "a Retry-After header");
      const s = Number(r.retryAfter);
      assert.ok(s >= min && s <= max, `Retry-After ${s} not in [${min}, ${max}]`);
    }

    it("defaults: 5 wrong codes per contact per 15 minutes, 10 initiations per contact and 10 messages per mailbox per hour, 1000 per organization tree; From/Reply-To in SIGIL_SMTP_FROM's domain", async () => {
      const c = loadConfig({});
      assert.deepEqual(
        [
          c.otpGuessesPerContact,
          c.otpGuessWindowSeconds,
          c.otpInitiationsPerContactPerHour,
          c.otpSendsPerRecipientPerHour,
          c.otpSendsPerOrganizationPerHour,
        ],
        [5, 900, 10, 10, 1000],
      );
      // Loaded here, not at the top: a file that does not import stays a failure of this test alone.
      const { allowedSenderDomains } = await import("../../src/activities/otp/otp-content.ts");
      const { loginSettingsFrom } = await import("../../src/logins/configure.ts");
      const quiet = { info() {}, warn() {} };
      const settings = (env: NodeJS.ProcessEnv) => loginSettingsFrom(loadConfig({ SMTP_URL: "smtp://127.0.0.1:2525", ...env }), quiet);
      assert.deepEqual(allowedSenderDomains(settings({ SIGIL_SMTP_FROM: "Acme <login@Mail.Acme.example>" })), ["mail.acme.example"]);
      assert.deepEqual(allowedSenderDomains(settings({ SIGIL_MAIL_SENDER_DOMAINS: "acme.example, Login.Acme.example" })), [
        "acme.example",
        "login.acme.example",
      ]);
      assert.throws(() => loadConfig({ SIGIL_MAIL_SENDER_DOMAINS: "*.acme.example" }), /SIGIL_MAIL_SENDER_DOMAINS/);
      assert.throws(() => loadConfig({ SIGIL_OTP_GUESSES_PER_CONTACT: "0" }), /SIGIL_OTP_GUESSES_PER_CONTACT/);
    });

    it("wrong codes are limited per contact across codes and organizations (default 5 per 15 min); after the 5th even the right code is refused: 429 with Retry-After", async () => {
      const contact = "guess.victim@example.com";
      const [mallory, trudy] = users;
      // 3 wrong codes burn a code of the app's own organization...
      const a = await started(backend, init.organizationId, contact);
      for (let i = 0; i < 3; i++) {
        await assert.rejects(
          backend.verifyOtp({
            organizationId: init.organizationId,
            otpId: a.otpId,
            encryptedOtpBundle: await encrypted(wrongCode(a.code, i), a.bundle),
          }),
          /Invalid OTP code/,
        );
      }
      // ...a fresh code in an end user's sub-organization takes 2 more...
      const b = await started(mallory!.client, mallory!.orgId, contact);
      for (let i = 0; i < 2; i++) {
        await assert.rejects(
          mallory!.client.verifyOtp({
            organizationId: mallory!.orgId,
            otpId: b.otpId,
            encryptedOtpBundle: await encrypted(wrongCode(b.code, i), b.bundle),
          }),
          /Invalid OTP code/,
        );
      }
      // ...and now no code for the contact is checked: not b's right one,
      const right = await submitRaw(mallory!.key, mallory!.orgId, "verify_otp", "ACTIVITY_TYPE_VERIFY_OTP_V2", {
        otpId: b.otpId,
        encryptedOtpBundle: await encrypted(b.code, b.bundle),
      });
      limited(right, /Too many invalid OTP codes for this contact \(5 per 15 minutes\)/, 1, 900);
      const viaSdk = await rejection(
        mallory!.client.verifyOtp({
          organizationId: mallory!.orgId,
          otpId: b.otpId,
          encryptedOtpBundle: await encrypted(b.code, b.bundle),
        }),
      );
      assert.equal(viaSdk.code, 8);
      // not a new code's in another sub-organization (the count is the contact's, not the code's or the tenant's),
      const c = await started(trudy!.client, trudy!.orgId, contact);
      limited(
        await submitRaw(trudy!.key, trudy!.orgId, "verify_otp", "ACTIVITY_TYPE_VERIFY_OTP_V2", {
          otpId: c.otpId,
          encryptedOtpBundle: await encrypted(c.code, c.bundle),
        }),
        /Too many invalid OTP codes/,
        1,
        900,
      );
      // and not through the plain-code version either. Another contact is not affected.
      limited(
        await submitRaw(trudy!.key, trudy!.orgId, "verify_otp", "ACTIVITY_TYPE_VERIFY_OTP", {
          otpId: c.otpId,
          otpCode: c.code,
          publicKey: generateP256().publicCompressed,
        }),
        /Too many invalid OTP codes/,
        1,
        900,
      );
      const other = await started(trudy!.client, trudy!.orgId, "someone.else@example.com");
      const ok = await trudy!.client.verifyOtp({
        organizationId: trudy!.orgId,
        otpId: other.otpId,
        encryptedOtpBundle: await encrypted(other.code, other.bundle),
      });
      assert.ok(ok.verificationToken);
    });

    it("concurrent wrong codes for one contact: exactly 5 are checked, the other 4 are 429", async () => {
      const contact = "race.victim@example.com";
      const otps = [];
      for (let i = 0; i < 3; i++) otps.push(await started(backend, init.organizationId, contact));
      const guesses = await Promise.all(
        otps.flatMap((o) =>
          [0, 1, 2].map(async (i) =>
            submitRaw(backendKey(), init.organizationId, "verify_otp", "ACTIVITY_TYPE_VERIFY_OTP_V2", {
              otpId: o.otpId,
              encryptedOtpBundle: await encrypted(wrongCode(o.code, i), o.bundle),
            }),
          ),
        ),
      );
      const statuses = guesses.map((g) => `${g.status} ${g.json.message}`);
      assert.equal(guesses.filter((g) => g.status === 400 && /Invalid OTP code/.test(g.json.message)).length, 5, statuses.join("\n"));
      assert.equal(guesses.filter((g) => g.status === 429).length, 4, statuses.join("\n"));
    });

    it("initiations are limited per contact across organizations (4 per hour here): 429 with Retry-After, nothing sent or recorded", async () => {
      const contact = "init.victim@example.com";
      const [mallory, trudy] = users;
      await started(backend, init.organizationId, contact);
      await started(backend, init.organizationId, contact.toUpperCase());
      await started(mallory!.client, mallory!.orgId, contact);
      await started(trudy!.client, trudy!.orgId, contact);
      const activities = (await trudy!.client.getActivities({ organizationId: trudy!.orgId })).activities.length;
      const mark = sink.mark();
      const fifth = await submitRaw(trudy!.key, trudy!.orgId, "init_otp", "ACTIVITY_TYPE_INIT_OTP_V3", {
        otpType: "OTP_TYPE_EMAIL",
        contact,
        appName: "x",
      });
      limited(fifth, /Max number of OTPs have been initiated for this contact \(4 per hour\)/, 3000, 3600);
      const viaSdk = await rejection(
        mallory!.client.initOtp({ organizationId: mallory!.orgId, otpType: "OTP_TYPE_EMAIL", contact, appName: "x" }),
      );
      assert.equal(viaSdk.code, 8);
      assert.equal(sink.mailTo(contact).length, 4);
      assert.equal(sink.mails.length, mark, "nothing sent");
      assert.equal((await trudy!.client.getActivities({ organizationId: trudy!.orgId })).activities.length, activities, "nothing recorded");
    });

    it("codes are at least 6 characters: a shorter otpLength is 400 naming it; 6 digits and 6 Crockford characters are accepted", async () => {
      for (const otpLength of [4, 5]) {
        const err = await rejection(
          backend.initOtp({ otpType: "OTP_TYPE_EMAIL", contact: "short@example.com", appName: "x", otpLength, alphanumeric: false }),
        );
        assert.equal(err.code, 3);
        assert.match(err.message, /otpLength/);
        assert.ok(violationFields((err as { details?: unknown }).details).includes("parameters.otpLength"), err.message);
      }
      assert.match(
        (await started(backend, init.organizationId, "six@example.com", { otpLength: 6, alphanumeric: false })).code,
        /^[0-9]{6}$/,
      );
      assert.match((await started(backend, init.organizationId, "six@example.com", { otpLength: 6 })).code, /^[0-9A-HJKMNP-TV-Z]{6}$/);
    });

    it("a sub-organization's credential may not customize the message: each field is 400 naming it; nothing sent, recorded or counted", async () => {
      const [mallory] = users;
      const contact = "custom.target@example.com";
      const email = { otpType: "OTP_TYPE_EMAIL", contact, appName: APP };
      const cases: [string, object][] = [
        ["parameters.sendFromEmailAddress", { ...email, sendFromEmailAddress: "security@sigil.test" }],
        ["parameters.sendFromEmailSenderName", { ...email, sendFromEmailSenderName: "Acme Security" }],
        ["parameters.replyToEmailAddress", { ...email, replyToEmailAddress: "help@sigil.test" }],
        ["parameters.emailCustomization.logoUrl", { ...email, emailCustomization: { logoUrl: "https://evil.example/acme.png" } }],
        [
          "parameters.emailCustomization.magicLinkTemplate",
          { ...email, emailCustomization: { magicLinkTemplate: "https://evil.example/login?c=%s" } },
        ],
        [
          "parameters.emailCustomization.templateVariables",
          { ...email, emailCustomization: { templateVariables: '{"greeting":"Dear customer"}' } },
        ],
        ["parameters.emailCustomization.templateId", { ...email, emailCustomization: { templateId: "tpl-1" } }],
        [
          "parameters.smsCustomization.template",
          {
            otpType: "OTP_TYPE_SMS",
            contact: "+14155550142",
            appName: APP,
            smsCustomization: { template: "Acme fraud desk: read {{.OtpCode}} to our agent" },
          },
        ],
      ];
      const activities = (await mallory!.client.getActivities({ organizationId: mallory!.orgId })).activities.length;
      const [mails, texts] = [sink.mark(), sms.length];
      for (const [field, params] of cases) {
        const err = await rejection(mallory!.client.initOtp({ organizationId: mallory!.orgId, ...params }));
        assert.equal(err.code, 3, `${field}: ${err.message}`);
        assert.ok(err.message.includes(field), `${field}: ${err.message}`);
        assert.deepEqual(violationFields((err as { details?: unknown }).details), [field]);
      }
      // Two at once: both named.
      const both = await rejection(
        mallory!.client.initOtp({
          organizationId: mallory!.orgId,
          ...email,
          sendFromEmailAddress: "a@sigil.test",
          replyToEmailAddress: "b@sigil.test",
        }),
      );
      assert.deepEqual(violationFields((both as { details?: unknown }).details), [
        "parameters.sendFromEmailAddress",
        "parameters.replyToEmailAddress",
      ]);
      assert.equal(sink.mails.length, mails, "no mail");
      assert.equal(sms.length, texts, "no SMS");
      assert.equal(
        (await mallory!.client.getActivities({ organizationId: mallory!.orgId })).activities.length,
        activities,
        "nothing recorded",
      );
      // Nine refusals took none of the contact's 4 initiations: 4 plain ones still go out
      // (3 here: at most 3 live codes per contact in one organization).
      for (let i = 0; i < 3; i++) await started(mallory!.client, mallory!.orgId, contact);
      await started(backend, init.organizationId, contact);
    });

    it("a sub-organization's message names the top-level organization's app and the operator's sender, never the appName it sent", async () => {
      const [mallory] = users;
      const bait = "Evil Bank - call +1 555 0100";
      const mail = (await started(mallory!.client, mallory!.orgId, "shown@example.com", { appName: bait })).mail;
      assert.equal(mail.subject, `Your ${APP} verification code`);
      assert.match(mail.text, new RegExp(`for ${APP}\\.`));
      for (const part of [mail.subject, mail.text, mail.html, mail.raw]) assert.ok(!part.includes("Evil"), part.slice(0, 300));
      assert.match(mail.headers.get("from")!, /^"?Sigil"? <otp@sigil\.test>$/);
      assert.equal(mail.headers.get("reply-to"), undefined);
      // The oldest version carries the app name in emailCustomization: ignored the same way.
      const mark = sink.mark();
      const v1 = await submitRaw(mallory!.key, mallory!.orgId, "init_otp", "ACTIVITY_TYPE_INIT_OTP", {
        otpType: "OTP_TYPE_EMAIL",
        contact: "shown.v1@example.com",
        emailCustomization: { appName: bait },
      });
      assert.equal(v1.status, 200, JSON.stringify(v1.json));
      assert.equal((await sink.nextMail("shown.v1@example.com", mark)).subject, `Your ${APP} verification code`);
      // SMS: the default body with the app's name.
      const texts = sms.length;
      await mallory!.client.initOtp({ organizationId: mallory!.orgId, otpType: "OTP_TYPE_SMS", contact: "+14155550143", appName: bait });
      assert.equal(sms.length, texts + 1);
      assert.equal(sms.at(-1)!.to, "+14155550143");
      assert.match(sms.at(-1)!.body, new RegExp(`^[0-9A-HJKMNP-TV-Z]{9} is your ${APP} verification code\\.$`));
    });

    it("the app's backend (top-level organization) customizes, with From and Reply-To only in the operator's sender domains (400 naming the field otherwise)", async () => {
      const email = { otpType: "OTP_TYPE_EMAIL", contact: "brand@example.com", appName: "Acme Pay" };
      const mark = sink.mark();
      for (const [field, over] of [
        ["parameters.sendFromEmailAddress", { sendFromEmailAddress: "ceo@bank.example" }],
        ["parameters.sendFromEmailAddress", { sendFromEmailAddress: "login@sigil.test.bank.example" }],
        ["parameters.replyToEmailAddress", { replyToEmailAddress: "help@evil.example" }],
      ] as const) {
        const err = await rejection(backend.initOtp({ ...email, ...over }));
        assert.equal(err.code, 3, err.message);
        assert.match(err.message, /sigil\.test/);
        assert.deepEqual(violationFields((err as { details?: unknown }).details), [field]);
      }
      assert.equal(sink.mails.length, mark, "no mail");
      const ok = await started(backend, init.organizationId, "brand@example.com", {
        appName: "Acme Pay",
        sendFromEmailAddress: "Login@SIGIL.test",
        sendFromEmailSenderName: "Acme Pay Login",
        replyToEmailAddress: "help@sigil.test",
        emailCustomization: { logoUrl: "https://acme.example/logo.png" },
      });
      assert.equal(ok.mail.subject, "Your Acme Pay verification code");
      assert.match(ok.mail.headers.get("from")!, /Acme Pay Login.*Login@SIGIL\.test/i);
      assert.match(ok.mail.headers.get("reply-to")!, /help@sigil\.test/);
      assert.ok(ok.mail.html.includes("https://acme.example/logo.png"));
      // Acting in an end user's sub-organization, the backend is still the backend.
      const [mallory] = users;
      const inSub = await started(backend, mallory!.orgId, "brand.sub@example.com", {
        appName: "Acme Pay",
        sendFromEmailSenderName: "Acme Pay Login",
      });
      assert.equal(inSub.mail.subject, "Your Acme Pay verification code");
      assert.match(inSub.mail.headers.get("from")!, /Acme Pay Login/);
    });

    it("messages are limited per mailbox (6 per hour here; +tags and case are one mailbox): 429 with Retry-After, nothing sent", async () => {
      for (let i = 1; i <= 6; i++) await started(backend, init.organizationId, `mailbox+${i}@example.com`);
      const mark = sink.mark();
      const [mallory] = users;
      const seventh = await submitRaw(mallory!.key, mallory!.orgId, "init_otp", "ACTIVITY_TYPE_INIT_OTP_V3", {
        otpType: "OTP_TYPE_EMAIL",
        contact: "Mailbox+7@Example.com",
        appName: "x",
      });
      limited(seventh, /Too many messages to this recipient \(6 per hour\)/, 3000, 3600);
      const plain = await rejection(backend.initOtp({ otpType: "OTP_TYPE_EMAIL", contact: "mailbox@example.com", appName: "x" }));
      assert.equal(plain.code, 8);
      assert.equal(sink.mails.length, mark, "nothing sent");
    });

    it("messages are limited per organization tree (40 per hour here), counted on the top-level organization whichever sub-organization sends", async () => {
      const senders = [
        { client: backend, orgId: init.organizationId, key: backendKey() },
        ...users.map((u) => ({ client: u.client, orgId: u.orgId, key: u.key })),
      ];
      let refused: Raw | undefined;
      for (let i = 0; i < 45 && !refused; i++) {
        const s = senders[i % senders.length]!;
        const r = await submitRaw(s.key, s.orgId, "init_otp", "ACTIVITY_TYPE_INIT_OTP_V3", {
          otpType: "OTP_TYPE_EMAIL",
          contact: `tree${i}@example.com`,
          appName: "x",
        });
        if (r.status !== 200) refused = r;
      }
      assert.ok(refused, "a refusal within 45 messages");
      limited(
        refused!,
        new RegExp(`Too many OTP messages for organization ${init.organizationId} and its sub-organizations \\(40 per hour\\)`),
        1,
        3600,
      );
      // Every message this server sent (mail and SMS, all tests so far) is one of the tree's 40.
      assert.equal(sink.mails.length + sms.length, 40);
    });
  });
}
