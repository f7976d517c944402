// OTP mail over SMTP (nodemailer), from SMTP_URL: smtp://[user:pass@]host[:port] (STARTTLS
// only when the server offers it, so a plain unauthenticated relay works) or smtps:// (TLS
// from the first byte). One connection per message. Sending happens inside the activity's
// transaction, so every phase has a short timeout and the whole send is capped at
// SEND_TIMEOUT_MS: a dead server costs a request at most that long, never a hung transaction.
import nodemailer from "nodemailer";
import type { OtpMessage, OtpTransport } from "../../settings.ts";

export const SEND_TIMEOUT_MS = 8000;

export interface SmtpOptions {
  url: string;
  /** The From of mail whose request names no sender: "Name <address>" or an address. */
  from: string;
  /** Total time for one message, ms (default SEND_TIMEOUT_MS). */
  timeoutMs?: number;
}

/** Thrown when a message could not be handed over: a short reason, no message content. */
export class DeliveryError extends Error {
  override name = "DeliveryError";
}

function connectionOf(url: string) {
  const u = new URL(url);
  if (u.protocol !== "smtp:" && u.protocol !== "smtps:") throw new Error("SMTP_URL must be smtp:// or smtps://");
  const secure = u.protocol === "smtps:";
  return {
    host: u.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: u.port ? Number(u.port) : secure ? 465 : 25,
    secure,
    ...(u.username ? { auth: { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } } : {}),
  };
}

/** The address part of "Name <address>" (or the whole text). */
export function addressOf(from: string): string {
  return /<([^<>]+)>\s*$/.exec(from)?.[1] ?? from.trim();
}

export function smtpTransport(opts: SmtpOptions): OtpTransport {
  const timeoutMs = opts.timeoutMs ?? SEND_TIMEOUT_MS;
  const connection = connectionOf(opts.url);
  const phase = Math.max(1000, Math.floor(timeoutMs / 2));
  return {
    kind: "smtp",
    defaultFrom: opts.from,
    async send(m: OtpMessage): Promise<void> {
      const transport = nodemailer.createTransport({
        ...connection,
        connectionTimeout: phase,
        greetingTimeout: phase,
        socketTimeout: timeoutMs,
        dnsTimeout: phase,
        logger: false,
        debug: false,
      });
      const from = m.from
        ? { name: m.fromName ?? "Notifications", address: m.from }
        : m.fromName
          ? { name: m.fromName, address: addressOf(opts.from) }
          : opts.from;
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          transport.sendMail({
            from,
            to: m.to,
            ...(m.replyTo ? { replyTo: m.replyTo } : {}),
            subject: m.subject ?? "Your verification code",
            text: m.text,
            ...(m.html ? { html: m.html } : {}),
          }),
          new Promise<never>((_, reject) => {
            timer = setTimeout(
              () => reject(new DeliveryError(`the mail server did not accept the message within ${timeoutMs} ms`)),
              timeoutMs,
            );
          }),
        ]);
      } catch (err) {
        if (err instanceof DeliveryError) throw err;
        // nodemailer's errors carry a code (ECONNECTION, ETIMEDOUT, EENVELOPE, EAUTH…) and the
        // server's reply code; neither contains the message.
        const e = err as { code?: string; responseCode?: number };
        throw new DeliveryError(
          `the mail server refused or could not be reached (${[e.code, e.responseCode].filter(Boolean).join(" ") || "error"})`,
        );
      } finally {
        clearTimeout(timer);
        transport.close();
      }
    },
  };
}
