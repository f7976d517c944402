// The secp256k1 ECDSA signer (docs/signing.md §5): libsecp256k1, the Bitcoin Core library —
// natively where the `secp256k1` package ships a build for this platform (prebuilt for
// Linux, macOS and Windows on x64; ~40 µs a signature here), else the same library compiled
// to WebAssembly (`tiny-secp256k1`, ~110 µs). Both derive the nonce by RFC 6979 and return
// a low S and the recovery id, so the bytes do not depend on which one loaded; a unit test
// holds each to the pure-JavaScript @noble/curves signer.
import { createRequire } from "node:module";
import { signRecoverable, signSchnorr } from "tiny-secp256k1";
import { taggedHash } from "./parsers/bitcoin-sighash.ts";

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

/**
 * A BIP-340 Schnorr signer for one key (Bitcoin taproot; the key already tweaked): signs
 * 32-byte messages with auxiliary randomness; `close` zeroes what it holds of the key.
 */
export interface SchnorrSigner {
  sign(message: Uint8Array, auxRand: Uint8Array): Uint8Array;
  close(): void;
}
type SchnorrSignerOf = (privateKey: Uint8Array) => SchnorrSigner;

/** The parts of the native binding used here (the `secp256k1` package's API over libsecp256k1). */
interface Binding {
  ecdsaSign(msg32: Uint8Array, key: Uint8Array): { signature: Uint8Array; recid: number };
  privateKeyVerify(key: Uint8Array): boolean;
  privateKeyNegate(key: Uint8Array): Uint8Array;
  privateKeyTweakAdd(key: Uint8Array, tweak: Uint8Array): Uint8Array;
  privateKeyTweakMul(key: Uint8Array, tweak: Uint8Array): Uint8Array;
  publicKeyCreate(key: Uint8Array, compressed: boolean): Uint8Array;
}

/** The native binding, or undefined where the package has no build for this platform. */
function loadBinding(): Binding | undefined {
  try {
    // The binding alone: the package's own entry point would fall back to a JavaScript signer.
    return createRequire(import.meta.url)("secp256k1/bindings") as Binding;
  } catch {
    return undefined;
  }
}

const binding = loadBinding();

const native: Sign | undefined = binding
  ? (digest, privateKey) => {
      const { signature, recid } = binding.ecdsaSign(digest, privateKey);
      return { signature, recoveryId: recid };
    }
  : undefined;

/** The group order n, big-endian. */
const ORDER = Buffer.from("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", "hex");

/** A 32-byte big-endian integer reduced mod n (hash outputs: n or more about once in 2^128). */
function modN(x: Uint8Array): Uint8Array {
  if (Buffer.compare(x, ORDER) < 0) return x;
  const reduced = BigInt(`0x${Buffer.from(x).toString("hex")}`) % BigInt(`0x${ORDER.toString("hex")}`);
  return Buffer.from(reduced.toString(16).padStart(64, "0"), "hex");
}

/**
 * BIP-340 signing as the BIP states it, every operation on the key or the nonce in
 * libsecp256k1 (its Schnorr module is not in the `secp256k1` package): P = d·G once per key,
 * d negated for an even Y; then per message k from the tagged nonce hash of d ⊕ hash(aux), P
 * and the message; R = k·G, k negated for an even Y; e the tagged challenge of R, P, message;
 * s = k + e·d mod n. The signature equals tiny-secp256k1's and @noble's for the same auxiliary
 * bytes (test/unit/signing-secp256k1.test.ts).
 */
function nativeSchnorr(b: Binding): SchnorrSignerOf {
  return (privateKey) => {
    const P = b.publicKeyCreate(privateKey, true);
    const Px = P.subarray(1);
    const d = Uint8Array.from(privateKey);
    if (P[0] === 0x03) b.privateKeyNegate(d);
    return {
      sign(message, auxRand) {
        const t = taggedHash("BIP0340/aux", auxRand);
        for (let i = 0; i < 32; i++) t[i]! ^= d[i]!;
        const k = Uint8Array.from(modN(taggedHash("BIP0340/nonce", t, Px, message)));
        const s = Uint8Array.from(d);
        try {
          if (!b.privateKeyVerify(k)) throw new Error("BIP-340: the nonce is zero");
          const R = b.publicKeyCreate(k, true);
          if (R[0] === 0x03) b.privateKeyNegate(k);
          const Rx = R.subarray(1);
          const e = modN(taggedHash("BIP0340/challenge", Rx, Px, message));
          // s = e·d + k (mod n), both operations in libsecp256k1.
          return Buffer.concat([Rx, b.privateKeyTweakAdd(b.privateKeyTweakMul(s, e), k)]);
        } finally {
          t.fill(0);
          k.fill(0);
          s.fill(0);
        }
      },
      close: () => void d.fill(0),
    };
  };
}

const wasmSchnorr: SchnorrSignerOf = (privateKey) => {
  const d = Uint8Array.from(privateKey);
  return { sign: (message, auxRand) => signSchnorr(message, d, auxRand), close: () => void d.fill(0) };
};

/** BIP-340 signers, both, for the tests that hold them to each other. */
export const SCHNORR_SIGNERS: Readonly<Record<"native" | "wasm", SchnorrSignerOf | undefined>> = {
  native: binding && nativeSchnorr(binding),
  wasm: wasmSchnorr,
};

/**
 * The Schnorr signer of a key: native where the binding loaded (two point multiplications
 * per signature in WebAssembly become one native one, about a fifth of the time), else
 * tiny-secp256k1's WebAssembly. docs/signing.md §6.
 */
export const schnorrSigner: SchnorrSignerOf = SCHNORR_SIGNERS.native ?? wasmSchnorr;

/** Which implementation signs in this process ("native" or "wasm"). */
export const SECP256K1_BACKEND: "native" | "wasm" = native ? "native" : "wasm";

/** Signs a 32-byte digest: both implementations, for the tests that hold them to each other. */
export const SECP256K1_SIGNERS: Readonly<Record<"native" | "wasm", Sign | undefined>> = { native, wasm };

/**
 * Signs a 32-byte digest with the fastest implementation available. A digest of n or more
 * (only a caller's own HASH_FUNCTION_NO_OP digest can be one) goes to the WebAssembly build:
 * the native build's RFC 6979 nonce is drawn from the digest as given, not reduced mod n as
 * the RFC says — a valid signature either way, but not the same bytes. [our choice]
 */
export const signDigest: Sign = native
  ? (digest, privateKey) => (Buffer.compare(digest, ORDER) < 0 ? native(digest, privateKey) : wasm(digest, privateKey))
  : wasm;
