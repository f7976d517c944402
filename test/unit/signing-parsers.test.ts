// The transaction parsers (docs/signing-policies.md §1, §2): vectors made by viem and
// @solana/web3.js (test/vectors/signing-parsers.json) parse into the facts written down from
// their inputs; signing what they parse gives transactions those libraries accept; input that
// is not a transaction is refused with a ParseError, never half-read.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { ed25519 } from "@noble/curves/ed25519.js";
import { parseTransaction, recoverTransactionAddress, type TransactionSerialized } from "viem";
import { privateKeyToAddress } from "viem/accounts";
import { Keypair, PublicKey, Transaction, VersionedTransaction } from "@solana/web3.js";
import { parseEthereumTransaction, serializeSignedEthereum } from "../../src/signing/parsers/ethereum.ts";
import {
  MAX_SOLANA_ACCOUNT_REFERENCES,
  MAX_SOLANA_INSTRUCTIONS,
  parseSolanaTransaction,
  placeSolanaSignature,
} from "../../src/signing/parsers/solana.ts";
import { parseEip712 } from "../../src/signing/parsers/eip712.ts";
import { rlpDecode, rlpEncode } from "../../src/signing/parsers/rlp.ts";
import { ParseError } from "../../src/signing/parsers/errors.ts";
import { VECTOR_FILE, signingVectors } from "../../scripts/signing-vectors.ts";

const text = readFileSync(VECTOR_FILE, "utf8");
const vectors = JSON.parse(text) as ReturnType<typeof signingVectors>;

/** Facts as the vector file writes them: ints as "<n>n", maps as plain objects. */
const asJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? `${x}n` : x)));

const refuses = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(fn, (err: unknown) => err instanceof ParseError && pattern.test(err.message));

describe("signing parsers", () => {
  it("the committed vectors are what scripts/signing-vectors.ts writes", () => {
    assert.equal(text, `${JSON.stringify(signingVectors(), null, 2)}\n`);
  });

  it("Ethereum: every vector parses into its facts", () => {
    assert.ok(vectors.ethereum.length >= 6);
    for (const v of vectors.ethereum) assert.deepEqual(asJson(parseEthereumTransaction(v.unsigned).facts), v.facts, v.name);
    const from = "0x1111111111111111111111111111111111111111";
    assert.equal(parseEthereumTransaction(vectors.ethereum[0]!.unsigned, from).facts.from, from);
  });

  it("Ethereum: signing keccak(payload) and re-encoding gives a transaction viem parses and recovers to the signer", async () => {
    const priv = secp256k1.utils.randomSecretKey();
    const signer = privateKeyToAddress(`0x${Buffer.from(priv).toString("hex")}`);
    for (const v of vectors.ethereum) {
      const parsed = parseEthereumTransaction(v.unsigned);
      const sig = secp256k1.Signature.fromBytes(
        secp256k1.sign(keccak_256(parsed.payload), priv, { prehash: false, format: "recovered" }),
        "recovered",
      );
      const signed = serializeSignedEthereum(parsed, { r: sig.r, s: sig.s, recovery: sig.recovery! }) as TransactionSerialized;
      const back = parseTransaction(signed);
      assert.equal((await recoverTransactionAddress({ serializedTransaction: signed })).toLowerCase(), signer.toLowerCase(), v.name);
      assert.equal(BigInt(back.nonce ?? 0), parsed.facts.nonce, v.name);
      if (parsed.typeByte === 0) {
        const chainId = parsed.facts.chain_id;
        assert.equal(back.v, chainId === undefined ? 27n + BigInt(sig.recovery!) : chainId * 2n + 35n + BigInt(sig.recovery!), v.name);
      } else {
        assert.equal(back.yParity, sig.recovery, v.name);
      }
    }
  });

  it("Ethereum: refuses what is not one unsigned transaction", () => {
    const eip1559 = vectors.ethereum[3]!.unsigned;
    refuses(() => parseEthereumTransaction("0xzz"), /not hex/);
    refuses(() => parseEthereumTransaction("0x"), /empty/);
    refuses(() => parseEthereumTransaction("0x05c0"), /unsupported Ethereum transaction type 0x05/);
    refuses(() => parseEthereumTransaction(`${eip1559}00`), /trailing/);
    refuses(() => parseEthereumTransaction(eip1559.slice(0, -2)), /truncated|RLP/);
    refuses(() => parseEthereumTransaction("0x02c3010203"), /has 9 fields, found 3/);
    // A 1-byte value below 0x80 wrapped as a string: a second encoding of the same transaction.
    refuses(() => parseEthereumTransaction("0xc781058080808080"), /wrapped/);
    // Already signed (9 items, v != chain id form).
    const signedLegacy = rlpEncode([
      Uint8Array.of(1),
      Uint8Array.of(1),
      Uint8Array.of(1),
      new Uint8Array(20),
      Uint8Array.of(1),
      new Uint8Array(0),
      Uint8Array.of(37),
      Uint8Array.of(9),
      Uint8Array.of(9),
    ]);
    refuses(() => parseEthereumTransaction(Buffer.from(signedLegacy).toString("hex")), /already carries a signature/);
    // A 19-byte `to`.
    const shortTo = rlpEncode([
      Uint8Array.of(1),
      Uint8Array.of(1),
      Uint8Array.of(1),
      new Uint8Array(19),
      Uint8Array.of(1),
      new Uint8Array(0),
    ]);
    refuses(() => parseEthereumTransaction(Buffer.from(shortTo).toString("hex")), /20-byte address/);
    // Deep nesting is bounded.
    refuses(() => rlpDecode(Uint8Array.from({ length: 40 }, (_, i) => (i === 39 ? 0xc0 : 0xc0 + 39 - i))), /deeply|RLP/);
  });

  it("Solana: every vector parses into its facts, and a signature placed in the signer's slot verifies with @solana/web3.js", () => {
    assert.ok(vectors.solana.length >= 3);
    for (const v of vectors.solana) {
      const parsed = parseSolanaTransaction(v.unsigned);
      assert.deepEqual(asJson(parsed.facts), v.facts, v.name);
      const kp = Keypair.generate();
      refuses(() => placeSolanaSignature(parsed, kp.publicKey.toBase58(), new Uint8Array(64)), /not a required signer/);
      // Sign as the first signer with a throwaway key in place of the real one: the slot and message are what matter.
      const sig = ed25519.sign(parsed.message, kp.secretKey.subarray(0, 32));
      const signedHex = placeSolanaSignature(parsed, v.signers[0]!, sig);
      const back = VersionedTransaction.deserialize(Buffer.from(signedHex, "hex"));
      assert.deepEqual(Buffer.from(back.signatures[0]!), Buffer.from(sig), v.name);
      assert.ok(ed25519.verify(back.signatures[0]!, back.message.serialize(), kp.publicKey.toBytes()), v.name);
      assert.equal(Buffer.from(back.message.serialize()).toString("hex"), Buffer.from(parsed.message).toString("hex"));
    }
    // A legacy transaction signed by its fee payer round-trips through Transaction.from.
    const legacy = parseSolanaTransaction(vectors.solana[0]!.unsigned);
    assert.equal(legacy.version, "legacy");
    const tx = Transaction.from(
      Buffer.from(placeSolanaSignature(legacy, vectors.solana[0]!.signers[0]!, new Uint8Array(64).fill(7)), "hex"),
    );
    assert.equal(tx.signatures[0]!.signature!.toString("hex"), "07".repeat(64));
  });

  it("Solana: refuses what is not a transaction", () => {
    const v0 = vectors.solana[1]!.unsigned;
    refuses(() => parseSolanaTransaction(""), /truncated/);
    refuses(() => parseSolanaTransaction(`${v0}00`), /trailing/);
    refuses(() => parseSolanaTransaction(v0.slice(0, -2)), /truncated/);
    // The signature count no longer matches the header (drop one 64-byte slot).
    refuses(() => parseSolanaTransaction(`01${v0.slice(2 + 128)}`), /signature slots/);
    // Message version 1 does not exist.
    const msgStart = 2 + 2 * 128;
    refuses(() => parseSolanaTransaction(`${v0.slice(0, msgStart)}81${v0.slice(msgStart + 2)}`), /version 1/);
    refuses(() => parseSolanaTransaction("80"), /non-minimal|truncated/);
  });

  it("Solana: known programs' instructions are read as the programs read them (trailing bytes ignored), or refused naming the instruction", () => {
    assert.ok(vectors.solana_instructions.length >= 20);
    for (const v of vectors.solana_instructions) {
      if ("refused" in v) {
        refuses(() => parseSolanaTransaction(v.unsigned), new RegExp(v.refused));
        continue;
      }
      const { transfers, spl_transfers } = asJson(parseSolanaTransaction(v.unsigned).facts) as Record<string, unknown>;
      assert.deepEqual({ transfers, spl_transfers }, { transfers: v.transfers, spl_transfers: v.spl_transfers }, v.name);
    }
  });

  it("Solana: the largest transaction the parser accepts lists every one of its known-program transfers; one more instruction or account reference is refused", () => {
    // System and Token transfers up to the instruction limit (docs/signing-policies.md §1.3): one constant-work read each.
    const payer = Keypair.generate().publicKey,
      to = Keypair.generate().publicKey;
    const keys = [
      payer,
      to,
      new PublicKey("11111111111111111111111111111111"),
      new PublicKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"),
    ];
    const header = Buffer.concat([
      Buffer.of(1),
      Buffer.alloc(64),
      Buffer.of(1, 0, 2, keys.length),
      ...keys.map((k) => k.toBuffer()),
      Buffer.alloc(32, 1),
    ]);
    const sys = Buffer.concat([Buffer.of(2, 2, 0, 1, 12), Buffer.from([2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0])]);
    const tok = Buffer.concat([Buffer.of(3, 3, 1, 1, 0, 9, 3, 1, 0, 0, 0, 0, 0, 0, 0)]);
    const shortvec = (n: number) =>
      n < 0x80
        ? Buffer.of(n)
        : n < 0x4000
          ? Buffer.of(0x80 | (n & 0x7f), n >> 7)
          : Buffer.of(0x80 | (n & 0x7f), 0x80 | ((n >> 7) & 0x7f), n >> 14);
    const tx = (ixs: Buffer[]) => Buffer.concat([header, shortvec(ixs.length), ...ixs]).toString("hex");
    const transfers = (n: number) => Array.from({ length: n }, (_, i) => (i % 2 ? tok : sys));
    const facts = parseSolanaTransaction(tx(transfers(MAX_SOLANA_INSTRUCTIONS))).facts;
    assert.equal(facts.transfers.length + facts.spl_transfers.length, MAX_SOLANA_INSTRUCTIONS);
    refuses(() => parseSolanaTransaction(tx(transfers(MAX_SOLANA_INSTRUCTIONS + 1))), /513 instructions; at most 512/);
    // An unknown program (the payer's key) naming account 1 over and over: references count, not distinct accounts.
    const naming = (n: number) => Buffer.concat([Buffer.of(0), shortvec(n), Buffer.alloc(n, 1), Buffer.of(0)]);
    assert.equal(
      parseSolanaTransaction(tx([naming(MAX_SOLANA_ACCOUNT_REFERENCES - 10), naming(10)])).facts.instructions[0]!.accounts.length,
      MAX_SOLANA_ACCOUNT_REFERENCES - 10,
    );
    refuses(() => parseSolanaTransaction(tx([naming(MAX_SOLANA_ACCOUNT_REFERENCES - 10), naming(11)])), /more than 2048 accounts in all/);
  });

  it("EIP-712: domain, primary type and a message read through its types", () => {
    const facts = parseEip712(
      JSON.stringify({
        types: {
          EIP712Domain: [
            { name: "name", type: "string" },
            { name: "version", type: "string" },
            { name: "chainId", type: "uint256" },
            { name: "verifyingContract", type: "address" },
          ],
          TokenPermissions: [
            { name: "token", type: "address" },
            { name: "amount", type: "uint256" },
          ],
          PermitBatch: [
            { name: "permitted", type: "TokenPermissions[]" },
            { name: "spender", type: "address" },
            { name: "nonce", type: "uint256" },
            { name: "ok", type: "bool" },
            { name: "tag", type: "bytes4" },
          ],
        },
        primaryType: "PermitBatch",
        domain: { name: "Permit2", version: "1", chainId: 8453, verifyingContract: "0x000000000022D473030F116dDEE9F6B43aC78BA3" },
        message: {
          permitted: [{ token: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", amount: "1000000" }],
          spender: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
          nonce: 5,
          ok: true,
          tag: "0xA9059CBB",
          extra: "not signed",
        },
      }),
    );
    assert.deepEqual(asJson(facts), {
      primary_type: "PermitBatch",
      domain: { name: "Permit2", version: "1", chain_id: "8453n", verifying_contract: "0x000000000022d473030f116ddee9f6b43ac78ba3" },
      message: {
        permitted: [{ token: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", amount: "1000000n" }],
        spender: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
        nonce: "5n",
        ok: true,
        tag: "0xa9059cbb",
      },
    });
    // Maps have no prototype: a field named after an Object.prototype member is only ever its own value.
    assert.equal(Object.getPrototypeOf(facts.message), null);
    const typed = (message: unknown, fieldType = "uint8") =>
      JSON.stringify({
        types: { EIP712Domain: [{ name: "name", type: "string" }], M: [{ name: "x", type: fieldType }] },
        primaryType: "M",
        domain: { name: "n" },
        message,
      });
    refuses(() => parseEip712("{"), /not JSON/);
    refuses(() => parseEip712(typed({ x: 256 })), /out of range for uint8/);
    refuses(() => parseEip712(typed({})), /message.x is missing/);
    refuses(() => parseEip712(typed({ x: "0x12" }, "address")), /not an address/);
    refuses(() => parseEip712(typed({ x: 1 }, "Nope")), /unknown type Nope/);
    refuses(() => parseEip712(JSON.stringify({ types: { EIP712Domain: [] }, primaryType: "M", domain: {}, message: {} })), /primaryType/);
  });

  it("any bytes, and any one-byte change to a vector, either parse or throw a ParseError (never another error)", () => {
    const onlyParseErrors = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        if (!(err instanceof ParseError)) throw err;
      }
    };
    const hexOf = (b: Uint8Array) => Buffer.from(b).toString("hex");
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (b) => {
        onlyParseErrors(() => parseEthereumTransaction(hexOf(b)));
        onlyParseErrors(() => parseSolanaTransaction(hexOf(b)));
      }),
      { numRuns: 2000 },
    );
    const all = [
      ...vectors.ethereum.map((v) => ["eth", v.unsigned.replace(/^0x/, "")] as const),
      ...vectors.solana.map((v) => ["sol", v.unsigned] as const),
    ];
    fc.assert(
      fc.property(fc.nat(all.length - 1), fc.nat(), fc.integer({ min: 0, max: 255 }), (which, at, byte) => {
        const [chain, hex] = all[which]!;
        const b = Buffer.from(hex, "hex");
        b[at % b.length] = byte;
        onlyParseErrors(() => (chain === "eth" ? parseEthereumTransaction(b.toString("hex")) : parseSolanaTransaction(b.toString("hex"))));
      }),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(fc.json(), (text) => onlyParseErrors(() => parseEip712(text))),
      { numRuns: 500 },
    );
  });
});
