// The TVC manifest's bytes and digest (tvc/manifest.ts) and operator keys and signatures
// (tvc/operator-keys.ts): the contract between Sigil and the operators who sign.
import { it, describe } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { buildManifest, canonicalJson, type ManifestInput } from "../../src/tvc/manifest.ts";
import { derSignatureProblem, normalizeP256Key, p256KeyProblem, verifyOperatorSignature } from "../../src/tvc/operator-keys.ts";
import { generateP256, signP256 } from "../../src/crypto/p256.ts";

// RFC 6979 A.2.5: P-256, SHA-256, message "sample" (deterministic k). s is above n/2 ("high S").
const RFC = {
  ux: "60fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6",
  uy: "7903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299",
  r: "efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716",
  s: "f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8",
};
const N = BigInt("0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551");
const derInt = (hex: string) => {
  let h = hex.replace(/^(00)+/, "");
  if (parseInt(h.slice(0, 2), 16) >= 0x80) h = "00" + h;
  return "02" + (h.length / 2).toString(16).padStart(2, "0") + h;
};
const der = (r: string, s: string) => {
  const body = derInt(r) + derInt(s);
  return "30" + (body.length / 2).toString(16).padStart(2, "0") + body;
};
const SAMPLE = Buffer.from("sample");
const UNCOMPRESSED = `04${RFC.ux}${RFC.uy}`;
const COMPRESSED = (BigInt("0x" + RFC.uy) & 1n ? "03" : "02") + RFC.ux;

const KEY = "031e18532fd4754c02f3041d9c75ceb33b83ffd81ac7ce4fe882ccb1c98bc5896e";
const input = (): ManifestInput => ({
  manifestId: "00000000-0000-7000-8000-000000000001",
  deploymentId: "00000000-0000-7000-8000-000000000002",
  appId: "00000000-0000-7000-8000-000000000003",
  appName: "tiny",
  quorumPublicKey: KEY,
  enableEgress: false,
  spec: {
    qosVersion: "local-1",
    pivotContainerImageUrl: "file:///opt/apps/tiny",
    pivotPath: "bin/server",
    pivotArgs: ["--quiet"],
    expectedPivotDigest: "ab".repeat(32),
    healthCheckType: "TVC_HEALTH_CHECK_TYPE_HTTP",
    healthCheckPort: 8080,
    publicIngressPort: 8080,
    replicas: 2,
    debugMode: false,
    nonce: 1700000000,
    hasPullSecret: false,
  },
  manifestSet: {
    id: "00000000-0000-7000-8000-000000000004",
    name: "m",
    threshold: 1,
    operators: [{ id: "00000000-0000-7000-8000-000000000005", name: "alice", publicKey: KEY }],
  },
  shareSet: {
    id: "00000000-0000-7000-8000-000000000006",
    name: "s",
    threshold: 2,
    operators: [
      { id: "00000000-0000-7000-8000-000000000005", name: "alice", publicKey: KEY },
      { id: "00000000-0000-7000-8000-000000000007", name: "bob", publicKey: KEY },
    ],
  },
});

describe("tvc manifest", () => {
  it("has fixed bytes and digest for fixed input (a change here invalidates operators' tooling)", () => {
    const m = buildManifest(input());
    assert.equal(m.digest, "ba86dc1d65ce9e4954d6015c803d15d1c30886aced9229ddf60d35dc9227a2f5");
    assert.equal(m.digest, createHash("sha256").update(m.bytes).digest("hex"));
    const text = m.bytes.toString("utf8");
    assert.ok(
      text.startsWith(
        '{"debugMode":false,"deploymentId":"00000000-0000-7000-8000-000000000002","enableEgress":false,"format":"sigil-tvc-manifest/1",',
      ),
      text,
    );
    assert.ok(!/\s/.test(text.replace(/"[^"]*"/g, "")), "no whitespace outside strings");
  });

  it("does not depend on the order fields were given; any field changes the digest", () => {
    const a = input();
    const b = input();
    b.spec = Object.fromEntries(Object.entries(b.spec).reverse()) as typeof b.spec;
    assert.equal(buildManifest(b).digest, buildManifest(a).digest);
    const c = input();
    c.spec.replicas = 3;
    assert.notEqual(buildManifest(c).digest, buildManifest(a).digest);
    const d = input();
    d.manifestSet.operators = [{ ...d.manifestSet.operators[0]!, name: "mallory" }];
    assert.notEqual(buildManifest(d).digest, buildManifest(a).digest);
  });

  it("canonical JSON: sorted keys at every level, arrays in order, strings escaped, non-finite refused", () => {
    assert.equal(canonicalJson({ b: 1, a: [{ d: 'x"y', c: null }, true] }), '{"a":[{"c":null,"d":"x\\"y"},true],"b":1}');
    assert.equal(canonicalJson({ é: 1, z: 2, Z: 3 }), '{"Z":3,"z":2,"é":1}');
    assert.throws(() => canonicalJson({ n: Number.NaN }), /non-finite/);
  });
});

describe("tvc operator keys", () => {
  it("accepts P-256 points compressed or uncompressed, in either case, as one normalised key", () => {
    assert.equal(p256KeyProblem(UNCOMPRESSED), null);
    assert.equal(p256KeyProblem(COMPRESSED.toUpperCase()), null);
    assert.equal(normalizeP256Key(UNCOMPRESSED), COMPRESSED);
    assert.equal(normalizeP256Key(COMPRESSED.toUpperCase()), COMPRESSED);
    const k = generateP256();
    assert.equal(normalizeP256Key(k.publicUncompressed), k.publicCompressed);
  });

  it("refuses what is not a P-256 point", () => {
    assert.match(p256KeyProblem("zz")!, /hex/);
    assert.match(p256KeyProblem("04" + RFC.ux)!, /start with 02 or 03/);
    assert.match(p256KeyProblem("02" + RFC.ux + "00")!, /compressed .* or uncompressed/);
    assert.match(p256KeyProblem("05" + RFC.ux + RFC.uy)!, /start with 04/);
    assert.match(p256KeyProblem("04" + RFC.ux + RFC.ux)!, /not a valid point/);
    assert.match(p256KeyProblem("04" + "ff".repeat(64))!, /not a valid point/);
  });

  it("verifies the RFC 6979 vector (DER), with either key encoding, high S and its low-S twin", () => {
    const sig = der(RFC.r, RFC.s);
    assert.equal(derSignatureProblem(sig), null);
    assert.equal(verifyOperatorSignature(UNCOMPRESSED, SAMPLE, sig), true);
    assert.equal(verifyOperatorSignature(COMPRESSED, SAMPLE, sig.toUpperCase()), true);
    const lowS = (N - BigInt("0x" + RFC.s)).toString(16).padStart(64, "0");
    assert.equal(verifyOperatorSignature(COMPRESSED, SAMPLE, der(RFC.r, lowS)), true);
    assert.equal(verifyOperatorSignature(COMPRESSED, Buffer.from("samplE"), sig), false, "other bytes");
    assert.equal(verifyOperatorSignature(generateP256().publicCompressed, SAMPLE, sig), false, "another key");
  });

  it("takes DER only: raw r||s, trailing bytes, bad tags and odd hex are refused", () => {
    assert.match(derSignatureProblem(RFC.r + RFC.s)!, /DER/);
    assert.equal(verifyOperatorSignature(COMPRESSED, SAMPLE, RFC.r + RFC.s), false);
    assert.match(derSignatureProblem(der(RFC.r, RFC.s) + "00")!, /DER/);
    assert.match(derSignatureProblem("31" + der(RFC.r, RFC.s).slice(2))!, /DER/);
    assert.match(derSignatureProblem("abc")!, /hex/);
    assert.match(derSignatureProblem("")!, /hex/);
  });

  it("a signature made as docs/tvc.md §4.1 shows (node:crypto, DER) verifies over the manifest bytes", () => {
    const op = generateP256();
    const bytes = buildManifest(input()).bytes;
    const sig = signP256(op, bytes, "der").toString("hex");
    assert.equal(verifyOperatorSignature(op.publicUncompressed, bytes, sig), true);
    assert.equal(verifyOperatorSignature(op.publicCompressed, Buffer.concat([bytes, Buffer.from(" ")]), sig), false);
  });
});
