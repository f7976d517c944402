// The shapes of MFA methods and steps (docs/mfa.md §2), shared by the store and the gate.

/** v1AuthenticationType, in the SDK's order. */
export const AUTHENTICATION_TYPES = [
  "AUTHENTICATION_TYPE_EMAIL_OTP",
  "AUTHENTICATION_TYPE_SMS_OTP",
  "AUTHENTICATION_TYPE_PASSKEY",
  "AUTHENTICATION_TYPE_API_KEY",
  "AUTHENTICATION_TYPE_OAUTH",
  "AUTHENTICATION_TYPE_SESSION",
] as const;
export type AuthenticationType = (typeof AUTHENTICATION_TYPES)[number];

/** One method as stored and shown (v1AuthenticationMethod). */
export interface Method {
  type: AuthenticationType;
  id?: string;
}
export interface Step {
  any: Method[];
}

/** A method a request proved: what it shows, and the credential that proved it (one credential meets one step). */
export interface Proof extends Method {
  credential: string;
}

/** The method as the API shows it (no credential). */
export const methodView = (m: Method): Method => (m.id !== undefined ? { type: m.type, id: m.id } : { type: m.type });
