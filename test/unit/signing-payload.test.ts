// Raw-payload signing without I/O (docs/signing.md §2): the EIP-712 and EIP-7702 digests
// against viem's reference implementations, every encoding/hash/curve combination, and the
// signatures as the SDK reads them (recoverable secp256k1 with low S, verifiable ed25519).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  getTypesForEIP712Domain,
  hashTypedData,
  serializeTypedData,
  recoverAddress,
  keccak256,
  toHex,
  type TypedDataDefinition,
} from "viem";
import { hashAuthorization } from "viem/utils";
import { privateKeyToAddress } from "viem/accounts";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { ed25519 } from "@noble/curves/ed25519.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { ApiError } from "../../src/errors.ts";
import { hashTypedDataJson } from "../../src/signing/eip712.ts";
import { signingInput, type Encoding, type Hash } from "../../src/signing/payload.ts";
import { newKeyPair, signWithKey } from "../../src/signing/sign.ts";

const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString("hex")}`;

const mail: TypedDataDefinition = {
  domain: { name: "Ether Mail", version: "1", chainId: 1, verifyingContract: "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC" },
  types: {
    Person: [
      { name: "name", type: "string" },
      { name: "wallets", type: "address[]" },
    ],
    Mail: [
      { name: "from", type: "Person" },
      { name: "to", type: "Person[]" },
      { name: "contents", type: "string" },
      { name: "attachment", type: "bytes" },
      { name: "tag", type: "bytes4" },
      { name: "delta", type: "int64" },
      { name: "amount", type: "uint256" },
      { name: "urgent", type: "bool" },
    ],
  },
  primaryType: "Mail",
  message: {
    from: { name: "Cow", wallets: ["0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826", "0xDeaDbeefdEAdbeefdEadbEEFdeadbeEFdEaDbeeF"] },
    to: [{ name: "Bob", wallets: ["0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB"] }],
    contents: "Hello, Bob!",
    attachment: "0xdeadbeef00",
    tag: "0x01020304",
    delta: -42n,
    amount: 10n ** 30n,
    urgent: true,
  },
};

const permit: TypedDataDefinition = {
  domain: {
    name: "USD Coin",
    version: "2",
    chainId: 8453n,
    verifyingContract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    salt: `0x${"ab".repeat(32)}`,
  },
  types: {
    Permit: [
      { name: "owner", type: "address" },
      { name: "spender", type: "address" },
      { name: "value", type: "uint256" },
      { name: "nonce", type: "uint256" },
      { name: "deadline", type: "uint256" },
      { name: "matrix", type: "uint8[2][]" },
    ],
  },
  primaryType: "Permit",
  message: {
    owner: "0x1111111111111111111111111111111111111111",
    spender: "0x2222222222222222222222222222222222222222",
    value: 2n ** 255n,
    nonce: 0n,
    deadline: 1_900_000_000n,
    matrix: [
      [1, 2],
      [3, 255],
    ],
  },
};

function refused(fn: () => unknown, field: string, message: RegExp) {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ApiError, String(err));
    assert.equal(err.httpStatus, 400);
    assert.match(err.message, message);
    assert.ok(err.message.startsWith(field), `${err.message} names ${field}`);
    return true;
  });
}

/**
 * As viem's signTypedData action hands a document to an account: with its EIP712Domain type
 * (viem's serializeTypedData writes an empty domain for a document without one).
 */
const withDomainType = (d: TypedDataDefinition): TypedDataDefinition =>
  ({ ...d, types: { EIP712Domain: getTypesForEIP712Domain({ domain: d.domain }), ...d.types } }) as unknown as TypedDataDefinition;

describe("EIP-712 and EIP-7702 digests (docs/signing.md §2.3)", () => {
  for (const [name, doc] of [
    ["mail (nested structs, arrays, bytes, int64)", mail],
    ["permit (salt, uint256 extremes, nested arrays)", permit],
  ] as const) {
    it(`${name}: equals viem's hashTypedData`, () => {
      assert.equal(hex(hashTypedDataJson(serializeTypedData(withDomainType(doc)))), hashTypedData(doc));
    });
  }
  it("without an EIP712Domain type the standard domain fields are taken; primaryType EIP712Domain hashes the domain alone", () => {
    const json = JSON.parse(serializeTypedData(withDomainType(mail)));
    delete json.types.EIP712Domain;
    assert.equal(hex(hashTypedDataJson(JSON.stringify(json))), hashTypedData(mail));
    const domainOnly = { domain: mail.domain, types: {}, primaryType: "EIP712Domain", message: {} } as unknown as TypedDataDefinition;
    assert.equal(hex(hashTypedDataJson(serializeTypedData(withDomainType(domainOnly)))), hashTypedData(domainOnly));
  });
  it("EIP-7702 authorization: equals viem's hashAuthorization (small and large values)", () => {
    for (const a of [
      { address: "0x1111111111111111111111111111111111111111", chainId: 1, nonce: 0 },
      { address: "0x63c0c19a282a1B52b07dD5a65b58948A07DAE32B", chainId: 8453, nonce: 1234567 },
      { address: "0x63c0c19a282a1B52b07dD5a65b58948A07DAE32B", chainId: 0, nonce: 127 },
    ] as const) {
      const got = signingInput(
        "CURVE_SECP256K1",
        JSON.stringify(a),
        "PAYLOAD_ENCODING_EIP7702_AUTHORIZATION",
        "HASH_FUNCTION_NO_OP",
        "parameters.payload",
      );
      assert.equal(hex(got), hashAuthorization({ contractAddress: a.address, chainId: a.chainId, nonce: a.nonce }));
    }
  });
  it("malformed typed data is a 400 naming the payload and what is wrong", () => {
    const p = (doc: unknown) => () =>
      signingInput(
        "CURVE_SECP256K1",
        typeof doc === "string" ? doc : JSON.stringify(doc),
        "PAYLOAD_ENCODING_EIP712",
        "HASH_FUNCTION_NO_OP",
        "parameters.payload",
      );
    refused(p("{not json"), "parameters.payload", /not valid JSON/);
    const base = JSON.parse(serializeTypedData(withDomainType(mail)));
    refused(p({ ...base, primaryType: "Nope" }), "parameters.payload", /primaryType/);
    refused(p({ ...base, message: { ...base.message, urgent: "yes" } }), "parameters.payload", /message\.urgent: must be true or false/);
    refused(p({ ...base, message: { ...base.message, tag: "0x0102" } }), "parameters.payload", /message\.tag: must be 4 bytes/);
    refused(p({ ...base, message: { ...base.message, delta: "1" + "0".repeat(30) } }), "parameters.payload", /out of range for int64/);
    const { contents: _c, ...missing } = base.message;
    refused(p({ ...base, message: missing }), "parameters.payload", /message\.contents: missing/);
    refused(p({ ...base, types: { ...base.types, Mail: [{ name: "contents", type: "uint7" }] } }), "parameters.payload", /unknown type/);
  });
});

describe("encodings, hash functions and curves (docs/signing.md §2.2)", () => {
  const msg = "hello sigil";
  const bytes = new TextEncoder().encode(msg);
  const digest = toHex(sha256(bytes));
  const input = (curve: "CURVE_SECP256K1" | "CURVE_ED25519", payload: string, e: Encoding, h: Hash) =>
    signingInput(curve, payload, e, h, "parameters.payload");

  it("secp256k1: KECCAK256 and SHA256 hash the bytes of either encoding; NO_OP takes a 32-byte hex digest, with or without 0x", () => {
    assert.equal(hex(input("CURVE_SECP256K1", msg, "PAYLOAD_ENCODING_TEXT_UTF8", "HASH_FUNCTION_KECCAK256")), keccak256(bytes));
    assert.equal(hex(input("CURVE_SECP256K1", toHex(bytes), "PAYLOAD_ENCODING_HEXADECIMAL", "HASH_FUNCTION_KECCAK256")), keccak256(bytes));
    assert.equal(hex(input("CURVE_SECP256K1", toHex(bytes).slice(2), "PAYLOAD_ENCODING_HEXADECIMAL", "HASH_FUNCTION_SHA256")), digest);
    assert.equal(hex(input("CURVE_SECP256K1", digest, "PAYLOAD_ENCODING_HEXADECIMAL", "HASH_FUNCTION_NO_OP")), digest);
    assert.equal(
      hex(input("CURVE_SECP256K1", digest.slice(2).toUpperCase(), "PAYLOAD_ENCODING_HEXADECIMAL", "HASH_FUNCTION_NO_OP")),
      digest,
    );
  });
  it("ed25519 signs the message itself (NOT_APPLICABLE)", () => {
    assert.deepEqual(input("CURVE_ED25519", msg, "PAYLOAD_ENCODING_TEXT_UTF8", "HASH_FUNCTION_NOT_APPLICABLE"), bytes);
    assert.deepEqual(input("CURVE_ED25519", toHex(bytes), "PAYLOAD_ENCODING_HEXADECIMAL", "HASH_FUNCTION_NOT_APPLICABLE"), bytes);
  });
  it("every other combination is a 400 naming the field", () => {
    refused(
      () => input("CURVE_SECP256K1", msg, "PAYLOAD_ENCODING_TEXT_UTF8", "HASH_FUNCTION_NOT_APPLICABLE"),
      "parameters.hashFunction",
      /secp256k1 signs a digest/,
    );
    refused(
      () => input("CURVE_SECP256K1", "abcd", "PAYLOAD_ENCODING_HEXADECIMAL", "HASH_FUNCTION_NO_OP"),
      "parameters.payload",
      /32-byte digest/,
    );
    refused(
      () => input("CURVE_SECP256K1", `0x${"00".repeat(32)}`, "PAYLOAD_ENCODING_TEXT_UTF8", "HASH_FUNCTION_NO_OP"),
      "parameters.payload",
      /32-byte digest/,
    );
    for (const h of ["HASH_FUNCTION_NO_OP", "HASH_FUNCTION_SHA256", "HASH_FUNCTION_KECCAK256"] as const) {
      refused(
        () => input("CURVE_ED25519", msg, "PAYLOAD_ENCODING_TEXT_UTF8", h),
        "parameters.hashFunction",
        /ed25519 signs the message itself/,
      );
    }
    const typed = serializeTypedData(withDomainType(mail));
    refused(
      () => input("CURVE_ED25519", typed, "PAYLOAD_ENCODING_EIP712", "HASH_FUNCTION_NO_OP"),
      "parameters.encoding",
      /needs a secp256k1 key/,
    );
    refused(
      () => input("CURVE_SECP256K1", typed, "PAYLOAD_ENCODING_EIP712", "HASH_FUNCTION_KECCAK256"),
      "parameters.hashFunction",
      /use HASH_FUNCTION_NO_OP/,
    );
    for (const bad of ["", "0x", "abc", "zz", "0x0g"]) {
      refused(
        () => input("CURVE_SECP256K1", bad, "PAYLOAD_ENCODING_HEXADECIMAL", "HASH_FUNCTION_KECCAK256"),
        "parameters.payload",
        /hex of whole bytes/,
      );
    }
    refused(
      () => input("CURVE_SECP256K1", "", "PAYLOAD_ENCODING_TEXT_UTF8", "HASH_FUNCTION_KECCAK256"),
      "parameters.payload",
      /must not be empty/,
    );
  });
});

describe("signatures as the SDK reads them (docs/signing.md §2.1)", () => {
  it("secp256k1: r, s as 64 hex digits, low S, v 00/01 recovering the signer's address", async () => {
    const seenV = new Set<string>();
    for (let i = 0; i < 24; i++) {
      const { privateKey } = newKeyPair("CURVE_SECP256K1");
      const address = privateKeyToAddress(hex(privateKey) as `0x${string}`);
      const digest = keccak256(toHex(`message ${i}`));
      const sig = signWithKey("CURVE_SECP256K1", privateKey, Buffer.from(digest.slice(2), "hex"));
      assert.match(sig.r, /^[0-9a-f]{64}$/);
      assert.match(sig.s, /^[0-9a-f]{64}$/);
      assert.match(sig.v, /^0[01]$/);
      assert.ok(BigInt(`0x${sig.s}`) <= secp256k1.Point.CURVE().n / 2n, "S is low");
      seenV.add(sig.v);
      assert.equal(
        await recoverAddress({ hash: digest, signature: { r: `0x${sig.r}`, s: `0x${sig.s}`, yParity: Number(sig.v) } }),
        address,
      );
    }
    assert.equal(seenV.size, 2, "both recovery ids occur over 24 keys");
  });
  it("ed25519: r ‖ s is the RFC 8032 signature; v is empty", () => {
    const { privateKey, publicKey } = newKeyPair("CURVE_ED25519");
    const msg = new TextEncoder().encode("solana message");
    const sig = signWithKey("CURVE_ED25519", privateKey, msg);
    assert.equal(sig.v, "");
    assert.ok(ed25519.verify(Buffer.from(sig.r + sig.s, "hex"), msg, publicKey));
  });
});
