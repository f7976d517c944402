// The signers per curve (docs/signing.md §2.1), as the SDK reads their result
// (v1SignRawPayloadResult {r, s, v}): secp256k1 ECDSA with a low S and the recovery id as v
// ("00" / "01"), ed25519 with r and s the two 32-byte halves of the signature and v empty.
import { ed25519 } from "@noble/curves/ed25519.js";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { signDigest } from "./secp256k1.ts";

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

// secp256k1 signatures come from libsecp256k1 (./secp256k1.ts: native, or WebAssembly where no
// native build exists), a fraction of the CPU of the pure-JS signer, which was most of a signing
// activity's cost (docs/signing.md §5). Key generation and derivation stay on @noble.

/** Signs `input` (secp256k1: the 32-byte digest; ed25519: the message) with a raw private key. */
export function signWithKey(curve: SigningCurve, privateKey: Uint8Array, input: Uint8Array): RawSignature {
  if (curve === "CURVE_ED25519") {
    const sig = ed25519.sign(input, privateKey);
    return { r: hex(sig.subarray(0, 32)), s: hex(sig.subarray(32, 64)), v: "" };
  }
  // The input is the 32-byte digest; the signature is r ‖ s with a low S, and the recovery id is v.
  const { signature, recoveryId } = signDigest(input, privateKey);
  return { r: hex(signature.subarray(0, 32)), s: hex(signature.subarray(32, 64)), v: recoveryId.toString(16).padStart(2, "0") };
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
