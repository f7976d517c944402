// From a raw payload, its encoding and hash function to the bytes a curve signs
// (docs/signing.md §2): secp256k1 signs a 32-byte digest, ed25519 the message itself. Every
// combination that does not name exactly one digest is refused with a 400 naming the field.
import { Type } from "@sinclair/typebox";
import { sha256 } from "@noble/hashes/sha2.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { invalid } from "../errors.ts";
import {
  hashPlanSliced,
  hashTypedDataJson,
  MAX_EIP712_ELEMENTS,
  MAX_EIP712_ELEMENTS_PER_REQUEST,
  planTypedData,
  TooManyElements,
  TypedDataError,
  type TypedDataPlan,
} from "./eip712.ts";
import type { SigningCurve } from "./sign.ts";

export const PayloadEncoding = Type.Union(
  [
    Type.Literal("PAYLOAD_ENCODING_HEXADECIMAL"),
    Type.Literal("PAYLOAD_ENCODING_TEXT_UTF8"),
    Type.Literal("PAYLOAD_ENCODING_EIP712"),
    Type.Literal("PAYLOAD_ENCODING_EIP7702_AUTHORIZATION"),
  ],
  { errorMessage: "must be a PAYLOAD_ENCODING_* value (HEXADECIMAL, TEXT_UTF8, EIP712, EIP7702_AUTHORIZATION)" },
);
export const HashFunction = Type.Union(
  [
    Type.Literal("HASH_FUNCTION_NO_OP"),
    Type.Literal("HASH_FUNCTION_SHA256"),
    Type.Literal("HASH_FUNCTION_KECCAK256"),
    Type.Literal("HASH_FUNCTION_NOT_APPLICABLE"),
  ],
  { errorMessage: "must be a HASH_FUNCTION_* value (NO_OP, SHA256, KECCAK256, NOT_APPLICABLE)" },
);
/** At most 64 KiB of payload text (32 KiB as hex). [our choice] */
export const MAX_PAYLOAD_CHARS = 65_536;
export const Payload = Type.String({
  maxLength: MAX_PAYLOAD_CHARS,
  errorMessage: `must be a string of at most ${MAX_PAYLOAD_CHARS} characters`,
});

export type Encoding = (typeof PayloadEncoding)["static"];
export type Hash = (typeof HashFunction)["static"];

const bad = (field: string, description: string) => invalid(`${field}: ${description}`, [{ field, description }]);

/**
 * Checks that need no key: the encoding/hash pair on its own and the payload's form. The
 * curve-dependent rules are in `signingInput`. `field` names the payload in errors.
 * Typed data is read and counted here but not hashed (docs/signing.md §2.4): its plan is kept
 * for `request` (the request's parameters), which `hashTypedData` and `digestInput` hash.
 */
export function checkPayload(payload: string, encoding: Encoding, hash: Hash, field: string, request?: object): void {
  checkPayloads([payload], encoding, hash, () => field, request);
}

/**
 * checkPayload for each payload of one request, whose typed-data documents together may hold
 * at most MAX_EIP712_ELEMENTS_PER_REQUEST elements; past it the request is refused naming
 * `listField` (docs/signing.md §2.4).
 */
export function checkPayloads(
  payloads: readonly string[],
  encoding: Encoding,
  hash: Hash,
  field: (i: number) => string,
  request?: object,
  listField?: string,
): void {
  checkHashFunction(encoding, hash);
  if (encoding !== "PAYLOAD_ENCODING_EIP712") {
    payloads.forEach((payload, i) => messageBytes(payload, encoding, field(i)));
    return;
  }
  let left = MAX_EIP712_ELEMENTS_PER_REQUEST;
  payloads.forEach((payload, i) => {
    const limit = Math.min(MAX_EIP712_ELEMENTS, left);
    let plan: TypedDataPlan;
    try {
      plan = planTypedData(payload, limit);
    } catch (err) {
      if (err instanceof TooManyElements && limit < MAX_EIP712_ELEMENTS && listField) {
        throw bad(
          listField,
          `its typed-data documents have more than ${MAX_EIP712_ELEMENTS_PER_REQUEST} elements in all (values, and 32-byte pieces of strings and bytes): the most one request may hash`,
        );
      }
      if (err instanceof TypedDataError) throw bad(field(i), err.message);
      throw err;
    }
    left -= plan.elements;
    if (request) plansOf(request).set(field(i), { payload, plan });
  });
}

/**
 * The typed-data plans and digests of one request, keyed by its parameters object (which the
 * submission's checks, admit and execute share): each document is hashed once per request,
 * however many steps need its digest. An approval's execute sees parameters re-read from the
 * recorded intent, so it plans and hashes afresh. [our choice]
 */
type TypedDataPlans = Map<string, { payload: string; plan: TypedDataPlan; digest?: Promise<Uint8Array> }>;
const typedData = new WeakMap<object, TypedDataPlans>();
function plansOf(request: object) {
  let plans = typedData.get(request);
  if (!plans) typedData.set(request, (plans = new Map() as TypedDataPlans));
  return plans;
}

function digestOf(request: object, field: string, payload: string): Promise<Uint8Array> {
  const plans = plansOf(request);
  let entry = plans.get(field);
  if (!entry || entry.payload !== payload) {
    try {
      entry = { payload, plan: planTypedData(payload) };
    } catch (err) {
      if (err instanceof TypedDataError) throw bad(field, err.message);
      throw err;
    }
    plans.set(field, entry);
  }
  return (entry.digest ??= hashPlanSliced(entry.plan));
}

/**
 * Hashes the typed data `checkPayload` planned for this request, in slices that let the event
 * loop serve others (docs/signing.md §2.4): run at submission after authentication, before the
 * signing transaction, so no transaction stays open while it hashes.
 */
export async function hashTypedData(request: object): Promise<void> {
  const plans = typedData.get(request);
  if (!plans) return;
  for (const [field, { payload }] of plans) await digestOf(request, field, payload);
}

/**
 * signingInput for the activity that signs: typed data's digest is the one this request's
 * checks planned and `hashTypedData` computed, or is hashed now, in slices.
 */
export async function digestInput(
  curve: SigningCurve,
  payload: string,
  encoding: Encoding,
  hash: Hash,
  field: string,
  request: object,
): Promise<Uint8Array> {
  if (encoding !== "PAYLOAD_ENCODING_EIP712") return signingInput(curve, payload, encoding, hash, field);
  inputFor(curve, payload, encoding, hash, field, false);
  return digestOf(request, field, payload);
}

function checkHashFunction(encoding: Encoding, hash: Hash): void {
  if (encoding === "PAYLOAD_ENCODING_EIP712" || encoding === "PAYLOAD_ENCODING_EIP7702_AUTHORIZATION") {
    if (hash !== "HASH_FUNCTION_NO_OP")
      throw bad("parameters.hashFunction", `${encoding} payloads are hashed as their standard defines: use HASH_FUNCTION_NO_OP`);
  }
}

function messageBytes(payload: string, encoding: Encoding, field: string): Uint8Array {
  try {
    switch (encoding) {
      case "PAYLOAD_ENCODING_HEXADECIMAL": {
        const hex = payload.startsWith("0x") || payload.startsWith("0X") ? payload.slice(2) : payload;
        if (hex.length === 0 || hex.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(hex))
          throw bad(field, "must be hex of whole bytes (an optional 0x prefix), not empty");
        return Uint8Array.from(Buffer.from(hex, "hex"));
      }
      case "PAYLOAD_ENCODING_TEXT_UTF8":
        if (payload.length === 0) throw bad(field, "must not be empty");
        return new TextEncoder().encode(payload);
      case "PAYLOAD_ENCODING_EIP712":
        return hashTypedDataJson(payload);
      case "PAYLOAD_ENCODING_EIP7702_AUTHORIZATION":
        return authorizationHash(payload);
    }
  } catch (err) {
    if (err instanceof TypedDataError) throw bad(field, err.message);
    throw err;
  }
}

/**
 * The bytes the key signs: for secp256k1 the 32-byte digest (EIP-712 and EIP-7702 payloads
 * are digests already; NO_OP takes a hex payload of exactly 32 bytes as the digest); for
 * ed25519 the message (HASH_FUNCTION_NOT_APPLICABLE only: ed25519 hashes internally).
 */
export function signingInput(curve: SigningCurve, payload: string, encoding: Encoding, hash: Hash, field: string): Uint8Array {
  return inputFor(curve, payload, encoding, hash, field, true);
}

/**
 * Refuses (400) what signingInput would refuse for a key of this curve, without hashing: the
 * check before authorization (ActivityDefinition.checkSigner); the handler hashes once.
 */
export function checkSigningInput(curve: SigningCurve, payload: string, encoding: Encoding, hash: Hash, field: string): void {
  inputFor(curve, payload, encoding, hash, field, false);
}

function inputFor(curve: SigningCurve, payload: string, encoding: Encoding, hash: Hash, field: string, digest: boolean): Uint8Array {
  checkHashFunction(encoding, hash);
  // Typed data was checked by checkPayload; its digest is costly and not needed to check (docs/signing.md §2.4).
  const bytes = !digest && encoding === "PAYLOAD_ENCODING_EIP712" ? new Uint8Array(0) : messageBytes(payload, encoding, field);
  if (curve === "CURVE_ED25519") {
    if (encoding === "PAYLOAD_ENCODING_EIP712" || encoding === "PAYLOAD_ENCODING_EIP7702_AUTHORIZATION") {
      throw bad("parameters.encoding", `${encoding} is an Ethereum encoding: it needs a secp256k1 key, not ed25519`);
    }
    if (hash !== "HASH_FUNCTION_NOT_APPLICABLE")
      throw bad("parameters.hashFunction", "ed25519 signs the message itself: use HASH_FUNCTION_NOT_APPLICABLE");
    return bytes;
  }
  if (encoding === "PAYLOAD_ENCODING_EIP712" || encoding === "PAYLOAD_ENCODING_EIP7702_AUTHORIZATION") return bytes;
  switch (hash) {
    case "HASH_FUNCTION_NOT_APPLICABLE":
      throw bad(
        "parameters.hashFunction",
        "secp256k1 signs a digest: use HASH_FUNCTION_KECCAK256, HASH_FUNCTION_SHA256, or HASH_FUNCTION_NO_OP with a 32-byte hex digest",
      );
    case "HASH_FUNCTION_SHA256":
      return digest ? sha256(bytes) : bytes;
    case "HASH_FUNCTION_KECCAK256":
      return digest ? keccak_256(bytes) : bytes;
    case "HASH_FUNCTION_NO_OP":
      if (encoding !== "PAYLOAD_ENCODING_HEXADECIMAL" || bytes.length !== 32) {
        throw bad(field, "with HASH_FUNCTION_NO_OP a secp256k1 payload must be the 32-byte digest, as hex (PAYLOAD_ENCODING_HEXADECIMAL)");
      }
      return bytes;
  }
}

// EIP-7702 authorization: keccak256(0x05 ‖ rlp([chainId, address, nonce])). The payload is
// the JSON {address, chainId, nonce} @turnkey/viem's signAuthorization sends.
function rlpBytes(b: Uint8Array): Uint8Array {
  if (b.length === 1 && b[0]! < 0x80) return b;
  return Uint8Array.from([...rlpLength(b.length, 0x80), ...b]);
}
function rlpLength(n: number, offset: number): number[] {
  if (n < 56) return [offset + n];
  const len = Buffer.from(n.toString(16).padStart(n.toString(16).length + (n.toString(16).length % 2), "0"), "hex");
  return [offset + 55 + len.length, ...len];
}
function rlpInt(n: bigint): Uint8Array {
  if (n === 0n) return rlpBytes(new Uint8Array(0));
  const hex = n.toString(16);
  return rlpBytes(Uint8Array.from(Buffer.from(hex.length % 2 ? `0${hex}` : hex, "hex")));
}

function uint(v: unknown, what: string, bits: bigint): bigint {
  let n: bigint | undefined;
  if (typeof v === "number" && Number.isSafeInteger(v)) n = BigInt(v);
  else if (typeof v === "string" && /^(\d{1,80}|0x[0-9a-fA-F]{1,64})$/.test(v)) n = BigInt(v);
  if (n === undefined || n < 0n || n >= 1n << bits) throw new TypedDataError(`${what}: must be an unsigned integer below 2^${bits}`);
  return n;
}

function authorizationHash(json: string): Uint8Array {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(json) as Record<string, unknown>;
  } catch {
    throw new TypedDataError("not valid JSON {address, chainId, nonce}");
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc))
    throw new TypedDataError("must be a JSON object {address, chainId, nonce}");
  if (typeof doc.address !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(doc.address))
    throw new TypedDataError("address: must be a 0x address of 20 bytes");
  const chainId = uint(doc.chainId, "chainId", 256n);
  const nonce = uint(doc.nonce, "nonce", 64n);
  const items = [rlpInt(chainId), rlpBytes(Uint8Array.from(Buffer.from(doc.address.slice(2), "hex"))), rlpInt(nonce)];
  const body = Uint8Array.from(items.flatMap((i) => [...i]));
  const list = Uint8Array.from([...rlpLength(body.length, 0xc0), ...body]);
  return keccak_256(Uint8Array.from([0x05, ...list]));
}
