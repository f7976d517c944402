// The signers per curve (docs/signing.md §2.1), as the SDK reads their result
// (v1SignRawPayloadResult {r, s, v}): secp256k1 ECDSA with a low S and the recovery id as v
// ("00" / "01"), ed25519 with r and s the two 32-byte halves of the signature and v empty.
import { ed25519 } from "@noble/curves/ed25519.js";
import { secp256k1 } from "@noble/curves/secp256k1.js";

export type SigningCurve = "CURVE_SECP256K1" | "CURVE_ED25519";

/** A signing key as checks before authorization see it: its curve and public key (stored form, hex). */
export interface SignerKey {
  curve: SigningCurve;
  publicKey: string;
}

export interface RawSignature {
  r: string;
  s: string;
  v: string;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

// A secp256k1 signature is one multiplication of the base point, the cost of signing
// (docs/signing.md §5): 8-bit windows instead of the library's 6 make it ~20% cheaper for
// ~4 MiB of tables, built on the first use (~0.2 s) rather than at start.
secp256k1.Point.BASE.precompute(8, true);

/** Signs `input` (secp256k1: the 32-byte digest; ed25519: the message) with a raw private key. */
export function signWithKey(curve: SigningCurve, privateKey: Uint8Array, input: Uint8Array): RawSignature {
  if (curve === "CURVE_ED25519") {
    const sig = ed25519.sign(input, privateKey);
    return { r: hex(sig.subarray(0, 32)), s: hex(sig.subarray(32, 64)), v: "" };
  }
  // `prehash: false`: the input is the digest. "recovered" is recovery ‖ r ‖ s; S is low by default.
  const sig = secp256k1.sign(input, privateKey, { prehash: false, format: "recovered", lowS: true });
  return { r: hex(sig.subarray(1, 33)), s: hex(sig.subarray(33, 65)), v: sig[0]!.toString(16).padStart(2, "0") };
}

/** A new random private key of the curve and its public key (compressed for secp256k1). */
export function newKeyPair(curve: SigningCurve): { privateKey: Uint8Array; publicKey: Uint8Array } {
  if (curve === "CURVE_ED25519") {
    const privateKey = ed25519.utils.randomSecretKey();
    return { privateKey, publicKey: ed25519.getPublicKey(privateKey) };
  }
  const privateKey = secp256k1.utils.randomSecretKey();
  return { privateKey, publicKey: secp256k1.getPublicKey(privateKey, true) };
}

/**
 * The key pair of a given private key (an imported one, docs/export-import.md §3.5); undefined
 * when the bytes are not a private key of the curve (secp256k1: a scalar in 1..n-1; ed25519: a
 * 32-byte seed).
 */
export function keyPairOf(curve: SigningCurve, privateKey: Uint8Array): { privateKey: Uint8Array; publicKey: Uint8Array } | undefined {
  if (privateKey.length !== 32) return undefined;
  if (curve === "CURVE_ED25519") return { privateKey, publicKey: ed25519.getPublicKey(privateKey) };
  if (!secp256k1.utils.isValidSecretKey(privateKey)) return undefined;
  return { privateKey, publicKey: secp256k1.getPublicKey(privateKey, true) };
}
