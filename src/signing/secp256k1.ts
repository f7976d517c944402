// The secp256k1 ECDSA signer (docs/signing.md §5): libsecp256k1, the Bitcoin Core library —
// natively where the `secp256k1` package ships a build for this platform (prebuilt for
// Linux, macOS and Windows on x64; ~40 µs a signature here), else the same library compiled
// to WebAssembly (`tiny-secp256k1`, ~110 µs). Both derive the nonce by RFC 6979 and return
// a low S and the recovery id, so the bytes do not depend on which one loaded; a unit test
// holds each to the pure-JavaScript @noble/curves signer.
import { createRequire } from "node:module";
import { signRecoverable } from "tiny-secp256k1";

export interface RecoverableSignature {
  /** r ‖ s, 64 bytes, S low. */
  signature: Uint8Array;
  recoveryId: number;
}

type Sign = (digest: Uint8Array, privateKey: Uint8Array) => RecoverableSignature;

const wasm: Sign = (digest, privateKey) => {
  const { signature, recoveryId } = signRecoverable(digest, privateKey);
  return { signature, recoveryId };
};

/** The native binding, or undefined where the package has no build for this platform. */
function loadNative(): Sign | undefined {
  try {
    // The binding alone: the package's own entry point would fall back to a JavaScript signer.
    const native = createRequire(import.meta.url)("secp256k1/bindings") as {
      ecdsaSign(msg32: Uint8Array, key: Uint8Array): { signature: Uint8Array; recid: number };
    };
    return (digest, privateKey) => {
      const { signature, recid } = native.ecdsaSign(digest, privateKey);
      return { signature, recoveryId: recid };
    };
  } catch {
    return undefined;
  }
}

const native = loadNative();

/** Which implementation signs in this process ("native" or "wasm"). */
export const SECP256K1_BACKEND: "native" | "wasm" = native ? "native" : "wasm";

/** Signs a 32-byte digest: both implementations, for the tests that hold them to each other. */
export const SECP256K1_SIGNERS: Readonly<Record<"native" | "wasm", Sign | undefined>> = { native, wasm };

/** The group order n, big-endian. */
const ORDER = Buffer.from("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", "hex");

/**
 * Signs a 32-byte digest with the fastest implementation available. A digest of n or more
 * (only a caller's own HASH_FUNCTION_NO_OP digest can be one) goes to the WebAssembly build:
 * the native build's RFC 6979 nonce is drawn from the digest as given, not reduced mod n as
 * the RFC says — a valid signature either way, but not the same bytes. [our choice]
 */
export const signDigest: Sign = native
  ? (digest, privateKey) => (Buffer.compare(digest, ORDER) < 0 ? native(digest, privateKey) : wasm(digest, privateKey))
  : wasm;
