// EIP-712 typed-data hashing (docs/signing.md §2.3): the digest signed for
// PAYLOAD_ENCODING_EIP712, keccak256(0x19 0x01 ‖ domainSeparator ‖ hashStruct(message)).
// A small implementation over @noble/hashes' keccak, so no Ethereum library is a runtime
// dependency; test/unit/signing-payload.test.ts checks it against viem's hashTypedData.
import { keccak_256 } from "@noble/hashes/sha3.js";
import { concatBytes } from "@noble/hashes/utils.js";

/** A typed-data document the request got wrong; the activity turns it into a 400. */
export class TypedDataError extends Error {}

interface Field {
  name: string;
  type: string;
}
type Types = ReadonlyMap<string, readonly Field[]>;

const hasOwn = Object.prototype.hasOwnProperty;
const utf8 = (s: string) => new TextEncoder().encode(s);

function hexBytes(v: unknown, what: string): Uint8Array {
  if (typeof v !== "string" || !/^0x([0-9a-fA-F]{2})*$/.test(v)) throw new TypedDataError(`${what}: must be 0x-prefixed hex of whole bytes`);
  return Uint8Array.from(Buffer.from(v.slice(2), "hex"));
}

function toBigInt(v: unknown, what: string): bigint {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === "string" && /^(-?\d{1,80}|0x[0-9a-fA-F]{1,64})$/.test(v)) return BigInt(v);
  throw new TypedDataError(`${what}: must be an integer (a number, a decimal string or 0x hex)`);
}

function word(n: bigint): Uint8Array {
  return Uint8Array.from(Buffer.from(n.toString(16).padStart(64, "0"), "hex"));
}

/** The domain fields EIP-712 defines, in its order, for a document that does not list them. */
const DOMAIN_FIELDS: readonly Field[] = [
  { name: "name", type: "string" },
  { name: "version", type: "string" },
  { name: "chainId", type: "uint256" },
  { name: "verifyingContract", type: "address" },
  { name: "salt", type: "bytes32" },
];

const baseType = (t: string) => t.replace(/(\[\d*\])+$/, "");

function dependencies(types: Types, primary: string, found = new Set<string>()): Set<string> {
  if (found.has(primary) || !types.has(primary)) return found;
  found.add(primary);
  for (const f of types.get(primary)!) dependencies(types, baseType(f.type), found);
  return found;
}

function encodeType(types: Types, primary: string): string {
  const deps = [...dependencies(types, primary)].filter((t) => t !== primary).sort();
  return [primary, ...deps].map((t) => `${t}(${types.get(t)!.map((f) => `${f.type} ${f.name}`).join(",")})`).join("");
}

function encodeValue(types: Types, type: string, value: unknown, what: string, depth: number): Uint8Array {
  if (depth > 32) throw new TypedDataError(`${what}: nested too deeply`);
  const array = /^(.*)\[(\d*)\]$/.exec(type);
  if (array) {
    if (!Array.isArray(value)) throw new TypedDataError(`${what}: must be an array (${type})`);
    if (array[2] !== "" && value.length !== Number(array[2])) throw new TypedDataError(`${what}: must have ${array[2]} elements`);
    return keccak_256(concatBytes(...value.map((v, i) => encodeValue(types, array[1]!, v, `${what}[${i}]`, depth + 1))));
  }
  if (types.has(type)) return hashStruct(types, type, value, what, depth + 1);
  if (type === "string") {
    if (typeof value !== "string") throw new TypedDataError(`${what}: must be a string`);
    return keccak_256(utf8(value));
  }
  if (type === "bytes") return keccak_256(hexBytes(value, what));
  if (type === "bool") {
    if (typeof value !== "boolean") throw new TypedDataError(`${what}: must be true or false`);
    return word(value ? 1n : 0n);
  }
  if (type === "address") {
    if (typeof value !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(value)) throw new TypedDataError(`${what}: must be a 0x address of 20 bytes`);
    return word(BigInt(value));
  }
  const fixed = /^bytes(\d{1,2})$/.exec(type);
  if (fixed && Number(fixed[1]) >= 1 && Number(fixed[1]) <= 32) {
    const b = hexBytes(value, what);
    if (b.length !== Number(fixed[1])) throw new TypedDataError(`${what}: must be ${fixed[1]} bytes`);
    const out = new Uint8Array(32);
    out.set(b);
    return out;
  }
  const int = /^(u?)int(\d{1,3})$/.exec(type);
  if (int && Number(int[2]) >= 8 && Number(int[2]) <= 256 && Number(int[2]) % 8 === 0) {
    const bits = BigInt(int[2]!);
    const n = toBigInt(value, what);
    const unsigned = int[1] === "u";
    const min = unsigned ? 0n : -(1n << (bits - 1n));
    const max = unsigned ? (1n << bits) - 1n : (1n << (bits - 1n)) - 1n;
    if (n < min || n > max) throw new TypedDataError(`${what}: out of range for ${type}`);
    return word(n < 0n ? (1n << 256n) + n : n);
  }
  throw new TypedDataError(`${what}: unknown type ${JSON.stringify(type.slice(0, 60))}`);
}

/**
 * keccak(encodeType) once per type of a document: a struct value repeated thousands of times
 * (arrays of structs) must not rebuild and rehash its type's dependency closure each time.
 */
const typeHashes = new WeakMap<Types, Map<string, Uint8Array>>();
function typeHash(types: Types, type: string): Uint8Array {
  let cache = typeHashes.get(types);
  if (!cache) typeHashes.set(types, (cache = new Map()));
  let h = cache.get(type);
  if (!h) cache.set(type, (h = keccak_256(utf8(encodeType(types, type)))));
  return h;
}

function hashStruct(types: Types, type: string, value: unknown, what: string, depth: number): Uint8Array {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new TypedDataError(`${what}: must be an object (${type})`);
  const obj = value as Record<string, unknown>;
  const fields = types.get(type)!;
  const parts: Uint8Array[] = [typeHash(types, type)];
  for (const f of fields) {
    if (!hasOwn.call(obj, f.name)) throw new TypedDataError(`${what}.${f.name}: missing`);
    parts.push(encodeValue(types, f.type, obj[f.name], `${what}.${f.name}`, depth));
  }
  return keccak_256(concatBytes(...parts));
}

function parseTypes(raw: unknown, domain: Record<string, unknown>): Map<string, Field[]> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new TypedDataError("types: must be an object");
  const types = new Map<string, Field[]>();
  for (const [name, fields] of Object.entries(raw)) {
    if (!Array.isArray(fields)) throw new TypedDataError(`types.${name}: must be a list of {name, type}`);
    types.set(
      name,
      fields.map((f: unknown, i) => {
        const o = f as Record<string, unknown> | null;
        if (!o || typeof o.name !== "string" || typeof o.type !== "string") throw new TypedDataError(`types.${name}[${i}]: must be {name, type}`);
        return { name: o.name, type: o.type };
      }),
    );
  }
  if (!types.has("EIP712Domain")) types.set("EIP712Domain", DOMAIN_FIELDS.filter((f) => hasOwn.call(domain, f.name) && domain[f.name] !== undefined));
  return types;
}

/** The EIP-712 digest of a typed-data document as JSON text ({types, primaryType, domain, message}). */
export function hashTypedDataJson(json: string): Uint8Array {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch {
    throw new TypedDataError("payload: not valid JSON typed data");
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) throw new TypedDataError("payload: must be a JSON object");
  const d = doc as Record<string, unknown>;
  const domain = (d.domain ?? {}) as Record<string, unknown>;
  if (typeof domain !== "object" || domain === null || Array.isArray(domain)) throw new TypedDataError("domain: must be an object");
  const types = parseTypes(d.types, domain);
  const primaryType = d.primaryType;
  if (typeof primaryType !== "string" || !types.has(primaryType)) throw new TypedDataError("primaryType: must name one of types");
  const parts: Uint8Array[] = [Uint8Array.of(0x19, 0x01), hashStruct(types, "EIP712Domain", domain, "domain", 0)];
  if (primaryType !== "EIP712Domain") parts.push(hashStruct(types, primaryType, d.message, "message", 0));
  return keccak_256(concatBytes(...parts));
}
