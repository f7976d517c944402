// The bounds on the EIP-712 elements one document and one request may hash, and the plan's
// digests (docs/signing.md §2.4): a document at the bound is accepted and hashes to viem's
// hashTypedData, at once and in slices; one element more is a 400 REQUEST_INVALID naming the
// payload; documents past the request's total are refused naming the list; the per-request
// memo hashes each payload once.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { hashTypedData, type TypedDataDefinition } from "viem";
import { ApiError } from "../../src/errors.ts";
import { hashPlan, hashPlanSliced, MAX_EIP712_ELEMENTS, MAX_EIP712_ELEMENTS_PER_REQUEST, planTypedData } from "../../src/signing/eip712.ts";
import { checkPayload, checkPayloads, digestInput } from "../../src/signing/payload.ts";

const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString("hex")}`;
const EIP712 = "PAYLOAD_ENCODING_EIP712" as const;
const NO_OP = "HASH_FUNCTION_NO_OP" as const;

/** A document of `zeros` uint256 zeros and one string of `chars` characters. */
function doc(zeros: number, chars = 0): TypedDataDefinition {
  return {
    types: {
      EIP712Domain: [{ name: "name", type: "string" }],
      Inner: [{ name: "note", type: "string" }],
      M: [
        { name: "v", type: "uint256[]" },
        { name: "inner", type: "Inner" },
      ],
    },
    primaryType: "M",
    domain: { name: "bounds" },
    message: { v: Array(zeros).fill("0"), inner: { note: "x".repeat(chars) } },
  };
}
// The domain's name (1 + its one 32-byte piece), the array (1) and each zero (1), the struct
// Inner (1), its string (1 + a piece per 32 bytes).
const elements = (zeros: number, chars = 0) => 2 + 1 + zeros + 1 + 1 + Math.ceil(chars / 32);
const text = (d: TypedDataDefinition) => JSON.stringify(d);
const zerosAtBound = MAX_EIP712_ELEMENTS - elements(0);

function refused(fn: () => unknown, field: string, message: RegExp) {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ApiError, String(err));
    assert.equal(err.httpStatus, 400);
    assert.equal(err.category, "REQUEST_INVALID");
    assert.match(err.message, message);
    const details = err.extraDetails as { fieldViolations?: { field: string }[] }[];
    assert.deepEqual(
      details.flatMap((d) => d.fieldViolations ?? []).map((v) => v.field),
      [field],
    );
    return true;
  });
}

describe("EIP-712 element bounds (docs/signing.md §2.4)", () => {
  it("counts every value, and a string one more per 32 bytes", () => {
    assert.equal(planTypedData(text(doc(10))).elements, elements(10));
    assert.equal(planTypedData(text(doc(10, 64))).elements, elements(10, 64));
    assert.equal(planTypedData(text(doc(10, 65))).elements, elements(10, 65));
  });

  it("a document at the bound is accepted and hashes to viem's digest, at once and in slices; one element more is refused naming the payload", async () => {
    const at = doc(zerosAtBound);
    const plan = planTypedData(text(at));
    assert.equal(plan.elements, MAX_EIP712_ELEMENTS);
    checkPayload(text(at), EIP712, NO_OP, "parameters.payload");
    assert.equal(hex(hashPlan(plan)), hashTypedData(at));
    assert.equal(hex(await hashPlanSliced(plan)), hashTypedData(at));

    refused(
      () => checkPayload(text(doc(zerosAtBound + 1)), EIP712, NO_OP, "parameters.payload"),
      "parameters.payload",
      new RegExp(`^parameters\\.payload: has more than ${MAX_EIP712_ELEMENTS} elements`),
    );
    // A string's 32-byte pieces count too: 32 more characters past the bound are refused.
    refused(() => checkPayload(text(doc(zerosAtBound, 32)), EIP712, NO_OP, "parameters.payload"), "parameters.payload", /has more than/);
  });

  it("the documents of one request: at most the request's bound in all, refused past it naming the list", () => {
    const perDoc = MAX_EIP712_ELEMENTS_PER_REQUEST / 4;
    const quarter = text(doc(perDoc - elements(0)));
    const field = (i: number) => `parameters.payloads[${i}]`;
    checkPayloads([quarter, quarter, quarter, quarter], EIP712, NO_OP, field, undefined, "parameters.payloads");
    refused(
      () => checkPayloads([quarter, quarter, quarter, quarter, text(doc(0))], EIP712, NO_OP, field, undefined, "parameters.payloads"),
      "parameters.payloads",
      new RegExp(`^parameters\\.payloads: its typed-data documents have more than ${MAX_EIP712_ELEMENTS_PER_REQUEST} elements in all`),
    );
    // A document past the per-document bound is named itself.
    refused(
      () => checkPayloads([text(doc(zerosAtBound + 1))], EIP712, NO_OP, field, undefined, "parameters.payloads"),
      "parameters.payloads[0]",
      /has more than/,
    );
  });

  it("a request's payload is hashed once: the digest after its check is the memo's, and agrees with viem", async () => {
    const request = {};
    const d = doc(100, 40);
    checkPayload(text(d), EIP712, NO_OP, "parameters.payload", request);
    const first = digestInput("CURVE_SECP256K1", text(d), EIP712, NO_OP, "parameters.payload", request);
    const second = digestInput("CURVE_SECP256K1", text(d), EIP712, NO_OP, "parameters.payload", request);
    assert.equal(await first, await second, "the same digest object: computed once");
    assert.equal(hex(await first), hashTypedData(d));
    // Another request (an approval's parameters read again) hashes afresh, to the same digest.
    assert.equal(hex(await digestInput("CURVE_SECP256K1", text(d), EIP712, NO_OP, "parameters.payload", {})), hashTypedData(d));
    // The curve checks still run: ed25519 cannot sign typed data.
    await assert.rejects(
      digestInput("CURVE_ED25519", text(d), EIP712, NO_OP, "parameters.payload", request),
      (err: unknown) => err instanceof ApiError && err.httpStatus === 400,
    );
  });
});
