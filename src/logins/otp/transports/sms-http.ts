// OTP SMS through a Twilio-compatible Messages endpoint (SIGIL_SMS_URL): an HTTP form POST
// of To, From, Body with basic auth; any non-2xx answer is a failure. Bounded by a timeout
// for the same reason as SMTP (the send happens inside the activity's transaction).
import type { OtpMessage, OtpTransport } from "../../settings.ts";
import { DeliveryError, SEND_TIMEOUT_MS } from "./smtp.ts";

export interface SmsHttpOptions {
  url: string;
  from?: string;
  username?: string;
  password?: string;
  timeoutMs?: number;
}

export function smsHttpTransport(opts: SmsHttpOptions): OtpTransport {
  const timeoutMs = opts.timeoutMs ?? SEND_TIMEOUT_MS;
  const auth =
    opts.username !== undefined ? `Basic ${Buffer.from(`${opts.username}:${opts.password ?? ""}`).toString("base64")}` : undefined;
  return {
    kind: "sms-http",
    async send(m: OtpMessage): Promise<void> {
      const form = new URLSearchParams({ To: m.to, ...(opts.from ? { From: opts.from } : {}), Body: m.text });
      let res: Response;
      try {
        res = await fetch(opts.url, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", ...(auth ? { authorization: auth } : {}) },
          body: form.toString(),
          redirect: "error",
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        const timedOut = (err as Error).name === "TimeoutError";
        throw new DeliveryError(
          timedOut ? `the SMS gateway did not answer within ${timeoutMs} ms` : "the SMS gateway could not be reached",
        );
      }
      // The body is read only to free the connection; it is not reported (it may echo the message).
      await res.arrayBuffer().catch(() => undefined);
      if (res.status < 200 || res.status > 299) throw new DeliveryError(`the SMS gateway answered HTTP ${res.status}`);
    },
  };
}
