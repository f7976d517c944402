// Verified sign-up (docs/organizations.md §1.3): create_sub_organization with a
// verificationToken marks the contact it proves verified on the root user who carries it.
// Our tokens are always bound to a key (verify_otp's public_key), so a clientSignature by
// that key is required: a TokenUsage message of type USAGE_TYPE_SIGNUP naming the token and
// describing the account being created, as @turnkey/core's getClientSignatureMessageForSignup
// builds it —
//   {"signupV2":{apiKeys?,authenticators?,oauthProviders?,email?,phoneNumber?},"tokenId":…,"type":"USAGE_TYPE_SIGNUP"}
// (V8; V7 carries the same under "signup"). The message must describe the root user holding
// the contact exactly: the same email and phone number (present in both or in neither) and
// the same API keys, passkeys and OAuth providers, in order. Whoever holds the token's key
// thereby consents to this account and no other; a stolen token alone signs up nothing.
import { Type } from "@sinclair/typebox";
import { invalid } from "../../errors.ts";
import { HexPublicKey } from "../../schemas/common.ts";
import { requireToken } from "../verification-tokens.ts";
import { readClientSignature } from "../../auth/tokens.ts";
import type { VerificationClaims } from "../../auth/tokens.ts";
import type { ExecuteContext } from "../define.ts";
import { contactKindOf, contactWord, sameContact, type ContactKind } from "../users/contact-verification.ts";

/** v1ClientSignature. */
export const ClientSignatureParams = Type.Object({
  publicKey: HexPublicKey,
  scheme: Type.Literal("CLIENT_SIGNATURE_SCHEME_API_P256", { errorMessage: "must be CLIENT_SIGNATURE_SCHEME_API_P256" }),
  // The message carries the account's passkey attestations: room for several.
  message: Type.String({
    minLength: 1,
    maxLength: 262_144,
    errorMessage: "must be the signed TokenUsage message (JSON text, at most 262144 characters)",
  }),
  signature: Type.String({
    minLength: 1,
    maxLength: 256,
    pattern: "^[0-9a-fA-F]+$",
    errorMessage: "must be a hex-encoded P-256 signature",
  }),
});

/** What sign-up needs of a root user (RootUserParamsV4/V5). */
export interface SignupUser {
  userEmail?: string | undefined;
  userPhoneNumber?: string | undefined;
  apiKeys: readonly object[];
  authenticators: readonly unknown[];
  oauthProviders: readonly unknown[];
}

export interface VerifiedSignup {
  claims: VerificationClaims;
  /** Index in rootUsers of the user whose contact the token proves. */
  holder: number;
  kind: ContactKind;
}

const TOKEN = "parameters.verificationToken";
const SIGNATURE = "parameters.clientSignature";

/**
 * Checks the token, which root user it verifies and the client signature over the sign-up;
 * writes nothing (the caller binds the token and marks the contact once the users exist).
 */
export async function checkVerifiedSignup(
  ctx: ExecuteContext,
  p: { verificationToken: string; clientSignature?: typeof ClientSignatureParams.static | undefined; rootUsers: readonly SignupUser[] },
  usageKey: "signupV2" | "signup",
): Promise<VerifiedSignup> {
  const claims = await requireToken(ctx, p.verificationToken, TOKEN);
  const kind = contactKindOf(claims, TOKEN);
  const contactOf = (u: SignupUser) => (kind === "email" ? u.userEmail : u.userPhoneNumber);
  const holders = p.rootUsers.flatMap((u, i) => (sameContact(kind, contactOf(u), claims.contact) ? [i] : []));
  const word = contactWord(kind);
  if (holders.length === 0) {
    const userField = kind === "email" ? "userEmail" : "userPhoneNumber";
    throw invalid(`${TOKEN}: no root user has the ${word} the token verifies; it must be a root user's ${userField}`, [
      { field: TOKEN, description: `must verify the ${word} of a root user` },
    ]);
  }
  if (holders.length > 1) {
    throw invalid(`parameters.rootUsers: ${holders.length} root users have the verified ${word}; exactly one may`, [
      { field: "parameters.rootUsers", description: `exactly one root user may have the verified ${word}` },
    ]);
  }
  const holder = holders[0]!;
  if (!p.clientSignature) {
    throw invalid(`${SIGNATURE}: required with a verificationToken (the token is bound to a key, which must sign the sign-up)`, [
      { field: SIGNATURE, description: "required with verificationToken" },
    ]);
  }
  const read = readClientSignature(p.clientSignature, claims, "USAGE_TYPE_SIGNUP");
  if ("problem" in read) throw invalid(`${SIGNATURE}: ${read.problem}`, [{ field: SIGNATURE, description: read.problem }]);
  const usage = read.usage[usageKey];
  const at = `${SIGNATURE}.message.${usageKey}`;
  if (typeof usage !== "object" || usage === null || Array.isArray(usage)) {
    throw invalid(`${SIGNATURE}.message: must describe the sign-up under "${usageKey}"`, [{ field: at, description: "must be an object" }]);
  }
  const mismatches = signupMismatches(usage as Record<string, unknown>, p.rootUsers[holder]!);
  if (mismatches.length) {
    const userAt = `parameters.rootUsers[${holder}]`;
    const which = mismatches.map((m) => `${usageKey}.${m.usage}`).join(", ");
    throw invalid(
      `${SIGNATURE}: the signed sign-up does not match the request (${which})`,
      mismatches.map((m) => ({ field: `${at}.${m.usage}`, description: `does not match ${userAt}.${m.param}` })),
    );
  }
  return { claims, holder, kind };
}

/** The fields each listed item is compared on (what the request keeps of it). */
const ITEM_FIELDS = new Map<string, readonly string[]>([
  ["apiKeys", ["apiKeyName", "publicKey", "curveType", "expirationSeconds"]],
  ["authenticators", ["authenticatorName", "challenge", "attestation"]],
  ["oauthProviders", ["providerName", "oidcToken", "oidcClaims"]],
]);

/** Which usage fields differ from the root user (usage name, parameter name). */
export function signupMismatches(usage: Record<string, unknown>, user: SignupUser): { usage: string; param: string }[] {
  const out: { usage: string; param: string }[] = [];
  // Core includes email / phoneNumber only when set: absent in the usage = absent on the user.
  if (!sameOptional("email", usage.email, user.userEmail)) out.push({ usage: "email", param: "userEmail" });
  if (!sameOptional("phone", usage.phoneNumber, user.userPhoneNumber)) out.push({ usage: "phoneNumber", param: "userPhoneNumber" });
  const lists: [string, readonly unknown[]][] = [
    ["apiKeys", user.apiKeys],
    ["authenticators", user.authenticators],
    ["oauthProviders", user.oauthProviders],
  ];
  for (const [name, items] of lists) {
    // Core always sends the three lists; an absent one is empty.
    const signed = Object.hasOwn(usage, name) ? usage[name] : [];
    if (!Array.isArray(signed) || signed.length !== items.length) {
      out.push({ usage: name, param: name });
      continue;
    }
    const fields = ITEM_FIELDS.get(name)!;
    if (signed.some((s, i) => canonical(project(name, s, fields)) !== canonical(project(name, items[i], fields))))
      out.push({ usage: name, param: name });
  }
  return out;
}

function sameOptional(kind: ContactKind, signed: unknown, actual: string | undefined): boolean {
  const s = typeof signed === "string" && signed !== "" ? signed : undefined;
  if (signed !== undefined && signed !== "" && s === undefined) return false;
  if (s === undefined || !actual) return s === undefined && !actual;
  return sameContact(kind, s, actual);
}

/** The item reduced to the compared fields (absent ones dropped); public keys compared case-insensitively. */
function project(list: string, item: unknown, fields: readonly string[]): unknown {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return item;
  const o = item as Record<string, unknown>;
  const out = new Map<string, unknown>();
  for (const f of fields) {
    if (!Object.hasOwn(o, f) || o[f] === undefined) continue;
    const v = o[f];
    out.set(f, list === "apiKeys" && f === "publicKey" && typeof v === "string" ? v.toLowerCase() : v);
  }
  return Object.fromEntries(out);
}

/**
 * JSON text with object keys sorted at every level: equal values, equal text. The signed
 * message may nest arbitrarily deep (request bodies may not: 64 levels), so past that depth
 * a marker that is not JSON stands in: it never equals what a request holds, and the
 * recursion stays bounded.
 */
function canonical(v: unknown, depth = 0): string {
  if (depth > 64) return "<too deep>";
  if (Array.isArray(v)) return `[${v.map((x) => canonical(x, depth + 1)).join(",")}]`;
  if (typeof v === "object" && v !== null) {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k], depth + 1)}`)
      .join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}
