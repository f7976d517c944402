// The secp256k1 signers (libsecp256k1, native and through WebAssembly, docs/signing.md §5) held
// to the pure-JavaScript reference: the same RFC 6979 signature byte for byte, a low S, and a
// `v` that recovers the signing key. BIP-340 Schnorr (taproot, docs/signing.md §6): the native
// signer built on libsecp256k1's key operations and the WebAssembly one equal @noble's
// signature for the same auxiliary bytes.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { signWithKey } from "../../src/signing/sign.ts";
import { SCHNORR_SIGNERS, SECP256K1_BACKEND, SECP256K1_SIGNERS, type RecoverableSignature } from "../../src/signing/secp256k1.ts";
import { schnorr } from "@noble/curves/secp256k1.js";

const N = secp256k1.Point.CURVE().n;

describe("secp256k1 signatures", () => {
  it("equal @noble/curves' RFC 6979 signature, low S, v recovers the key (200 random keys and digests)", () => {
    for (let i = 0; i < 200; i++) {
      const key = secp256k1.utils.randomSecretKey();
      const digest = new Uint8Array(randomBytes(32));
      const got = signWithKey("CURVE_SECP256K1", key, digest);
      const ref = secp256k1.sign(digest, key, { prehash: false, format: "recovered", lowS: true });
      assert.equal(got.r + got.s, Buffer.from(ref.subarray(1)).toString("hex"));
      assert.equal(got.v, ref[0]!.toString(16).padStart(2, "0"));
      assert.ok(BigInt(`0x${got.s}`) <= N / 2n, "S is low");
      const sig = secp256k1.Signature.fromHex(got.r + got.s, "compact").addRecoveryBit(Number.parseInt(got.v, 16));
      assert.equal(sig.recoverPublicKey(digest).toHex(true), Buffer.from(secp256k1.getPublicKey(key, true)).toString("hex"));
    }
  });

  it("the native and the WebAssembly signer give the same bytes; the native one loads on this (x64 Linux) machine", () => {
    if (process.arch === "x64" && process.platform === "linux") assert.equal(SECP256K1_BACKEND, "native");
    const native = SECP256K1_SIGNERS.native;
    const wasm = SECP256K1_SIGNERS.wasm;
    assert.ok(wasm);
    if (!native) return;
    for (let i = 0; i < 100; i++) {
      const key = secp256k1.utils.randomSecretKey();
      const digest = new Uint8Array(randomBytes(32));
      const a: RecoverableSignature = native(digest, key);
      const b: RecoverableSignature = wasm(digest, key);
      assert.equal(Buffer.from(a.signature).toString("hex"), Buffer.from(b.signature).toString("hex"));
      assert.equal(a.recoveryId, b.recoveryId);
    }
    // An invalid key is refused by both, never signed with.
    assert.throws(() => native(new Uint8Array(32), new Uint8Array(32)));
    assert.throws(() => wasm(new Uint8Array(32), new Uint8Array(32)));
  });

  it("digests that are zero or above the order still sign and recover", () => {
    const key = secp256k1.utils.randomSecretKey();
    for (const digest of [new Uint8Array(32), new Uint8Array(32).fill(0xff)]) {
      const got = signWithKey("CURVE_SECP256K1", key, digest);
      const ref = secp256k1.sign(digest, key, { prehash: false, format: "recovered", lowS: true });
      assert.equal(got.r + got.s + got.v, Buffer.from(ref.subarray(1)).toString("hex") + ref[0]!.toString(16).padStart(2, "0"));
    }
  });

  it("Schnorr: native and WebAssembly equal @noble's BIP-340 signature for the same aux bytes, and verify (200 keys, odd and even Y)", () => {
    const signers = Object.entries(SCHNORR_SIGNERS).filter(([, s]) => s);
    if (process.arch === "x64" && process.platform === "linux") assert.equal(signers.length, 2);
    for (let i = 0; i < 200; i++) {
      const key = secp256k1.utils.randomSecretKey();
      const messages = [new Uint8Array(randomBytes(32)), new Uint8Array(randomBytes(32))];
      const aux = new Uint8Array(randomBytes(32));
      for (const [name, of] of signers) {
        const signer = of!(key);
        for (const m of messages) {
          const got = signer.sign(m, aux);
          assert.equal(Buffer.from(got).toString("hex"), Buffer.from(schnorr.sign(m, key, aux)).toString("hex"), `${name} #${i}`);
          assert.ok(schnorr.verify(got, m, schnorr.getPublicKey(key)));
        }
        signer.close();
      }
    }
  });
});
