// SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191 (docs/stamps.md §2.5): an Ethereum wallet's
// personal_sign signature over the body, as @turnkey/wallet-stamper sends it. The signatures
// here are made by viem's local account (a real wallet implementation, not ours) and DER-encoded
// with @turnkey/crypto's toDerSignature, exactly as the stamper does.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { toDerSignature } from "@turnkey/crypto";
import { privateKeyToAccount } from "viem/accounts";
import { ApiError } from "../../src/errors.ts";
import { apiKeyStamps } from "../../src/auth/api-key-stamp.ts";
import { verifyPersonalSignSignature } from "../../src/crypto/public-keys.ts";

// A fixed key: the vectors below are reproducible.
const PRIVATE_KEY = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318" as const;
const account = privateKeyToAccount(PRIVATE_KEY);
const PUBLIC_KEY = Buffer.from(secp256k1.getPublicKey(Buffer.from(PRIVATE_KEY.slice(2), "hex"), true)).toString("hex");

async function derSign(body: string): Promise<string> {
  const rsv = await account.signMessage({ message: body });
  return toDerSignature(rsv.slice(2));
}

function header(publicKey: string, scheme: string, signature: string): string {
  return Buffer.from(JSON.stringify({ publicKey, scheme, signature })).toString("base64url");
}

const EIP191 = "SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191";

/** DER of r and s given as 32-byte buffers, each integer with `pad` extra leading zero bytes. */
function derOf(r: Uint8Array, s: Uint8Array, pad = 0): string {
  const int = (x: Uint8Array) => {
    let b = Buffer.from(x);
    while (b.length > 1 && b[0] === 0 && !(b[1]! & 0x80)) b = b.subarray(1);
    if (b[0]! & 0x80) b = Buffer.concat([Buffer.from([0]), b]);
    b = Buffer.concat([Buffer.alloc(pad), b]);
    return Buffer.concat([Buffer.from([0x02, b.length]), b]);
  };
  const seq = Buffer.concat([int(r), int(s)]);
  return Buffer.concat([Buffer.from([0x30, seq.length]), seq]).toString("hex");
}

describe("EIP-191 wallet stamps", () => {
  it("a viem personal_sign signature, as DER, verifies over the body; a tampered body does not", async () => {
    const body = JSON.stringify({ organizationId: "o", parameters: {}, type: "ACTIVITY_TYPE_STAMP_LOGIN" });
    const sig = await derSign(body);
    assert.ok(verifyPersonalSignSignature(PUBLIC_KEY, Buffer.from(body), sig));
    assert.ok(!verifyPersonalSignSignature(PUBLIC_KEY, Buffer.from(body + " "), sig));
    assert.ok(!verifyPersonalSignSignature(PUBLIC_KEY, Buffer.from(body.replace('"o"', '"p"')), sig));
  });

  it("the envelope counts bytes, not characters (a non-ASCII body)", async () => {
    const body = JSON.stringify({ note: "café ✓" });
    assert.notEqual(Buffer.byteLength(body), body.length);
    assert.ok(verifyPersonalSignSignature(PUBLIC_KEY, Buffer.from(body), await derSign(body)));
  });

  it("through the X-Stamp strategy: accepted with the EIP-191 scheme, refused under the other schemes", async () => {
    const body = Buffer.from(JSON.stringify({ organizationId: "o" }));
    const sig = await derSign(body.toString());
    const ok = await apiKeyStamps.verify(header(PUBLIC_KEY, EIP191, sig), body);
    assert.equal(typeof ok.resolve, "function");
    await assert.rejects(apiKeyStamps.verify(header(PUBLIC_KEY, EIP191, sig), Buffer.from(body.toString() + "\n")), (e: unknown) => {
      assert.ok(e instanceof ApiError);
      assert.equal(e.category, "SIGNATURE_INVALID");
      return true;
    });
    // Plain secp256k1 signs SHA-256 of the body: the same signature is not valid for it.
    await assert.rejects(apiKeyStamps.verify(header(PUBLIC_KEY, "SIGNATURE_SCHEME_TK_API_SECP256K1", sig), body), (e: unknown) => {
      assert.ok(e instanceof ApiError);
      assert.equal(e.category, "SIGNATURE_INVALID");
      return true;
    });
    // A P-256 claim with the same key: the key is not a P-256 point, or the signature fails.
    await assert.rejects(apiKeyStamps.verify(header(PUBLIC_KEY, "SIGNATURE_SCHEME_TK_API_P256", sig), body), (e: unknown) => {
      assert.ok(e instanceof ApiError);
      assert.ok(e.category === "SIGNATURE_INVALID" || e.category === "UNAUTHENTICATED", e.category);
      return true;
    });
  });

  it("another key does not verify the signature", async () => {
    const body = Buffer.from("{}");
    const other = Buffer.from(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true)).toString("hex");
    assert.ok(!verifyPersonalSignSignature(other, body, await derSign("{}")));
  });

  it("high-S and non-minimal DER (a leading zero byte the stamper's encoder keeps) are accepted", async () => {
    const body = JSON.stringify({ n: 1 });
    const rsv = Buffer.from((await account.signMessage({ message: body })).slice(2), "hex");
    const r = rsv.subarray(0, 32);
    const s = rsv.subarray(32, 64);
    assert.ok(verifyPersonalSignSignature(PUBLIC_KEY, Buffer.from(body), derOf(r, s)));
    assert.ok(verifyPersonalSignSignature(PUBLIC_KEY, Buffer.from(body), derOf(r, s, 1)));
    const n = secp256k1.Point.CURVE().n;
    const highS = n - BigInt("0x" + s.toString("hex"));
    const highSBytes = Buffer.from(highS.toString(16).padStart(64, "0"), "hex");
    assert.ok(verifyPersonalSignSignature(PUBLIC_KEY, Buffer.from(body), derOf(r, highSBytes)));
  });

  it("malformed signatures are simply invalid", () => {
    const body = Buffer.from("{}");
    for (const sig of ["", "zz", "30", "3006020101020101", "3008020101020101ff", "30060201ff020101", "a".repeat(142)]) {
      assert.equal(verifyPersonalSignSignature(PUBLIC_KEY, body, sig), false, sig);
    }
  });
});
