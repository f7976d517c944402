// Parsing and verifying with the public keys clients register (API keys). Keys arrive as hex;
// we wrap the raw point in a SubjectPublicKeyInfo so OpenSSL (node:crypto) does the math:
// it is ~20x faster than pure-JS ECDSA and, like the SDK's own verifier, accepts high-S
// signatures (the SDK's node stamper produces them about half the time).
import { createPublicKey, verify, type KeyObject } from "node:crypto";
import { promisify } from "node:util";

export type Curve = "API_KEY_CURVE_P256" | "API_KEY_CURVE_SECP256K1" | "API_KEY_CURVE_ED25519";

const SPKI_PREFIX: Record<Curve, { compressed?: string; uncompressed?: string; raw?: string }> = {
  API_KEY_CURVE_P256: {
    compressed: "3039301306072a8648ce3d020106082a8648ce3d030107032200",
    uncompressed: "3059301306072a8648ce3d020106082a8648ce3d030107034200",
  },
  API_KEY_CURVE_SECP256K1: {
    compressed: "3036301006072a8648ce3d020106052b8104000a032200",
    uncompressed: "3056301006072a8648ce3d020106052b8104000a034200",
  },
  API_KEY_CURVE_ED25519: { raw: "302a300506032b6570032100" },
};

const HEX = /^[0-9a-fA-F]*$/;

/** Why a public key string is unacceptable for a curve, or null when it is fine. */
export function publicKeyProblem(curve: Curve, hex: string): string | null {
  if (!HEX.test(hex)) return "public key must be hex";
  if (curve === "API_KEY_CURVE_ED25519") {
    if (hex.length !== 64) return "ed25519 public key must be 32 bytes (64 hex characters)";
  } else if (hex.length === 66) {
    if (!/^0[23]/.test(hex)) return "compressed public key must start with 02 or 03";
  } else if (hex.length === 130) {
    if (!hex.startsWith("04")) return "uncompressed public key must start with 04";
  } else {
    return "public key must be a compressed (33-byte) or uncompressed (65-byte) point in hex";
  }
  try {
    keyObject(curve, hex);
  } catch {
    return "public key is not a valid point on the curve";
  }
  return null;
}

function spki(curve: Curve, hex: string): Buffer {
  const p = SPKI_PREFIX[curve];
  const prefix = curve === "API_KEY_CURVE_ED25519" ? p.raw : hex.length === 66 ? p.compressed : p.uncompressed;
  if (!prefix) throw new Error("unsupported key encoding");
  return Buffer.from(prefix + hex, "hex");
}

// Bounded cache of imported keys: importing costs more than verifying. Keys are public
// and immutable, so a cached entry can never be stale; the bound keeps attacker-chosen
// keys from growing it without limit.
const MAX_CACHED = 10_000;
const cache = new Map<string, KeyObject>();

export function keyObject(curve: Curve, hex: string): KeyObject {
  const id = curve + hex;
  let key = cache.get(id);
  if (!key) {
    key = createPublicKey({ key: spki(curve, hex.toLowerCase()), format: "der", type: "spki" });
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
    cache.set(id, key);
  }
  return key;
}

const verifyInPool = promisify(verify) as (
  algorithm: string | null,
  data: Buffer,
  key: KeyObject | { key: KeyObject; dsaEncoding: "der" },
  signature: Buffer,
) => Promise<boolean>;

/**
 * Verifies `signatureHex` over `message` with a registered key. ECDSA curves take a DER
 * signature over SHA-256(message); Ed25519 signs the message itself. Never throws: a
 * malformed key or signature is simply not a valid signature.
 *
 * Runs on libuv's thread pool: the event loop keeps serving requests while OpenSSL works,
 * so verification uses the machine's other cores. It is the largest single cost of a
 * stamped request (about a third of a query's CPU time when run inline).
 */
export async function verifySignature(
  curve: Curve,
  publicKeyHex: string,
  message: Buffer,
  signatureHex: string,
): Promise<boolean> {
  if (!HEX.test(signatureHex) || signatureHex.length % 2 !== 0 || signatureHex.length === 0) return false;
  try {
    const key = keyObject(curve, publicKeyHex);
    const sig = Buffer.from(signatureHex, "hex");
    if (curve === "API_KEY_CURVE_ED25519") return await verifyInPool(null, message, key, sig);
    return await verifyInPool("sha256", message, { key, dsaEncoding: "der" }, sig);
  } catch {
    return false;
  }
}
