// Email and SMS one-time passcodes (docs/logins.md §3): init_otp sends a code, verify_otp
// turns it into a verification token, and otp_login (or an attested stamp_login, §4) turns
// the token into a session. Its mechanism is in this folder (code.ts, bundle.ts, limits.ts,
// message.ts, transports/); the activities and the auth proxy import it from here.
import { otpTransportsFrom } from "./transports/index.ts";
import { defineLoginMethod } from "../define.ts";
import { OTP_KNOBS } from "./knobs.ts";

export const otp = defineLoginMethod({
  name: "otp",
  doc: "docs/logins.md §3",
  activities: [
    "ACTIVITY_TYPE_INIT_OTP",
    "ACTIVITY_TYPE_INIT_OTP_V2",
    "ACTIVITY_TYPE_INIT_OTP_V3",
    "ACTIVITY_TYPE_VERIFY_OTP",
    "ACTIVITY_TYPE_VERIFY_OTP_V2",
    "ACTIVITY_TYPE_OTP_LOGIN",
    "ACTIVITY_TYPE_OTP_LOGIN_V2",
    "ACTIVITY_TYPE_EMAIL_AUTH_V3",
    "ACTIVITY_TYPE_INIT_OTP_AUTH_V3",
    "ACTIVITY_TYPE_OTP_AUTH",
  ],
  // A parent's backend starts and finishes its sub-organizations' users' OTP logins (SDK
  // `@turnkey/sdk-server` usage, docs/logins.md §2.4), and the legacy email and OTP auth
  // flows likewise (docs/logins.md §9.1).
  parentStampable: [
    { type: "ACTIVITY_TYPE_INIT_OTP", everyVersion: true },
    { type: "ACTIVITY_TYPE_VERIFY_OTP", everyVersion: true },
    { type: "ACTIVITY_TYPE_OTP_LOGIN", everyVersion: true },
    { type: "ACTIVITY_TYPE_EMAIL_AUTH", everyVersion: true },
    { type: "ACTIVITY_TYPE_INIT_OTP_AUTH", everyVersion: true },
    { type: "ACTIVITY_TYPE_OTP_AUTH", everyVersion: true },
  ],
  knobs: OTP_KNOBS,
  settings: (config, { log }) => ({
    ...otpTransportsFrom(config, log),
    otpLimits: {
      guessesPerContact: config.otpGuessesPerContact,
      guessWindowSeconds: config.otpGuessWindowSeconds,
      initiationsPerContactPerHour: config.otpInitiationsPerContactPerHour,
      sendsPerRecipientPerHour: config.otpSendsPerRecipientPerHour,
      sendsPerOrganizationPerHour: config.otpSendsPerOrganizationPerHour,
    },
    ...(config.mailSenderDomains !== undefined ? { mailSenderDomains: config.mailSenderDomains } : {}),
  }),
});
