// Which OTP transports the configuration builds, the development log transport, and the SMTP
// transport against a real plain SMTP server (sender defaults, reply-to, no STARTTLS needed).
import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { loadConfig } from "../../src/config.ts";
import { otpTransportsFrom, smtpTransport, DeliveryError } from "../../src/logins/otp/transports/index.ts";
import { emailMessage } from "../../src/logins/otp/message.ts";
import { SmtpSink, refusedPort } from "../helpers/smtp-sink.ts";

function recorder() {
  const lines: { level: string; obj: object; msg: string }[] = [];
  return {
    lines,
    log: {
      info: (obj: object, msg: string) => void lines.push({ level: "info", obj, msg }),
      warn: (obj: object, msg: string) => void lines.push({ level: "warn", obj, msg }),
    },
  };
}

describe("otpTransportsFrom", () => {
  it("nothing configured: no channel", () => {
    assert.deepEqual(otpTransportsFrom(loadConfig({}, []), recorder().log), {});
  });

  it("SMTP_URL gives email over SMTP; SIGIL_SMS_URL gives SMS over HTTP", () => {
    const t = otpTransportsFrom(
      loadConfig({ SMTP_URL: "smtp://127.0.0.1:2525", SIGIL_SMS_URL: "https://sms.example/Messages.json" }, []),
      recorder().log,
    );
    assert.equal(t.email?.kind, "smtp");
    assert.equal(t.sms?.kind, "sms-http");
  });

  it("SIGIL_OTP_DEV_TRANSPORT=log: both channels log the message at warn level, and say so at start", async () => {
    const r = recorder();
    const t = otpTransportsFrom(loadConfig({ SIGIL_OTP_DEV_TRANSPORT: "log", SMTP_URL: "smtp://127.0.0.1:2525" }, []), r.log);
    assert.equal(t.email?.kind, "log");
    assert.equal(t.sms?.kind, "log");
    assert.match(r.lines[0]!.msg, /never use this in production/);
    await t.sms!.send({ channel: "sms", to: "+14155550100", text: "123456 is your code" });
    const last = r.lines.at(-1)!;
    assert.equal(last.level, "warn");
    assert.match(JSON.stringify(last.obj), /123456 is your code/);
    assert.throws(() => loadConfig({ SIGIL_OTP_DEV_TRANSPORT: "yes" }, []), /must be "log"/);
  });
});

describe("SMTP transport", () => {
  let sink: SmtpSink;
  after(() => sink?.stop());

  it("delivers to a plain unauthenticated server: default From, request sender name/address, reply-to", async () => {
    sink = await SmtpSink.start();
    const t = smtpTransport({ url: sink.url, from: "Sigil <no-reply@sigil.test>" });
    await t.send(emailMessage({ contact: "a@example.com", appName: "App", code: "123456", expiresInSeconds: 300 }));
    const plain = await sink.nextMail("a@example.com", 0);
    assert.match(plain.headers.get("from")!, /Sigil <no-reply@sigil\.test>/);
    assert.equal(plain.text.split(/\r?\n/)[0], "123456");
    await t.send(
      emailMessage({
        contact: "b@example.com",
        appName: "App",
        code: "654321",
        expiresInSeconds: 300,
        sendFromEmailSenderName: "App Team",
        replyToEmailAddress: "help@app.example",
      }),
    );
    const named = await sink.nextMail("b@example.com", 0);
    assert.match(named.headers.get("from")!, /App Team.*no-reply@sigil\.test/);
    assert.match(named.headers.get("reply-to")!, /help@app\.example/);
    await t.send(
      emailMessage({
        contact: "c@example.com",
        appName: "App",
        code: "111111",
        expiresInSeconds: 300,
        sendFromEmailAddress: "login@app.example",
      }),
    );
    assert.match((await sink.nextMail("c@example.com", 0)).headers.get("from")!, /Notifications.*login@app\.example/);
  });

  it("a refused connection is a DeliveryError naming no content", async () => {
    const t = smtpTransport({ url: `smtp://127.0.0.1:${await refusedPort()}`, from: "x@sigil.test" });
    await assert.rejects(
      t.send(emailMessage({ contact: "a@example.com", appName: "App", code: "123456", expiresInSeconds: 300 })),
      (err: Error) => {
        assert.ok(err instanceof DeliveryError);
        assert.ok(!err.message.includes("123456"));
        return true;
      },
    );
  });
});
