// What the auth proxy forwards (docs/auth-proxy.md §2): the one list both sides read. The
// proxy's policy in its organization allows its key these activity types and nothing else,
// and the proxy refuses to send any other.
export const FORWARDED_ACTIVITY_TYPES = [
  "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7",
  "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8",
  "ACTIVITY_TYPE_INIT_OTP_V3",
  "ACTIVITY_TYPE_VERIFY_OTP",
  "ACTIVITY_TYPE_VERIFY_OTP_V2",
  "ACTIVITY_TYPE_OTP_LOGIN",
  "ACTIVITY_TYPE_OTP_LOGIN_V2",
  "ACTIVITY_TYPE_OAUTH2_AUTHENTICATE",
  "ACTIVITY_TYPE_OAUTH_LOGIN",
] as const;

export type ForwardedActivityType = (typeof FORWARDED_ACTIVITY_TYPES)[number];

/** Queries the proxy sends (reads every user of the organization may make). */
export const FORWARDED_QUERIES = ["list_suborgs", "list_verified_suborgs", "list_oauth2_credentials"] as const;
