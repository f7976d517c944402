// TVC operator and quorum keys (docs/tvc.md §2.2): P-256 points in hex, compressed (33 bytes) or
// uncompressed (65 bytes). One operator is one point, whatever encoding named it, so keys are
// stored in one form — compressed, lower-case — and an organization's unique index on it
// catches the same key given both ways. Approvals are DER ECDSA P-256 / SHA-256 signatures
// over the manifest's exact bytes (tvc/manifest.ts).
import { verify } from "node:crypto";
import { publicKeyProblem, keyObject } from "../crypto/public-keys.ts";

/** Why `hex` is not a P-256 public key, or null when it is one. */
export function p256KeyProblem(hex: string): string | null {
  return publicKeyProblem("API_KEY_CURVE_P256", hex);
}

/** The compressed lower-case hex of a valid P-256 public key (throws on an invalid one: check first). */
export function normalizeP256Key(hex: string): string {
  const key = keyObject("API_KEY_CURVE_P256", hex.toLowerCase());
  const jwk = key.export({ format: "jwk" });
  const x = Buffer.from(jwk.x!, "base64url").toString("hex").padStart(64, "0");
  const y = Buffer.from(jwk.y!, "base64url");
  return ((y[y.length - 1]! & 1) === 1 ? "03" : "02") + x;
}

/** Why a signature string cannot be a DER ECDSA signature (hex), or null when it may be one. */
export function derSignatureProblem(hex: string): string | null {
  if (!/^[0-9a-fA-F]*$/.test(hex) || hex.length % 2 !== 0 || hex.length === 0) return "must be an even-length hex string";
  const b = Buffer.from(hex, "hex");
  // SEQUENCE { INTEGER r, INTEGER s }: 8 to 72 bytes, short-form lengths only for P-256.
  if (b.length < 8 || b.length > 72 || b[0] !== 0x30 || b[1] !== b.length - 2)
    return "must be a DER-encoded ECDSA signature (SEQUENCE of r and s)";
  let at = 2;
  for (let i = 0; i < 2; i++) {
    if (b[at] !== 0x02) return "must be a DER-encoded ECDSA signature (SEQUENCE of r and s)";
    const len = b[at + 1]!;
    if (len < 1 || len > 33 || at + 2 + len > b.length) return "must be a DER-encoded ECDSA signature (SEQUENCE of r and s)";
    at += 2 + len;
  }
  if (at !== b.length) return "must be a DER-encoded ECDSA signature (no trailing bytes)";
  return null;
}

/**
 * Whether `signatureHex` (DER only: a raw r‖s signature is refused, so one encoding is the
 * contract) verifies over SHA-256(`bytes`) with the operator's key. Never throws.
 */
export function verifyOperatorSignature(publicKeyHex: string, bytes: Buffer, signatureHex: string): boolean {
  if (derSignatureProblem(signatureHex) !== null) return false;
  try {
    return verify(
      "sha256",
      bytes,
      { key: keyObject("API_KEY_CURVE_P256", publicKeyHex.toLowerCase()), dsaEncoding: "der" },
      Buffer.from(signatureHex, "hex"),
    );
  } catch {
    return false;
  }
}
