// Request bodies of the auth proxy endpoints (docs/auth-proxy-service.md §2): each field the
// SDK sends (SDK types of auth_proxy: v1SignupRequest, v1OtpInitRequest, …) with its type,
// whether it is required, and a size bound. Fields not listed are tolerated and dropped: only
// the listed ones are read, and own properties only (a body's "__proto__" names nothing).
import { invalid, type FieldViolation } from "../errors.ts";

type FieldType = "string" | "boolean" | "array" | "object";

export interface FieldSpec {
  type: FieldType;
  required?: boolean;
  /** Strings: characters; arrays: items. */
  max?: number;
}

export type BodySpec = Readonly<Record<string, FieldSpec>>;

/** Strings the proxy passes on whole (tokens, bundles): the API bounds them more tightly. */
export const LONG = 16_384;
export const SHORT = 256;

function typeOf(v: unknown): FieldType | "other" {
  if (typeof v === "string") return "string";
  if (typeof v === "boolean") return "boolean";
  if (Array.isArray(v)) return "array";
  if (v !== null && typeof v === "object") return "object";
  return "other";
}

/**
 * The listed fields of `body` (a JSON object), checked; 400 naming every field that is
 * missing or of the wrong type. Absent and null read as not given.
 */
export function readBody(body: unknown, spec: BodySpec): Record<string, unknown> {
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw invalid("the request body must be a JSON object");
  const src = body as Record<string, unknown>;
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  const violations: FieldViolation[] = [];
  for (const [name, f] of Object.entries(spec)) {
    const v = Object.hasOwn(src, name) ? src[name] : undefined;
    if (v === undefined || v === null) {
      if (f.required) violations.push({ field: name, description: "required" });
      continue;
    }
    const t = typeOf(v);
    if (t !== f.type) {
      violations.push({
        field: name,
        description: `must be ${f.type === "array" ? "an array" : f.type === "object" ? "an object" : `a ${f.type}`}`,
      });
      continue;
    }
    if (f.max !== undefined && (t === "string" || t === "array") && (v as string | unknown[]).length > f.max) {
      violations.push({ field: name, description: `at most ${f.max} ${t === "string" ? "characters" : "items"}` });
      continue;
    }
    out[name] = v;
  }
  if (violations.length)
    throw invalid(`invalid request body: ${violations.map((v) => `${v.field} ${v.description}`).join("; ")}`, violations);
  return out;
}

const str = (required = false, max = SHORT): FieldSpec => ({ type: "string", required, max });
const bool: FieldSpec = { type: "boolean" };
const obj: FieldSpec = { type: "object" };
const arr = (max = 100): FieldSpec => ({ type: "array", required: true, max });

export const ACCOUNT: BodySpec = {
  filterType: str(true, 64),
  filterValue: str(true, LONG),
  verificationToken: str(false, LONG),
  oidcToken: str(false, LONG),
};
export const OAUTH2_AUTHENTICATE: BodySpec = {
  provider: str(true, 64),
  authCode: str(true, 4096),
  redirectUri: str(true, 2048),
  codeVerifier: str(true, 256),
  nonce: str(true, 256),
  clientId: str(true, 1024),
};
export const OAUTH_LOGIN: BodySpec = {
  oidcToken: str(true, LONG),
  publicKey: str(true),
  invalidateExisting: bool,
  organizationId: str(false, 64),
};
export const OTP_INIT: BodySpec = { otpType: str(true, 64), contact: str(true, 254), emailCustomization: obj };
export const OTP_VERIFY: BodySpec = { otpId: str(true, 64), otpCode: str(true, 64), publicKey: str() };
export const OTP_VERIFY_V2: BodySpec = { otpId: str(true, 64), encryptedOtpBundle: str(true, LONG) };
export const OTP_LOGIN: BodySpec = {
  verificationToken: str(true, LONG),
  publicKey: str(true),
  invalidateExisting: bool,
  organizationId: str(false, 64),
  clientSignature: obj,
};
export const OTP_LOGIN_V2: BodySpec = { ...OTP_LOGIN, clientSignature: { type: "object", required: true } };
export const SIGNUP: BodySpec = {
  userEmail: str(false, 254),
  userPhoneNumber: str(false, 64),
  userTag: str(false, 256),
  userName: str(false, 256),
  organizationName: str(false, 256),
  verificationToken: str(false, LONG),
  apiKeys: arr(),
  authenticators: arr(),
  oauthProviders: arr(),
  wallet: obj,
  clientSignature: obj,
};
export const EMPTY: BodySpec = {};
