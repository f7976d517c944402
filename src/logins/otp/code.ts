// OTP codes: generated without bias, never stored — only a keyed digest bound to the OTP's
// id (so a digest copied to another row does not match) is kept, and a submitted code is
// compared with it in constant time. Without the master key the digest cannot be searched
// through the small code space.
import { createHash, createHmac, randomInt, timingSafeEqual } from "node:crypto";
import type { MasterKey } from "../../crypto/envelope.ts";

/** Crockford's Base32 alphabet: digits and upper-case letters without I, L, O, U. */
export const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const DIGITS = "0123456789";

export const MIN_OTP_LENGTH = 6;
export const MAX_OTP_LENGTH = 9;
export const DEFAULT_OTP_LENGTH = 9;

/** A fresh code; randomInt draws each character uniformly (rejection sampling, no modulo bias). */
export function generateCode(length: number, alphanumeric: boolean): string {
  const alphabet = alphanumeric ? CROCKFORD : DIGITS;
  let code = "";
  for (let i = 0; i < length; i++) code += alphabet[randomInt(alphabet.length)];
  return code;
}

/**
 * What a person may type for a code: Crockford decoding is case-insensitive and reads I and L
 * as 1, O as 0 (numeric codes are unaffected).
 */
export function normalizeCode(code: string): string {
  return code.trim().toUpperCase().replace(/[IL]/g, "1").replace(/O/g, "0");
}

// The digest key is derived from the master key, never the master key itself.
const keys = new WeakMap<MasterKey, Buffer>();
function digestKey(master: MasterKey): Buffer {
  let k = keys.get(master);
  if (!k) {
    k = createHash("sha256").update("sigil-otp-code-digest-v1\0").update(master.rootSecret()).digest();
    keys.set(master, k);
  }
  return k;
}

/** HMAC-SHA256 of the (normalized) code, bound to the OTP id; hex. */
export function codeDigest(master: MasterKey, otpId: string, code: string): string {
  return createHmac("sha256", digestKey(master))
    .update(`${otpId}\0${normalizeCode(code)}`)
    .digest("hex");
}

/** Whether `code` is the one whose digest is stored, in constant time. */
export function codeMatches(master: MasterKey, otpId: string, code: string, storedDigest: string): boolean {
  const a = Buffer.from(codeDigest(master, otpId, code), "hex");
  const b = Buffer.from(storedDigest, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}
