// The encodings WebAuthn fields arrive in. The web clients send base64url without padding;
// the swagger text says "base64", and React Native passes some values through as given. So
// every binary field is accepted in either alphabet, with or without padding, and compared
// only after decoding (or re-encoding canonically: b64url, no padding).
import { createHash } from "node:crypto";

const BASE64_ANY = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** The bytes of a base64 or base64url string (padding optional), or undefined when it is neither. */
export function decodeBase64Any(value: string): Buffer | undefined {
  if (!BASE64_ANY.test(value)) return undefined;
  const bare = value.replace(/=+$/, "");
  // One character left over cannot encode a byte: not base64 at all.
  if (bare.length % 4 === 1) return undefined;
  return Buffer.from(bare.replace(/\+/g, "-").replace(/\//g, "_"), "base64url");
}

/** Canonical form of a base64/base64url value: b64url of its bytes, no padding. */
export function canonicalB64url(value: string): string | undefined {
  const bytes = decodeBase64Any(value);
  return bytes === undefined ? undefined : bytes.toString("base64url");
}

export const sha256 = (data: Uint8Array | string): Buffer => createHash("sha256").update(data).digest();

/**
 * The challenge a passkey stamp must carry for a body (docs/stamps.md §3.2): the ASCII bytes of
 * the lowercase hex SHA-256 of the exact body — 64 bytes, not the 32 digest bytes.
 */
export function stampChallenge(rawBody: Uint8Array): Buffer {
  return Buffer.from(sha256(rawBody).toString("hex"), "ascii");
}
