// The two JWTs the service signs with its P-256 keys, in the exact forms the SDK checks:
//   session token (docs/logins.md §2.3): header {"alg":"ES256","typ":"JWT"}, raw r‖s over
//     SHA-256(SHA-256("header.payload")) — what @turnkey/crypto's verifySessionJwtSignature
//     checks (a standard ES256 library does not verify it);
//   verification token (docs/logins.md §3.5): header {"typ":"JWT","alg":"ES256"}, a standard ES256 JWT
//     (raw r‖s over SHA-256("header.payload")) with string claims, `exp` in epoch ms —
//     what verifyOtpVerificationToken checks.
// Both payloads must survive core's `atob` (which refuses '-' and '_'), see atobSafe.
import { randomUUID } from "node:crypto";
import { sha256, signP256, verifyP256 } from "../crypto/p256.ts";
import type { OtpType } from "../store/schema.ts";
import type { ServiceKey } from "./service-keys.ts";

const b64url = (b: Buffer | string) => Buffer.from(b).toString("base64url");

/**
 * base64url of a JSON text of `claims` that has no '-' or '_' (browsers' atob, which core
 * uses to read token payloads, refuses them). Which base64 characters appear depends on
 * each byte's alignment, so the text is searched for: spaces may go before structural
 * characters, and any character of a string may be written as a \uXXXX escape (lower- or
 * upper-case hex). Any JSON parser reads the same claims. A depth-first search that drops a
 * branch as soon as a completed 3-byte group would encode badly finds one at once (linear in
 * practice: each character has a choice that fits).
 */
export function atobSafe(claims: Record<string, unknown>): string {
  const json = JSON.stringify(claims);
  const out: number[] = [];
  const groupOk = (a: number, b: number, c: number) => {
    const n = (a << 16) | (b << 8) | c;
    for (const shift of [18, 12, 6, 0]) if (((n >> shift) & 63) >= 62) return false;
    return true;
  };
  // Groups completed since `from` bytes are fine?
  const fresh = (from: number) => {
    for (let g = Math.floor(from / 3) * 3; g + 3 <= out.length; g += 3) if (!groupOk(out[g]!, out[g + 1]!, out[g + 2]!)) return false;
    return true;
  };
  const tailOk = () => {
    const rest = out.length % 3;
    if (rest === 0) return true;
    const g = out.length - rest;
    // Only the characters actually emitted for a partial group matter (2 or 3 of them).
    const n = (out[g]! << 16) | ((out[g + 1] ?? 0) << 8);
    const shifts = rest === 1 ? [18, 12] : [18, 12, 6];
    return shifts.every((s) => ((n >> s) & 63) < 62);
  };
  const hex4 = (code: number) => code.toString(16).padStart(4, "0");
  function options(i: number, inString: boolean): { texts: string[]; next: number; inString: boolean } {
    const c = json[i]!;
    if (!inString) {
      const opensString = c === '"';
      const texts = /[{}[\],:"]/.test(c) ? [c, ` ${c}`, `  ${c}`] : [c];
      return { texts, next: i + 1, inString: opensString };
    }
    if (c === '"') return { texts: [c], next: i + 1, inString: false };
    let code: number;
    let len: number;
    let original: string;
    if (c === "\\") {
      const e = json[i + 1]!;
      len = e === "u" ? 6 : 2;
      original = json.slice(i, i + len);
      code = e === "u" ? parseInt(json.slice(i + 2, i + 6), 16) : (JSON.parse(`"${original}"`) as string).charCodeAt(0);
    } else {
      len = 1;
      original = c;
      code = c.charCodeAt(0);
    }
    const h = hex4(code);
    return { texts: [...new Set([original, `\\u${h}`, `\\u${h.toUpperCase()}`])], next: i + len, inString: true };
  }
  // Depth-first with an explicit stack, not recursion: the search is one level per character,
  // and a session's claims carry its profile's scope (thousands of characters), which would
  // overflow the call stack (a 500 for the login).
  interface Frame {
    o: ReturnType<typeof options>;
    tried: number;
    mark: number;
  }
  function search(): boolean {
    let steps = 400_000;
    const stack: Frame[] = [{ o: options(0, false), tried: 0, mark: out.length }];
    while (stack.length > 0) {
      if (--steps < 0) return false;
      const f = stack[stack.length - 1]!;
      out.length = f.mark;
      if (f.tried === f.o.texts.length) {
        stack.pop();
        continue;
      }
      out.push(...Buffer.from(f.o.texts[f.tried++]!, "utf8"));
      if (!fresh(f.mark)) continue;
      if (f.o.next === json.length) {
        if (tailOk()) return true;
        continue;
      }
      stack.push({ o: options(f.o.next, f.o.inString), tried: 0, mark: out.length });
    }
    return false;
  }
  if (!search()) throw new Error("could not encode the token payload for atob");
  return Buffer.from(out).toString("base64url");
}

export interface SessionClaims {
  /** Expiry, epoch seconds. */
  exp: number;
  /** Compressed P-256 hex: the session key. */
  public_key: string;
  /** SESSION_TYPE_READ_WRITE, or for a session issued with a profile the profile's name (docs/sessions-and-network.md §6.2). */
  session_type: string;
  user_id: string;
  /** The organization the user lives in. */
  organization_id: string;
  session_profile_id?: string;
  /** The profile's scope, as written (clients may read what the session may do). */
  scope?: string;
}

export function signSessionJwt(key: ServiceKey, claims: SessionClaims): string {
  const input = `${b64url(JSON.stringify({ alg: "ES256", typ: "JWT" }))}.${atobSafe({ ...claims })}`;
  // signP256 hashes once more: the signature is over SHA-256(SHA-256(input)).
  return `${input}.${b64url(signP256(key.signer, sha256(input), "raw"))}`;
}

export interface VerificationClaims {
  /** Epoch ms, as a string. */
  exp: string;
  id: string;
  organization_id: string;
  verification_type: OtpType;
  contact: string;
  /** Compressed P-256 hex the token is bound to. */
  public_key: string;
}

export function signVerificationToken(
  key: ServiceKey,
  claims: Omit<VerificationClaims, "id"> & { id?: string },
): { token: string; claims: VerificationClaims } {
  const full: VerificationClaims = {
    exp: claims.exp,
    id: claims.id ?? randomUUID(),
    organization_id: claims.organization_id,
    verification_type: claims.verification_type,
    contact: claims.contact,
    public_key: claims.public_key,
  };
  const input = `${b64url(JSON.stringify({ typ: "JWT", alg: "ES256" }))}.${atobSafe({ ...full })}`;
  return { token: `${input}.${b64url(signP256(key.signer, Buffer.from(input), "raw"))}`, claims: full };
}

const FIELDS = ["exp", "id", "organization_id", "verification_type", "contact", "public_key"] as const;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * A compact JWS split and read: its header and payload (JSON objects), the signed input
 * (`header.payload` as sent) and the raw signature. Undefined when it is not three parts whose
 * first two are JSON objects. Nothing is verified here.
 */
export function jwtParts(
  token: string,
): { header: Record<string, unknown>; payload: Record<string, unknown>; input: string; signature: Buffer } | undefined {
  const parts = token.split(".");
  if (parts.length !== 3) return undefined;
  try {
    const header: unknown = JSON.parse(Buffer.from(parts[0]!, "base64url").toString("utf8"));
    const payload: unknown = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8"));
    if (!isObject(header) || !isObject(payload)) return undefined;
    return { header, payload, input: `${parts[0]}.${parts[1]}`, signature: Buffer.from(parts[2]!, "base64url") };
  } catch {
    return undefined;
  }
}

/**
 * The claims of a verification token whose signature one of `publicKeys` (uncompressed hex:
 * the VERIFICATION_TOKEN keys, active and published) verifies; why not, otherwise. Expiry is
 * checked against `now` (ms). No store access: the caller checks the token's record.
 */
export function readVerificationToken(
  token: string,
  publicKeys: readonly string[],
  now: number,
): { claims: VerificationClaims } | { problem: string } {
  if (typeof token !== "string" || token.length > 8192) return { problem: "malformed verification token" };
  const jwt = jwtParts(token);
  if (!jwt) return { problem: "malformed verification token" };
  const { header, payload, signature: sig } = jwt;
  if (header.alg !== "ES256" || header.typ !== "JWT") return { problem: "verification token must be an ES256 JWT" };
  if (sig.length !== 64) return { problem: "invalid verification token signature" };
  const input = Buffer.from(jwt.input);
  if (!publicKeys.some((k) => verifyP256(k, input, sig.toString("hex")))) return { problem: "invalid verification token signature" };
  for (const f of FIELDS) {
    if (typeof payload[f] !== "string" || payload[f] === "") return { problem: `verification token claim ${f} is missing` };
  }
  const claims = payload as unknown as VerificationClaims;
  if (!/^\d+$/.test(claims.exp) || Number(claims.exp) <= now) return { problem: "verification token has expired" };
  return { claims };
}

/** What a client signature (docs/logins.md §3.6) is over: a TokenUsage message, as JSON text. */
export interface ClientSignature {
  publicKey: string;
  scheme: string;
  message: string;
  signature: string;
}

/**
 * Checks a client signature made with the verification token's key over a TokenUsage
 * message, and returns the parsed message; why not, otherwise. The usage's `type` and
 * `tokenId` are checked here; what it says (login.publicKey, signupV2 …) is the caller's.
 */
export function readClientSignature(
  sig: ClientSignature,
  token: VerificationClaims,
  type: "USAGE_TYPE_LOGIN" | "USAGE_TYPE_SIGNUP",
): { usage: Record<string, unknown> } | { problem: string } {
  if (sig.scheme !== "CLIENT_SIGNATURE_SCHEME_API_P256")
    return { problem: "clientSignature.scheme must be CLIENT_SIGNATURE_SCHEME_API_P256" };
  if (sig.publicKey.toLowerCase() !== token.public_key.toLowerCase()) {
    return { problem: "clientSignature.publicKey must be the public key the verification token is bound to" };
  }
  if (!verifyP256(sig.publicKey, Buffer.from(sig.message, "utf8"), sig.signature)) return { problem: "invalid client signature" };
  let usage: unknown;
  try {
    usage = JSON.parse(sig.message);
  } catch {
    return { problem: "clientSignature.message must be JSON" };
  }
  if (typeof usage !== "object" || usage === null || Array.isArray(usage))
    return { problem: "clientSignature.message must be a JSON object" };
  const u = usage as Record<string, unknown>;
  if (u.type !== type) return { problem: `clientSignature.message.type must be ${type}` };
  if (u.tokenId !== token.id) return { problem: "clientSignature.message.tokenId does not name this verification token" };
  return { usage: u };
}
