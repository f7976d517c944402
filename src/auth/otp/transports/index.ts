// OTP delivery transports chosen from the configuration (SMTP_URL, SIGIL_SMS_URL,
// SIGIL_OTP_DEV_TRANSPORT). Filled in by the OTP work: until then no channel is configured.
import type { Config } from "../../../config.ts";
import type { Logger, OtpTransport } from "../../login-settings.ts";

export function otpTransportsFrom(_config: Config, _log: Logger): { email?: OtpTransport; sms?: OtpTransport } {
  return {};
}
