// What the login flows are configured with (sessions, passkeys, OTP delivery): built once
// from the configuration by `sigil serve` (configure-logins.ts; the test harnesses build their
// own) and handed to activities through their ExecuteContext. Types only: the transports
// import them, and this module imports no transport.
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
  /** OAuth providers, trusted issuers and Sigil's issuer URL (auth/oauth/settings.ts). Absent: built-in defaults (auth/oauth/configure.ts). */
  oauth?: OAuthSettings;
}

export interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Defaults for harnesses that configure nothing: no OTP delivery, any RP id and origin. */
export const DEFAULT_LOGIN_SETTINGS: LoginSettings = { sessionMaxSeconds: 30 * 86400, webauthn: { origins: [] } };
