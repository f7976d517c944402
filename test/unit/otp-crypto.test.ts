// OTP pieces without a server: the target bundle passes the SDK's own signature check, what
// @turnkey/crypto encrypts to it decrypts here (HPKE with the SDK's AAD), codes have the
// promised alphabet and length, and the mail's text part starts with the code.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { encryptOtpCodeToBundle } from "@turnkey/crypto";
import { generateP256 } from "../../src/crypto/p256.ts";
import { MasterKey } from "../../src/crypto/envelope.ts";
import type { ServiceKey } from "../../src/auth/service-keys.ts";
import { targetBundle, openOtpBundle } from "../../src/logins/otp/bundle.ts";
import { CROCKFORD, codeDigest, codeMatches, generateCode, normalizeCode } from "../../src/logins/otp/code.ts";
import { emailMessage, smsMessage } from "../../src/logins/otp/message.ts";

const serviceKey = (): ServiceKey => ({ id: "k", purpose: "OTP_ENCRYPTION_TARGET", signer: generateP256() });

describe("OTP encryption target and encrypted bundle", () => {
  it("encryptOtpCodeToBundle accepts our bundle (signature checked with our key) and we decrypt what it produced", async () => {
    const signer = serviceKey();
    const target = generateP256();
    const bundle = targetBundle(signer, target.publicUncompressed);
    const parsed = JSON.parse(bundle);
    assert.equal(parsed.enclaveQuorumPublic, signer.signer.publicUncompressed);
    assert.deepEqual(JSON.parse(Buffer.from(parsed.data, "hex").toString("utf8")), { targetPublic: target.publicUncompressed });
    const client = generateP256();
    const encrypted = await encryptOtpCodeToBundle("7K3M9QX2A", bundle, client.publicCompressed, signer.signer.publicUncompressed);
    assert.deepEqual(await openOtpBundle(target, encrypted), { otpCode: "7K3M9QX2A", publicKey: client.publicCompressed });
  });

  it("the SDK refuses the bundle when it expects another signer, or when data was altered", async () => {
    const signer = serviceKey();
    const bundle = targetBundle(signer, generateP256().publicUncompressed);
    await assert.rejects(encryptOtpCodeToBundle("123456", bundle, generateP256().publicCompressed, generateP256().publicUncompressed));
    const altered = JSON.parse(bundle);
    altered.data = Buffer.from(JSON.stringify({ targetPublic: generateP256().publicUncompressed })).toString("hex");
    await assert.rejects(
      encryptOtpCodeToBundle("123456", JSON.stringify(altered), generateP256().publicCompressed, signer.signer.publicUncompressed),
      /signature/,
    );
  });

  it("a bundle encrypted to another OTP's key, or tampered with, is a problem, not a crash", async () => {
    const signer = serviceKey();
    const target = generateP256();
    const encrypted = await encryptOtpCodeToBundle(
      "123456",
      targetBundle(signer, target.publicUncompressed),
      generateP256().publicCompressed,
      signer.signer.publicUncompressed,
    );
    assert.ok("problem" in (await openOtpBundle(generateP256(), encrypted)));
    const t = JSON.parse(encrypted);
    t.ciphertext = (t.ciphertext[0] === "0" ? "1" : "0") + t.ciphertext.slice(1);
    assert.ok("problem" in (await openOtpBundle(target, JSON.stringify(t))));
    for (const junk of ["", "{}", "null", "[1]", '{"encappedPublic":"04","ciphertext":"00"}'])
      assert.ok("problem" in (await openOtpBundle(target, junk)), junk);
  });
});

describe("OTP codes", () => {
  it("alphanumeric codes use Crockford Base32 (no I, L, O, U); numeric codes only digits; lengths 6-9", () => {
    const seen = new Set<string>();
    for (let len = 6; len <= 9; len++) {
      for (let i = 0; i < 200; i++) {
        const a = generateCode(len, true);
        assert.equal(a.length, len);
        assert.match(a, /^[0-9A-HJKMNP-TV-Z]+$/);
        for (const c of a) seen.add(c);
        assert.match(generateCode(len, false), new RegExp(`^[0-9]{${len}}$`));
      }
    }
    assert.equal(CROCKFORD.length, 32);
    assert.equal(seen.size, 32, "every character of the alphabet appears");
  });

  it("the digest is keyed and bound to the OTP id; typing is forgiving (case, I/L, O)", () => {
    const mk = MasterKey.generate();
    const d = codeDigest(mk, "otp-1", "0A1B2C");
    assert.ok(codeMatches(mk, "otp-1", "oa1b2c", d));
    assert.ok(codeMatches(mk, "otp-1", "0AIB2C", d));
    assert.ok(!codeMatches(mk, "otp-2", "0A1B2C", d), "another OTP's digest does not match");
    assert.ok(!codeMatches(MasterKey.generate(), "otp-1", "0A1B2C", d), "another master key does not match");
    assert.ok(!codeMatches(mk, "otp-1", "0A1B2D", d));
    assert.ok(!d.includes("0A1B2C"));
    assert.equal(normalizeCode(" abc "), "ABC");
  });
});

describe("OTP messages", () => {
  it("the mail's text part carries the code on its own line before any other run of digits of its length", () => {
    for (const code of ["123456", "987654321", "7K3M9QX2A"]) {
      const m = emailMessage({
        contact: "a@example.com",
        appName: "Shop 123456789 2024",
        code,
        expiresInSeconds: 300,
        emailCustomization: { magicLinkTemplate: "https://app.example/login?code=%s", logoUrl: "https://app.example/logo.png" },
      });
      const lines = m.text.split("\n");
      assert.equal(lines[0], code);
      const firstRun = new RegExp(`(?<![0-9A-Za-z])[0-9A-Z]{${code.length}}(?![0-9A-Za-z])`).exec(m.text);
      assert.equal(firstRun?.[0], code);
      assert.equal(firstRun?.index, 0);
      assert.match(m.text, new RegExp(`code=${code}`));
      assert.match(m.subject!, /Shop/);
      assert.ok(m.html!.includes(code));
    }
  });

  it("sender defaults: a From address without a name gets 'Notifications'", () => {
    const m = emailMessage({
      contact: "a@example.com",
      appName: "A",
      code: "123456",
      expiresInSeconds: 60,
      sendFromEmailAddress: "x@example.com",
      replyToEmailAddress: "r@example.com",
    });
    assert.equal(m.from, "x@example.com");
    assert.equal(m.fromName, "Notifications");
    assert.equal(m.replyTo, "r@example.com");
    assert.ok(m.html!.includes("&lt;") === false);
    const esc = emailMessage({ contact: "a@example.com", appName: "<b>x</b>", code: "123456", expiresInSeconds: 60 });
    assert.ok(esc.html!.includes("&lt;b&gt;x&lt;/b&gt;"));
  });

  it("SMS: the template's {{.OtpCode}} is replaced; the default starts with the code", () => {
    assert.equal(
      smsMessage({ contact: "+14155550100", appName: "A", code: "123456", template: "Code: {{.OtpCode}} ({{ .OtpCode }})" }).text,
      "Code: 123456 (123456)",
    );
    assert.match(smsMessage({ contact: "+14155550100", appName: "A", code: "123456" }).text, /^123456 /);
  });
});
