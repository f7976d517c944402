// Development only (SIGIL_OTP_DEV_TRANSPORT=log): OTP messages, code included, are written
// to the service log at warn level instead of being delivered. Never enabled implicitly.
import type { Logger, OtpMessage, OtpTransport } from "../../settings.ts";

export function logTransport(log: Logger): OtpTransport {
  return {
    kind: "log",
    async send(m: OtpMessage): Promise<void> {
      log.warn(
        { otpDevTransport: true, channel: m.channel, to: m.to, subject: m.subject, text: m.text },
        "OTP message NOT delivered (SIGIL_OTP_DEV_TRANSPORT=log): development only, the code is in this log line",
      );
    },
  };
}
