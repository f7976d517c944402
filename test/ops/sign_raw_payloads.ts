import { it } from "node:test";
import assert from "node:assert/strict";
import { hashTypedData, keccak256, recoverAddress, toHex, type TypedDataDefinition } from "viem";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import { completed, invalidRequest, notFound, perEngine } from "../helpers/inproc.ts";
import { ETH, SOL, newWallet } from "../helpers/keys-and-wallets.ts";
import { MAX_EIP712_ELEMENTS, MAX_EIP712_ELEMENTS_PER_REQUEST } from "../../src/signing/eip712.ts";

const OP = "sign_raw_payloads";
const TYPE = "ACTIVITY_TYPE_SIGN_RAW_PAYLOADS";

perEngine("sign_raw_payloads", (h) => {
  it("signs every payload with one key, signatures in payload order", async () => {
    const { addresses } = await newWallet(h(), [ETH(), SOL()]);
    const [eth, sol] = addresses as [`0x${string}`, string];
    const digests = ["one", "two", "three"].map((m) => keccak256(toHex(m)));
    const res = await h().submit(OP, TYPE, {
      signWith: eth,
      payloads: digests,
      encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
      hashFunction: "HASH_FUNCTION_NO_OP",
    });
    const { signatures } = completed(res, "signRawPayloadsResult");
    assert.equal(signatures.length, 3);
    for (const [i, sig] of signatures.entries()) {
      assert.equal(
        await recoverAddress({ hash: digests[i]!, signature: { r: `0x${sig.r}`, s: `0x${sig.s}`, yParity: Number(sig.v) } }),
        eth,
      );
    }
    // Solana, as @turnkey/solana sends it: hex messages, NOT_APPLICABLE.
    const messages = [Buffer.from("tx 1"), Buffer.from("tx 2")];
    const ed = completed(
      await h().submit(OP, TYPE, {
        signWith: sol,
        payloads: messages.map((m) => m.toString("hex")),
        encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
        hashFunction: "HASH_FUNCTION_NOT_APPLICABLE",
      }),
      "signRawPayloadsResult",
    );
    ed.signatures.forEach((sig: { r: string; s: string }, i: number) =>
      assert.ok(ed25519.verify(Buffer.from(sig.r + sig.s, "hex"), messages[i]!, base58.decode(sol))),
    );
  });

  it("one bad payload refuses the whole request, naming it; no payloads is 400; an unknown key 404", async () => {
    const { addresses } = await newWallet(h(), [ETH()]);
    const good = keccak256(toHex("good"));
    invalidRequest(
      await h().submit(OP, TYPE, {
        signWith: addresses[0],
        payloads: [good, "abcd"],
        encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
        hashFunction: "HASH_FUNCTION_NO_OP",
      }),
      /32-byte digest/,
      ["parameters.payloads[1]"],
    );
    invalidRequest(
      await h().submit(OP, TYPE, {
        signWith: addresses[0],
        payloads: [good, "zz"],
        encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
        hashFunction: "HASH_FUNCTION_KECCAK256",
      }),
      /hex/,
      ["parameters.payloads[1]"],
    );
    invalidRequest(
      await h().submit(OP, TYPE, {
        signWith: addresses[0],
        payloads: [],
        encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
        hashFunction: "HASH_FUNCTION_NO_OP",
      }),
      /payloads/,
    );
    notFound(
      await h().submit(OP, TYPE, {
        signWith: "nobody",
        payloads: [good],
        encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
        hashFunction: "HASH_FUNCTION_NO_OP",
      }),
      /no wallet account/,
    );
  });

  it("EIP-712 documents: the request's element bound in all signs, one element more is 400 naming parameters.payloads (docs/signing.md §2.4)", async () => {
    const { addresses } = await newWallet(h(), [ETH()]);
    const eth = addresses[0] as `0x${string}`;
    // n uint256 zeros: the domain's name (2 elements), the array (1), each zero (1).
    const doc = (n: number, tag: string): TypedDataDefinition => ({
      types: { EIP712Domain: [{ name: "name", type: "string" }], M: [{ name: "v", type: "uint256[]" }] },
      primaryType: "M",
      domain: { name: tag },
      message: { v: Array(n).fill("0") },
    });
    const quarter = MAX_EIP712_ELEMENTS_PER_REQUEST / 4 - 3;
    assert.ok(quarter + 3 <= MAX_EIP712_ELEMENTS);
    const docs = ["a", "b", "c", "d"].map((tag) => doc(quarter, tag));
    const params = { signWith: eth, encoding: "PAYLOAD_ENCODING_EIP712", hashFunction: "HASH_FUNCTION_NO_OP" };
    const { signatures } = completed(
      await h().submit(OP, TYPE, { ...params, payloads: docs.map((d) => JSON.stringify(d)) }),
      "signRawPayloadsResult",
    );
    for (const [i, sig] of signatures.entries()) {
      assert.equal(
        await recoverAddress({ hash: hashTypedData(docs[i]!), signature: { r: `0x${sig.r}`, s: `0x${sig.s}`, yParity: Number(sig.v) } }),
        eth,
      );
    }
    const over = [...docs.slice(0, 3), doc(quarter + 1, "d")].map((d) => JSON.stringify(d));
    invalidRequest(
      await h().submit(OP, TYPE, { ...params, payloads: over }),
      new RegExp(`more than ${MAX_EIP712_ELEMENTS_PER_REQUEST} elements in all`),
      ["parameters.payloads"],
    );
  });
});
