// Parsing and verifying with the public keys clients register (API keys). Keys arrive as hex;
// we wrap the raw point in a SubjectPublicKeyInfo so OpenSSL (node:crypto) does the math:
// it is ~20x faster than pure-JS ECDSA and, like the SDK's own verifier, accepts high-S
// signatures (the SDK's node stamper produces them about half the time).
import { createPublicKey, verify, type KeyObject } from "node:crypto";
import { promisify } from "node:util";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { Lru } from "../cache/lru.ts";

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
const cache = new Lru<KeyObject>(MAX_CACHED);

export function keyObject(curve: Curve, hex: string): KeyObject {
  const id = curve + hex;
  let key = cache.get(id);
  if (!key) {
    key = createPublicKey({ key: spki(curve, hex.toLowerCase()), format: "der", type: "spki" });
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
export async function verifySignature(curve: Curve, publicKeyHex: string, message: Buffer, signatureHex: string): Promise<boolean> {
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

/** The digest an Ethereum wallet's `personal_sign` signs: keccak-256 of the EIP-191 envelope. */
export function personalSignDigest(message: Buffer): Uint8Array {
  const prefix = Buffer.from(`\x19Ethereum Signed Message:\n${message.length}`, "utf8");
  return keccak_256(Buffer.concat([prefix, message]));
}

/**
 * r‖s (64 bytes) from a DER `SEQUENCE { INTEGER r, INTEGER s }`, read leniently: an integer
 * may carry redundant leading zero bytes. @turnkey/crypto's toDerSignature, which the wallet
 * stamper uses, keeps a leading 00 byte of r or s as it is, so about one stamp in 256 is not
 * minimal DER; a strict parser would refuse it (docs/stamps.md §2.5). Null when malformed.
 */
function compactFromLenientDer(der: Buffer): Uint8Array | null {
  if (der.length < 8 || der[0] !== 0x30 || der[1] !== der.length - 2) return null;
  const out = new Uint8Array(64);
  let at = 2;
  for (const half of [0, 1]) {
    if (der[at] !== 0x02) return null;
    const len = der[at + 1]!;
    if (len === 0 || len > 0x7f || at + 2 + len > der.length) return null;
    let int = der.subarray(at + 2, at + 2 + len);
    if (int[0]! & 0x80) return null; // negative
    while (int.length > 1 && int[0] === 0) int = int.subarray(1);
    if (int.length > 32) return null;
    out.set(int, half * 32 + 32 - int.length);
    at += 2 + len;
  }
  return at === der.length ? out : null;
}

/**
 * Verifies a secp256k1 DER signature (hex) over the EIP-191 `personal_sign` digest of
 * `message` (docs/stamps.md §2.5). OpenSSL cannot verify a digest it did not compute, so
 * this is noble's pure-JS ECDSA, synchronous; high-S signatures are accepted as for every
 * other scheme. Never throws.
 */
export function verifyPersonalSignSignature(publicKeyHex: string, message: Buffer, signatureHex: string): boolean {
  if (!HEX.test(signatureHex) || signatureHex.length % 2 !== 0 || signatureHex.length === 0) return false;
  if (!HEX.test(publicKeyHex) || publicKeyHex.length % 2 !== 0) return false;
  const compact = compactFromLenientDer(Buffer.from(signatureHex, "hex"));
  if (!compact) return false;
  try {
    return secp256k1.verify(compact, personalSignDigest(message), Buffer.from(publicKeyHex, "hex"), {
      prehash: false,
      lowS: false,
      format: "compact",
    });
  } catch {
    return false;
  }
}
