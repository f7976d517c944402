// OTP delivery transports chosen from the configuration:
//   SIGIL_OTP_DEV_TRANSPORT=log  both channels write to the log (development only; wins over the rest);
//   SMTP_URL                     email over SMTP (SIGIL_SMTP_FROM is the default sender);
//   SIGIL_SMS_URL                SMS over a Twilio-compatible HTTP endpoint (SIGIL_SMS_FROM,
//                                SIGIL_SMS_USERNAME / SIGIL_SMS_PASSWORD for basic auth).
// A channel left unconfigured is absent: init_otp refuses it with a clear error.
import type { OtpConfig } from "../knobs.ts";
import type { Logger, OtpTransport } from "../../settings.ts";
import { logTransport } from "./log.ts";
import { smsHttpTransport } from "./sms-http.ts";
import { smtpTransport } from "./smtp.ts";

export { DeliveryError, SEND_TIMEOUT_MS, smtpTransport } from "./smtp.ts";
export { smsHttpTransport } from "./sms-http.ts";
export { logTransport } from "./log.ts";

export function otpTransportsFrom(config: OtpConfig, log: Logger): { email?: OtpTransport; sms?: OtpTransport } {
  if (config.otpDevTransport === "log") {
    log.warn(
      { otpDevTransport: "log" },
      "SIGIL_OTP_DEV_TRANSPORT=log: OTP codes are written to this log and not delivered; never use this in production",
    );
    const t = logTransport(log);
    return { email: t, sms: t };
  }
  return {
    ...(config.smtpUrl ? { email: smtpTransport({ url: config.smtpUrl, from: config.smtpFrom }) } : {}),
    ...(config.smsUrl
      ? {
          sms: smsHttpTransport({
            url: config.smsUrl,
            ...(config.smsFrom !== undefined ? { from: config.smsFrom } : {}),
            ...(config.smsUsername !== undefined ? { username: config.smsUsername } : {}),
            ...(config.smsPassword !== undefined ? { password: config.smsPassword } : {}),
          }),
        }
      : {}),
  };
}
