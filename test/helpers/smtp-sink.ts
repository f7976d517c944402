// A real SMTP server (the smtp-server package) on 127.0.0.1 for OTP tests: plain SMTP, no
// STARTTLS, no authentication — the simplest relay SMTP_URL may name. It keeps every message
// (envelope, raw source, decoded text/html parts) and lets a test await the next mail to an
// address. `stop()` closes it; a test of "mail server down" points a transport at a closed
// port instead (refusedPort()).
import net from "node:net";
import { SMTPServer } from "smtp-server";
import { SMTPConnection } from "smtp-server/lib/smtp-connection.js";
import assert from "node:assert/strict";
import { encryptOtpCodeToBundle } from "@turnkey/crypto";
import { DEFAULT_LOGIN_SETTINGS, type LoginSettings } from "../../src/logins/settings.ts";
import { smtpTransport } from "../../src/logins/otp/transports/index.ts";
import { generateP256, type P256Private } from "../../src/crypto/p256.ts";
import { completed, type CallOptions, type Harness, type InprocOptions, type Json } from "./inproc.ts";
import { initOtpV3 } from "../../src/activities/otp/init_otp.ts";
import { verifyOtpV2 } from "../../src/activities/otp/verify_otp.ts";

// smtp-server holds every greeting back 100 ms to catch clients that talk first (hard-coded in
// SMTPConnection.init); the service opens a connection per message, so across the suite that
// pause was most of what mail cost. The sink greets at once; everything after the greeting is
// the package's own protocol handling. A package update that renames these methods fails here.
{
  assert.equal(typeof SMTPConnection.prototype._setListeners, "function", "smtp-server changed: SMTPConnection._setListeners is gone");
  SMTPConnection.prototype.init = function (this: SMTPConnection) {
    this._setListeners(() => this.connectionReady());
  };
}

export interface Mail {
  from: string;
  to: string[];
  raw: string;
  headers: Map<string, string>;
  subject: string;
  text: string;
  html: string;
}

/** Decodes quoted-printable text (nodemailer's encoding for lines that need it). */
function decodeQp(s: string): string {
  const bytes = Buffer.from(
    s.replace(/=\r?\n/g, "").replace(/=([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
    "latin1",
  );
  return bytes.toString("utf8");
}

function splitHead(part: string): { headers: Map<string, string>; body: string } {
  const at = part.search(/\r?\n\r?\n/);
  const head = at < 0 ? part : part.slice(0, at);
  const body = at < 0 ? "" : part.slice(at).replace(/^\r?\n\r?\n/, "");
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/)) {
    const i = line.indexOf(":");
    if (i > 0) headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  return { headers, body };
}

function decodeBody(headers: Map<string, string>, body: string): string {
  const cte = (headers.get("content-transfer-encoding") ?? "7bit").toLowerCase();
  if (cte === "quoted-printable") return decodeQp(body);
  if (cte === "base64") return Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8");
  return body;
}

/** Text and HTML parts of a (possibly multipart) message. */
function parts(raw: string): { headers: Map<string, string>; text: string; html: string } {
  const top = splitHead(raw);
  const out = { headers: top.headers, text: "", html: "" };
  const walk = (headers: Map<string, string>, body: string) => {
    const type = headers.get("content-type") ?? "text/plain";
    const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
    if (/^multipart\//i.test(type) && boundary) {
      for (const chunk of body.split(`--${boundary}`).slice(1)) {
        if (chunk.startsWith("--")) break;
        const p = splitHead(chunk.replace(/^\r?\n/, ""));
        walk(p.headers, p.body);
      }
    } else if (/^text\/html/i.test(type)) out.html ||= decodeBody(headers, body);
    else if (/^text\/plain/i.test(type)) out.text ||= decodeBody(headers, body);
  };
  walk(top.headers, top.body);
  return out;
}

export class SmtpSink {
  readonly mails: Mail[] = [];
  #waiters: { to: string; resolve: (m: Mail) => void; after: number }[] = [];
  #server: SMTPServer;
  port = 0;

  private constructor() {
    this.#server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS", "AUTH"],
      disableReverseLookup: true,
      logger: false,
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on("data", (c: Buffer) => chunks.push(c));
        stream.on("end", () => {
          const raw = Buffer.concat(chunks).toString("utf8");
          const p = parts(raw);
          const mail: Mail = {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            raw,
            headers: p.headers,
            subject: p.headers.get("subject") ?? "",
            text: p.text,
            html: p.html,
          };
          const index = this.mails.push(mail) - 1;
          for (const w of [...this.#waiters]) {
            if (index >= w.after && mail.to.includes(w.to)) {
              this.#waiters.splice(this.#waiters.indexOf(w), 1);
              w.resolve(mail);
            }
          }
          callback();
        });
      },
    });
  }

  static async start(): Promise<SmtpSink> {
    const sink = new SmtpSink();
    await new Promise<void>((resolve, reject) => {
      sink.#server.once("error", reject);
      sink.#server.listen(0, "127.0.0.1", () => resolve());
    });
    sink.port = (sink.#server.server.address() as net.AddressInfo).port;
    return sink;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** A mark for nextMail: only mail received after it counts. */
  mark(): number {
    return this.mails.length;
  }

  /** The first mail to `to` received at or after `after` (default: from now on); rejects after `timeoutMs`. */
  nextMail(to: string, after = this.mails.length, timeoutMs = 10_000): Promise<Mail> {
    const addr = to.toLowerCase();
    const have = this.mails.slice(after).find((m) => m.to.includes(addr));
    if (have) return Promise.resolve(have);
    return new Promise<Mail>((resolve, reject) => {
      const w = { to: addr, after, resolve: (m: Mail) => (clearTimeout(timer), resolve(m)) };
      const timer = setTimeout(() => {
        this.#waiters.splice(this.#waiters.indexOf(w), 1);
        reject(
          new Error(
            `no mail to ${to} within ${timeoutMs} ms (have ${this.mails.length}: ${this.mails.map((m) => m.to.join(",")).join("; ")})`,
          ),
        );
      }, timeoutMs);
      this.#waiters.push(w);
    });
  }

  /** Mail to `to` received so far. */
  mailTo(to: string): Mail[] {
    return this.mails.filter((m) => m.to.includes(to.toLowerCase()));
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

/** A 127.0.0.1 port nothing listens on (connections are refused): a mail server that is down. */
export async function refusedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", () => resolve()));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** The code in an OTP mail: the first stand-alone run of code characters on a line of its own. */
export function codeFrom(mail: Mail): string {
  const m = /^([0-9A-Z]{6,9})\r?$/m.exec(mail.text);
  if (!m) throw new Error(`no code in mail text: ${JSON.stringify(mail.text.slice(0, 200))}`);
  return m[1]!;
}

// ---- In-process OTP flows over a sink (test/ops/{init_otp,verify_otp,otp_login}.ts) ----

export const TEST_FROM = "Sigil Tests <otp@sigil.test>";

/**
 * Harness options whose email transport is the real SMTP transport pointed at a fresh sink
 * (one per harness): pass `options` to perEngine, call `after(s.stop)` in its body and
 * `sink()` in the tests (suites run one after the other, so it is the current harness's sink).
 */
export function sinkPerHarness(over: Partial<LoginSettings> = {}): {
  options: () => Promise<InprocOptions>;
  sink: () => SmtpSink;
  stop: () => Promise<void>;
} {
  let current: SmtpSink | undefined;
  return {
    options: async () => {
      const sink = await SmtpSink.start();
      current = sink;
      return { logins: { ...DEFAULT_LOGIN_SETTINGS, email: smtpTransport({ url: sink.url, from: TEST_FROM }), ...over } };
    },
    sink: () => current!,
    /** Register with `after` in perEngine's body: stops the suite's sink. */
    stop: async () => {
      await current?.stop();
      current = undefined;
    },
  };
}

/** The published key of a purpose (uncompressed hex), from GET /public/v1/discovery/keys. */
export async function publishedKey(h: Harness, purpose: "OTP_ENCRYPTION_TARGET" | "VERIFICATION_TOKEN" | "SESSION_JWT"): Promise<string> {
  const r = await h.app.inject({ method: "GET", url: "/public/v1/discovery/keys" });
  const keys = (JSON.parse(r.body) as { keys: { purpose: string; publicKey: string; status: string }[] }).keys;
  const k = keys.find((x) => x.purpose === purpose && x.status === "active") ?? keys.find((x) => x.purpose === purpose);
  assert.ok(k, `a ${purpose} key in ${r.body}`);
  return k.publicKey;
}

/** The published OTP_ENCRYPTION_TARGET key: what encryptOtpCodeToBundle must be told to expect. */
export const otpSignerKey = (h: Harness) => publishedKey(h, "OTP_ENCRYPTION_TARGET");

export interface StartedOtp {
  otpId: string;
  bundle: string;
  code: string;
  mail: Mail;
}

/** init_otp V3 by email through `opts.as`; the code is read from the mail the sink received. */
export async function startOtp(h: Harness, sink: SmtpSink, contact: string, over: Json = {}, opts: CallOptions = {}): Promise<StartedOtp> {
  const mark = sink.mark();
  const res = await h.submit(
    "init_otp",
    "ACTIVITY_TYPE_INIT_OTP_V3",
    { otpType: "OTP_TYPE_EMAIL", contact, appName: "Sigil Test", ...over },
    opts,
  );
  const r = completed(res, initOtpV3);
  const mail = await sink.nextMail(contact, mark);
  return { otpId: r.otpId, bundle: r.otpEncryptionTargetBundle, code: codeFrom(mail), mail };
}

/** What a client sends to verify_otp V2: the code and its key, encrypted to the OTP's target as @turnkey/crypto does. */
export async function encryptedCode(
  h: Harness,
  code: string,
  bundle: string,
  key: P256Private = generateP256(),
): Promise<{ encryptedOtpBundle: string; key: P256Private }> {
  return { encryptedOtpBundle: await encryptOtpCodeToBundle(code, bundle, key.publicCompressed, await otpSignerKey(h)), key };
}

/** init → mail → verify V2: a verification token for `contact` bound to `key`. */
export async function verifiedToken(
  h: Harness,
  sink: SmtpSink,
  contact: string,
  opts: CallOptions = {},
  key: P256Private = generateP256(),
): Promise<{ token: string; key: P256Private; otpId: string }> {
  const otp = await startOtp(h, sink, contact, {}, opts);
  const { encryptedOtpBundle } = await encryptedCode(h, otp.code, otp.bundle, key);
  const res = await h.submit("verify_otp", "ACTIVITY_TYPE_VERIFY_OTP_V2", { otpId: otp.otpId, encryptedOtpBundle }, opts);
  return { token: completed(res, verifyOtpV2).verificationToken, key, otpId: otp.otpId };
}

// ---- End-to-end OTP flow against a child-process server, through the official SDKs ----

export interface DiscoveredKeys {
  otp: string;
  verification: string;
  session: string;
}

/** The active public keys of each purpose, from the server's discovery document. */
export async function discoveredKeys(baseUrl: string): Promise<DiscoveredKeys> {
  const doc = (await (await fetch(`${baseUrl}/public/v1/discovery/keys`)).json()) as {
    keys: { purpose: string; publicKey: string; status: string }[];
  };
  const of = (purpose: string) => {
    const k = doc.keys.find((x) => x.purpose === purpose && x.status === "active");
    assert.ok(k, `an active ${purpose} key in ${JSON.stringify(doc)}`);
    return k.publicKey;
  };
  return { otp: of("OTP_ENCRYPTION_TARGET"), verification: of("VERIFICATION_TOKEN"), session: of("SESSION_JWT") };
}

export interface E2eLogin {
  code: string;
  otpId: string;
  verificationToken: string;
  /** The key the verification token is bound to (core's "verification" key pair). */
  tokenKey: P256Private;
  session: string;
  /** The session key pair (compressed public hex, private scalar hex), as core keeps it. */
  sessionKey: { publicKey: string; privateKey: string };
}

/**
 * init_otp V3 → the code from the real SMTP server → encryptOtpCodeToBundle with the
 * discovered key → verify_otp V2 → otp_login V2 with the client signature core builds, all
 * through sdk-server's apiClient stamped by `client`'s key, in `organizationId` (`loginOver`
 * may name another organizationId for the login: a parent-issued token serves its sub-orgs).
 */
export async function e2eOtpLogin(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  client: any,
  sink: SmtpSink,
  baseUrl: string,
  organizationId: string,
  contact: string,
  loginOver: Json = {},
): Promise<E2eLogin> {
  const { getClientSignatureMessageForLogin } = await import("@turnkey/core");
  const { generateP256KeyPair } = await import("../../src/crypto/keygen.ts");
  const { signP256 } = await import("../../src/crypto/p256.ts");
  const keys = await discoveredKeys(baseUrl);
  const mark = sink.mark();
  const init = await client.initOtp({ organizationId, otpType: "OTP_TYPE_EMAIL", contact, appName: "Sigil E2E" });
  const mail = await sink.nextMail(contact, mark);
  const code = codeFrom(mail);
  const tokenKey = generateP256();
  const encryptedOtpBundle = await encryptOtpCodeToBundle(code, init.otpEncryptionTargetBundle, tokenKey.publicCompressed, keys.otp);
  const { verificationToken } = await client.verifyOtp({ organizationId, otpId: init.otpId, encryptedOtpBundle });
  const sessionKey = generateP256KeyPair();
  const { message, publicKey } = getClientSignatureMessageForLogin({ verificationToken, sessionPublicKey: sessionKey.publicKey });
  const signature = signP256(tokenKey, Buffer.from(message, "utf8"), "raw").toString("hex");
  const { session } = await client.otpLogin({
    organizationId,
    verificationToken,
    publicKey: sessionKey.publicKey,
    clientSignature: { publicKey, scheme: "CLIENT_SIGNATURE_SCHEME_API_P256", message, signature },
    ...loginOver,
  });
  return { code, otpId: init.otpId, verificationToken, tokenKey, session, sessionKey };
}
