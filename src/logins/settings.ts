// What the login flows are configured with (sessions, passkeys, OTP delivery, OAuth): built
// once from the configuration by `sigil serve` (logins/configure.ts; the test harnesses build
// their own) and handed to activities and stamp strategies. Shared by every login method's
// folder (docs/logins.md §8.1): the types and their defaults; the transports import its types,
// and it imports no transport.
import type { OAuthSettings } from "./oauth/settings.ts";

/** One OTP message, as a transport delivers it. The code is in `text` (and `html`): never log these. */
export interface OtpMessage {
  channel: "email" | "sms";
  /** Email address or E.164 phone number. */
  to: string;
  subject?: string;
  text: string;
  html?: string;
  /** Email: sender address and display name, reply-to (from the request's customization). */
  from?: string;
  fromName?: string;
  replyTo?: string;
}

export interface OtpTransport {
  /** For errors and logs ("smtp", "sms-http", "log"). */
  readonly kind: string;
  /** Email: the From of mail whose request names none ("Name <address>" or an address). */
  readonly defaultFrom?: string;
  /** Delivers or throws; must give up within its own timeout. */
  send(message: OtpMessage): Promise<void>;
}

export interface LoginSettings {
  /** The longest session a login may ask for (expirationSeconds). */
  sessionMaxSeconds: number;
  webauthn: { rpId?: string; origins: readonly string[] };
  /** Absent: OTP over that channel is refused with a clear error. */
  email?: OtpTransport;
  sms?: OtpTransport;
  /** OAuth providers, trusted issuers and Sigil's issuer URL (logins/oauth/settings.ts). Absent: built-in defaults (logins/oauth/configure.ts). */
  oauth?: OAuthSettings;
  /** OTP guess, initiation and send limits (docs/otp-limits-and-mail.md §2, §4). Absent: DEFAULT_OTP_LIMITS. */
  otpLimits?: OtpLimits;
  /**
   * Domains a top-level organization's init_otp may name as From / Reply-To
   * (docs/otp-limits-and-mail.md §3). Absent: the domain of the email transport's defaultFrom.
   */
  mailSenderDomains?: readonly string[];
  /**
   * How long an API key registration that is neither trusted nor proved may receive a stamp
   * naming an organization above it (docs/login-lookups.md §3). Absent: DEFAULT_UNPROVED_KEY_WINDOW_MS.
   */
  unprovedKeyWindowMs?: number;
}

/** Per-window limits on OTP codes and the messages carrying them (docs/otp-limits-and-mail.md §2, §4). */
export interface OtpLimits {
  /** Wrong codes per contact (all organizations, all codes) per guess window. */
  guessesPerContact: number;
  guessWindowSeconds: number;
  /** init_otp per contact (all organizations) per hour. */
  initiationsPerContactPerHour: number;
  /** Messages to one email address or phone number per hour. */
  sendsPerRecipientPerHour: number;
  /** Messages per organization tree (counted on its top-level organization) per hour. */
  sendsPerOrganizationPerHour: number;
}

export const DEFAULT_OTP_LIMITS: OtpLimits = {
  guessesPerContact: 5,
  guessWindowSeconds: 15 * 60,
  initiationsPerContactPerHour: 10,
  sendsPerRecipientPerHour: 10,
  sendsPerOrganizationPerHour: 1000,
};

/** Default of SIGIL_UNPROVED_KEY_LOGIN_WINDOW_SECONDS: long enough for core's sign-up-then-login (docs/login-lookups.md §3). */
export const DEFAULT_UNPROVED_KEY_WINDOW_MS = 2 * 60_000;

export interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Defaults for harnesses that configure nothing: no OTP delivery, any RP id and origin. */
export const DEFAULT_LOGIN_SETTINGS: LoginSettings = { sessionMaxSeconds: 30 * 86400, webauthn: { origins: [] } };
