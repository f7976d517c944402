import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createSign, generateKeyPairSync, sign as edSign } from "node:crypto";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { publicKeyProblem, verifySignature } from "../../src/crypto/public-keys.ts";
import { LocalKey, MasterKey } from "../../src/crypto/envelope.ts";

const P256 = "API_KEY_CURVE_P256";

function decodeStamp(value: string): { publicKey: string; scheme: string; signature: string } {
  return JSON.parse(Buffer.from(value, "base64url").toString("utf8"));
}

describe("P-256 API key stamps", () => {
  it("verifies stamps made by @turnkey/api-key-stamper over the exact bytes, UTF-8 included", async () => {
    const kp = generateP256KeyPair();
    const stamper = new ApiKeyStamper({ apiPublicKey: kp.publicKey, apiPrivateKey: kp.privateKey });
    const body = JSON.stringify({ organizationId: "x", note: "café ✓" });
    const s = decodeStamp((await stamper.stamp(body)).stampHeaderValue);
    assert.equal(s.publicKey, kp.publicKey);
    assert.equal(s.scheme, "SIGNATURE_SCHEME_TK_API_P256");
    assert.ok(await verifySignature(P256, s.publicKey, Buffer.from(body), s.signature));
    assert.ok(!(await verifySignature(P256, s.publicKey, Buffer.from(body + " "), s.signature)));
    assert.ok(!(await verifySignature(P256, s.publicKey, Buffer.from(JSON.stringify(JSON.parse(body), null, 1)), s.signature)));
  });

  it("accepts high-S signatures (the SDK's node stamper emits them about half the time)", async () => {
    const kp = generateP256KeyPair();
    const stamper = new ApiKeyStamper({ apiPublicKey: kp.publicKey, apiPrivateKey: kp.privateKey });
    const n = BigInt("0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551");
    let high = 0;
    for (let i = 0; i < 24; i++) {
      const body = `{"i":${i}}`;
      const s = decodeStamp((await stamper.stamp(body)).stampHeaderValue);
      const der = Buffer.from(s.signature, "hex");
      const rLen = der[3]!;
      const sLen = der[5 + rLen]!;
      const sVal = BigInt("0x" + der.subarray(6 + rLen, 6 + rLen + sLen).toString("hex"));
      if (sVal > n / 2n) high++;
      assert.ok(await verifySignature(P256, s.publicKey, Buffer.from(body), s.signature), `signature ${i}`);
    }
    assert.ok(high > 0, "expected at least one high-S signature among 24");
  });

  it("accepts uncompressed keys and rejects malformed keys and signatures without throwing", async () => {
    const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const jwk = publicKey.export({ format: "jwk" });
    const uncompressed = "04" + Buffer.from(jwk.x!, "base64url").toString("hex") + Buffer.from(jwk.y!, "base64url").toString("hex");
    const msg = Buffer.from("hello");
    const sig = createSign("SHA256").update(msg).sign(privateKey).toString("hex");
    assert.equal(publicKeyProblem(P256, uncompressed), null);
    assert.ok(await verifySignature(P256, uncompressed, msg, sig));
    assert.match(publicKeyProblem(P256, "zz")!, /hex/);
    assert.match(publicKeyProblem(P256, "05" + "00".repeat(32))!, /02 or 03/);
    assert.match(publicKeyProblem(P256, "02" + "ff".repeat(32))!, /not a valid point/);
    assert.equal(await verifySignature(P256, uncompressed, msg, "not-hex"), false);
    assert.equal(await verifySignature(P256, uncompressed, msg, "3006020101020101"), false);
    assert.equal(await verifySignature(P256, "02" + "ff".repeat(32), msg, sig), false);
  });

  it("verifies Ed25519 and secp256k1 API keys", async () => {
    const ed = generateKeyPairSync("ed25519");
    const edHex = Buffer.from(ed.publicKey.export({ format: "jwk" }).x!, "base64url").toString("hex");
    const msg = Buffer.from("body");
    assert.ok(await verifySignature("API_KEY_CURVE_ED25519", edHex, msg, edSign(null, msg, ed.privateKey).toString("hex")));
    assert.match(publicKeyProblem("API_KEY_CURVE_ED25519", "00")!, /32 bytes/);

    const k1 = generateKeyPairSync("ec", { namedCurve: "secp256k1" });
    const j = k1.publicKey.export({ format: "jwk" });
    const y = Buffer.from(j.y!, "base64url");
    const k1Hex = ((y[31]! & 1) === 1 ? "03" : "02") + Buffer.from(j.x!, "base64url").toString("hex");
    const sig = createSign("SHA256").update(msg).sign(k1.privateKey).toString("hex");
    assert.ok(await verifySignature("API_KEY_CURVE_SECP256K1", k1Hex, msg, sig));
    assert.ok(!(await verifySignature(P256, k1Hex, msg, sig)));
  });
});

describe("envelope encryption", () => {
  it("round-trips, binds ciphertext to its AAD, and names the key it needs", async () => {
    const key = MasterKey.generate();
    const sealed = await key.seal("top secret", "row:1");
    assert.ok(!sealed.includes("top secret"));
    assert.equal((await key.open(sealed, "row:1")).toString(), "top secret");
    await assert.rejects(() => key.open(sealed, "row:2"));
    assert.notEqual(await key.seal("top secret", "row:1"), sealed, "fresh data key and IV each time");
    const other = MasterKey.generate();
    await assert.rejects(() => other.open(sealed, "row:1"), /another master key/);
    const tampered = sealed.slice(0, -4) + (sealed.endsWith("AAAA") ? "BBBB" : "AAAA");
    await assert.rejects(() => key.open(tampered, "row:1"));
  });

  it("a key held in memory seals the same form synchronously (transport keys) and MasterKey opens it", async () => {
    const local = LocalKey.parse("22".repeat(32));
    const sealed = local.sealSync("in transit", "row:7");
    assert.equal(MasterKey.kekIdOf(sealed), local.id);
    assert.equal((await new MasterKey(local).open(sealed, "row:7")).toString(), "in transit");
    assert.equal(local.openSync(await MasterKey.parse("22".repeat(32)).seal("back", "row:8"), "row:8").toString(), "back");
    assert.throws(() => local.openSync(sealed, "row:8"));
  });

  it("opens with every key it holds and seals with the first (a rotation's two keys)", async () => {
    const old = LocalKey.parse("33".repeat(32));
    const next = LocalKey.parse("44".repeat(32));
    const before = await new MasterKey(old).seal("kept", "row:9");
    const both = new MasterKey([next, old]);
    assert.equal((await both.open(before, "row:9")).toString(), "kept");
    const after = await both.seal("kept", "row:9");
    assert.equal(MasterKey.kekIdOf(after), next.id);
    await assert.rejects(() => new MasterKey(old).open(after, "row:9"), /another master key/);
  });

  it("parses hex and base64 master keys and rejects anything else", () => {
    const hex = "11".repeat(32);
    assert.equal(MasterKey.parse(hex).id, MasterKey.parse(Buffer.from(hex, "hex").toString("base64")).id);
    assert.throws(() => MasterKey.parse("short"), /32 bytes/);
    assert.throws(() => MasterKey.parse("11".repeat(31)), /32 bytes/);
  });
});
