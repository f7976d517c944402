// The knobs of email and SMS OTP (docs/otp-limits-and-mail.md §6): delivery (SMTP, the
// Twilio-compatible SMS endpoint, the development log transport), sender domains and limits.
// Apart from the method (./index.ts) because transports/index.ts reads their Config fields.
import { DEFAULT_OTP_LIMITS } from "../settings.ts";
import { defineKnob, int, list, str, url, type ConfigOf } from "../../config/define.ts";

/** Comma-separated mail domains (lower-cased; no addresses, no wildcards). */
function senderDomains(v: string): string[] {
  const domains = list(v).map((d) => d.toLowerCase());
  for (const d of domains) {
    if (!/^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(d)) {
      throw new Error(
        `SIGIL_MAIL_SENDER_DOMAINS must be comma-separated domain names such as example.com, got ${JSON.stringify(d.slice(0, 100))}`,
      );
    }
  }
  return domains;
}

export const OTP_KNOBS = [
  // Credentials go in the URL.
  defineKnob({
    env: "SMTP_URL",
    flag: "--smtp-url",
    secret: true,
    key: "smtpUrl",
    parse: url("SMTP_URL", ["smtp:", "smtps:"]),
    default: undefined,
    doc: {
      meaning:
        "OTP mail: `smtp://host:port` (plain; STARTTLS is used when the server offers it) or `smtps://…`; credentials in the URL (`smtp://user:pass@host`). Without it (and without the dev transport) email OTP is refused with a clear error",
    },
  }),
  defineKnob({
    env: "SIGIL_SMTP_FROM",
    flag: "--smtp-from",
    key: "smtpFrom",
    parse: str,
    default: "Notifications <no-reply@localhost>",
    doc: { meaning: "Sender of OTP mail when the request names none (`sendFromEmailAddress`, `sendFromEmailSenderName`)" },
  }),
  defineKnob({
    env: "SIGIL_SMS_URL",
    flag: "--sms-url",
    key: "smsUrl",
    parse: url("SIGIL_SMS_URL", ["http:", "https:"]),
    default: undefined,
    doc: {
      meaning:
        "OTP SMS: a Twilio-compatible Messages endpoint (form POST `To`, `From`, `Body`; HTTP basic auth). Without it SMS OTP is refused",
    },
  }),
  defineKnob({
    env: "SIGIL_SMS_FROM",
    flag: "--sms-from",
    key: "smsFrom",
    parse: str,
    default: undefined,
    doc: { meaning: "The `From` number of OTP SMS" },
  }),
  defineKnob({
    env: "SIGIL_SMS_USERNAME",
    flag: "--sms-username",
    secret: true,
    key: "smsUsername",
    parse: str,
    default: undefined,
    doc: { meaning: "Basic-auth user of the SMS endpoint (e.g. a Twilio account SID)" },
  }),
  defineKnob({
    env: "SIGIL_SMS_PASSWORD",
    flag: "--sms-password",
    secret: true,
    key: "smsPassword",
    parse: str,
    default: undefined,
    doc: { meaning: "Basic-auth password of the SMS endpoint (e.g. a Twilio auth token)" },
  }),
  defineKnob({
    env: "SIGIL_OTP_DEV_TRANSPORT",
    flag: "--otp-dev-transport",
    key: "otpDevTransport",
    parse: (v): "log" => {
      if (v !== "log") throw new Error(`SIGIL_OTP_DEV_TRANSPORT must be "log", got ${JSON.stringify(v)}`);
      return v;
    },
    default: undefined,
    doc: {
      meaning:
        "**Development only.** `log`: OTP messages (codes included) are written to the service log instead of being sent, for both channels. Never set it in production",
    },
  }),
  defineKnob({
    env: "SIGIL_MAIL_SENDER_DOMAINS",
    flag: "--mail-sender-domains",
    key: "mailSenderDomains",
    parse: senderDomains,
    default: undefined,
    computedBy: "allowedSenderDomains (src/activities/otp/otp-content.ts): the domain of SIGIL_SMTP_FROM",
    doc: {
      meaning:
        "Comma-separated domains a top-level organization's `init_otp` may use in `sendFromEmailAddress` / `replyToEmailAddress` (exact match; list subdomains too); others → 400 naming the field. Sub-organizations may not customize OTP messages at all (docs/otp-limits-and-mail.md §3)",
      default: "domain of `SIGIL_SMTP_FROM`",
    },
  }),
  defineKnob({
    env: "SIGIL_OTP_GUESSES_PER_CONTACT",
    flag: "--otp-guesses-per-contact",
    key: "otpGuessesPerContact",
    parse: int("SIGIL_OTP_GUESSES_PER_CONTACT", 1, 1000),
    default: DEFAULT_OTP_LIMITS.guessesPerContact,
    doc: {
      meaning:
        "Wrong OTP codes per contact per guess window, across codes and organizations; past it even the right code is 429 until the window frees one",
    },
  }),
  defineKnob({
    env: "SIGIL_OTP_GUESS_WINDOW_SECONDS",
    flag: "--otp-guess-window-seconds",
    key: "otpGuessWindowSeconds",
    parse: int("SIGIL_OTP_GUESS_WINDOW_SECONDS", 1, 86400),
    default: DEFAULT_OTP_LIMITS.guessWindowSeconds,
    doc: { meaning: "The window of `SIGIL_OTP_GUESSES_PER_CONTACT`", default: "`900` (15 min)" },
  }),
  defineKnob({
    env: "SIGIL_OTP_INITIATIONS_PER_CONTACT_PER_HOUR",
    flag: "--otp-initiations-per-contact-per-hour",
    key: "otpInitiationsPerContactPerHour",
    parse: int("SIGIL_OTP_INITIATIONS_PER_CONTACT_PER_HOUR", 1, 1000),
    default: DEFAULT_OTP_LIMITS.initiationsPerContactPerHour,
    doc: {
      meaning: "`init_otp` per contact (email in any case, phone number) per hour, across organizations; past it 429 with `Retry-After`",
    },
  }),
  defineKnob({
    env: "SIGIL_OTP_SENDS_PER_RECIPIENT_PER_HOUR",
    flag: "--otp-sends-per-recipient-per-hour",
    key: "otpSendsPerRecipientPerHour",
    parse: int("SIGIL_OTP_SENDS_PER_RECIPIENT_PER_HOUR", 1, 1000),
    default: DEFAULT_OTP_LIMITS.sendsPerRecipientPerHour,
    doc: {
      meaning:
        "OTP messages per recipient mailbox (`+tags` and Gmail dots ignored) or phone number per hour; past it 429 with `Retry-After`",
    },
  }),
  defineKnob({
    env: "SIGIL_OTP_SENDS_PER_ORGANIZATION_PER_HOUR",
    flag: "--otp-sends-per-organization-per-hour",
    key: "otpSendsPerOrganizationPerHour",
    parse: int("SIGIL_OTP_SENDS_PER_ORGANIZATION_PER_HOUR", 1, 100_000),
    default: DEFAULT_OTP_LIMITS.sendsPerOrganizationPerHour,
    doc: {
      meaning:
        "OTP messages per organization tree per hour, counted on its top-level organization whichever sub-organization sends; past it 429 with `Retry-After`",
    },
  }),
] as const;

/** The OTP part of the configuration. */
export type OtpConfig = ConfigOf<typeof OTP_KNOBS>;
