// EIP-712 typed-data hashing (docs/signing.md §2.3): the digest signed for
// PAYLOAD_ENCODING_EIP712, keccak256(0x19 0x01 ‖ domainSeparator ‖ hashStruct(message)).
// A small implementation over @noble/hashes' keccak, so no Ethereum library is a runtime
// dependency; test/unit/signing-payload.test.ts checks it against viem's hashTypedData.
//
// Two steps (docs/signing.md §2.4): `planTypedData` reads and checks the whole document and
// counts its elements (refusing one past the bound) without hashing; the plan is then hashed,
// at once (`hashPlan`) or in slices that let the event loop serve others (`hashPlanSliced`).
import { keccak_256 } from "@noble/hashes/sha3.js";

/** A typed-data document the request got wrong; the activity turns it into a 400. */
export class TypedDataError extends Error {}

/** A document with more elements than the bound it was planned under. */
export class TooManyElements extends TypedDataError {
  constructor(readonly limit: number) {
    super(`has more than ${limit} elements (values, and 32-byte pieces of strings and bytes): the most one typed-data document may hash`);
  }
}

/**
 * At most this many elements in one EIP-712 document, and in all the documents of one request
 * (docs/signing.md §2.4): every value counts one (atomic, string, bytes, struct, array), and
 * a string or bytes value one more per 32 bytes. [our choice]
 */
export const MAX_EIP712_ELEMENTS = 4_096;
export const MAX_EIP712_ELEMENTS_PER_REQUEST = 8_192;

interface Field {
  name: string;
  type: string;
}
type Types = ReadonlyMap<string, readonly Field[]>;

const hasOwn = Object.prototype.hasOwnProperty;
const utf8 = (s: string) => new TextEncoder().encode(s);

function hexBytes(v: unknown, what: string): Uint8Array {
  if (typeof v !== "string" || !/^0x([0-9a-fA-F]{2})*$/.test(v))
    throw new TypedDataError(`${what}: must be 0x-prefixed hex of whole bytes`);
  return Uint8Array.from(Buffer.from(v.slice(2), "hex"));
}

function toBigInt(v: unknown, what: string): bigint {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === "string" && /^(-?\d{1,80}|0x[0-9a-fA-F]{1,64})$/.test(v)) return BigInt(v);
  throw new TypedDataError(`${what}: must be an integer (a number, a decimal string or 0x hex)`);
}

function word(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  // Most words are small (counts, amounts, booleans): written without a hex round trip.
  if (n <= 0xffff_ffffn) {
    const v = Number(n);
    out[28] = v >>> 24;
    out[29] = (v >>> 16) & 0xff;
    out[30] = (v >>> 8) & 0xff;
    out[31] = v & 0xff;
    return out;
  }
  out.set(Buffer.from(n.toString(16).padStart(64, "0"), "hex"));
  return out;
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
  return [primary, ...deps]
    .map(
      (t) =>
        `${t}(${types
          .get(t)!
          .map((f) => `${f.type} ${f.name}`)
          .join(",")})`,
    )
    .join("");
}

// The plan: the document's encoding as a flat list of steps over a stack of keccak states.
// OPEN starts a hash (a struct's, prefixed with its type hash; an array's; the document's,
// prefixed with 0x19 0x01); WORD feeds a 32-byte word to the innermost; BYTES feeds the
// keccak of its bytes (string, bytes); CLOSE ends the innermost and feeds its digest to the
// one around it — hashStruct and the array encoding of EIP-712, in order.
const OPEN = 0;
const WORD = 1;
const BYTES = 2;
const CLOSE = 3;
type Step =
  | { readonly op: typeof OPEN | typeof WORD | typeof BYTES; readonly data: Uint8Array | undefined }
  | { readonly op: typeof CLOSE; readonly data: undefined };
const CLOSE_STEP: Step = { op: CLOSE, data: undefined };

/** A typed-data document, checked and counted: what is left is hashing it. */
export interface TypedDataPlan {
  /** Its elements, as MAX_EIP712_ELEMENTS counts them. */
  readonly elements: number;
  readonly steps: readonly Step[];
}

class Planner {
  readonly steps: Step[] = [];
  elements = 0;
  /** keccak(encodeType) once per type of the document, however many values it has. */
  private readonly typeHashes = new Map<string, Uint8Array>();

  constructor(
    private readonly types: Types,
    private readonly maxElements: number,
  ) {}

  private count(n: number): void {
    this.elements += n;
    if (this.elements > this.maxElements) throw new TooManyElements(this.maxElements);
  }

  private typeHash(type: string): Uint8Array {
    let h = this.typeHashes.get(type);
    if (!h) this.typeHashes.set(type, (h = keccak_256(utf8(encodeType(this.types, type)))));
    return h;
  }

  private push(op: typeof OPEN | typeof WORD | typeof BYTES, data?: Uint8Array): void {
    this.steps.push({ op, data });
  }

  private bytes(b: Uint8Array): void {
    this.count(Math.ceil(b.length / 32));
    this.push(BYTES, b);
  }

  value(type: string, value: unknown, what: string, depth: number): void {
    if (depth > 32) throw new TypedDataError(`${what}: nested too deeply`);
    this.count(1);
    let encode = this.encoders.get(type);
    if (!encode) this.encoders.set(type, (encode = this.encoder(type)));
    encode(value, what, depth);
  }

  /** Each type string of the document is read once (its regular expressions, its integer range), not once per value. */
  private readonly encoders = new Map<string, (value: unknown, what: string, depth: number) => void>();

  private encoder(type: string): (value: unknown, what: string, depth: number) => void {
    const array = /^(.*)\[(\d*)\]$/.exec(type);
    if (array) {
      const of = array[1]!;
      const length = array[2] === "" ? undefined : Number(array[2]);
      return (value, what, depth) => {
        if (!Array.isArray(value)) throw new TypedDataError(`${what}: must be an array (${type})`);
        if (length !== undefined && value.length !== length) throw new TypedDataError(`${what}: must have ${length} elements`);
        this.push(OPEN);
        for (let i = 0; i < value.length; i++) this.value(of, value[i], `${what}[${i}]`, depth + 1);
        this.steps.push(CLOSE_STEP);
      };
    }
    if (this.types.has(type)) return (value, what, depth) => this.struct(type, value, what, depth + 1);
    if (type === "string") {
      return (value, what) => {
        if (typeof value !== "string") throw new TypedDataError(`${what}: must be a string`);
        this.bytes(utf8(value));
      };
    }
    if (type === "bytes") return (value, what) => this.bytes(hexBytes(value, what));
    if (type === "bool") {
      return (value, what) => {
        if (typeof value !== "boolean") throw new TypedDataError(`${what}: must be true or false`);
        this.push(WORD, word(value ? 1n : 0n));
      };
    }
    if (type === "address") {
      return (value, what) => {
        if (typeof value !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(value))
          throw new TypedDataError(`${what}: must be a 0x address of 20 bytes`);
        this.push(WORD, word(BigInt(value)));
      };
    }
    const fixed = /^bytes(\d{1,2})$/.exec(type);
    if (fixed && Number(fixed[1]) >= 1 && Number(fixed[1]) <= 32) {
      const size = Number(fixed[1]);
      return (value, what) => {
        const b = hexBytes(value, what);
        if (b.length !== size) throw new TypedDataError(`${what}: must be ${size} bytes`);
        const out = new Uint8Array(32);
        out.set(b);
        this.push(WORD, out);
      };
    }
    const int = /^(u?)int(\d{1,3})$/.exec(type);
    if (int && Number(int[2]) >= 8 && Number(int[2]) <= 256 && Number(int[2]) % 8 === 0) {
      const bits = BigInt(int[2]!);
      const unsigned = int[1] === "u";
      const min = unsigned ? 0n : -(1n << (bits - 1n));
      const max = unsigned ? (1n << bits) - 1n : (1n << (bits - 1n)) - 1n;
      return (value, what) => {
        const n = toBigInt(value, what);
        if (n < min || n > max) throw new TypedDataError(`${what}: out of range for ${type}`);
        this.push(WORD, word(n < 0n ? (1n << 256n) + n : n));
      };
    }
    return (_value, what) => {
      throw new TypedDataError(`${what}: unknown type ${JSON.stringify(type.slice(0, 60))}`);
    };
  }

  struct(type: string, value: unknown, what: string, depth: number): void {
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw new TypedDataError(`${what}: must be an object (${type})`);
    const obj = value as Record<string, unknown>;
    this.push(OPEN, this.typeHash(type));
    for (const f of this.types.get(type)!) {
      if (!hasOwn.call(obj, f.name)) throw new TypedDataError(`${what}.${f.name}: missing`);
      this.value(f.type, obj[f.name], `${what}.${f.name}`, depth);
    }
    this.steps.push(CLOSE_STEP);
  }

  document(prefix: Uint8Array, fill: () => void): void {
    this.push(OPEN, prefix);
    fill();
    this.steps.push(CLOSE_STEP);
  }
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
        if (!o || typeof o.name !== "string" || typeof o.type !== "string")
          throw new TypedDataError(`types.${name}[${i}]: must be {name, type}`);
        return { name: o.name, type: o.type };
      }),
    );
  }
  if (!types.has("EIP712Domain"))
    types.set(
      "EIP712Domain",
      DOMAIN_FIELDS.filter((f) => hasOwn.call(domain, f.name) && domain[f.name] !== undefined),
    );
  return types;
}

/**
 * Reads a typed-data document as JSON text ({types, primaryType, domain, message}), checks
 * every value against its type and counts the elements, refusing the document past
 * `maxElements`; hashes nothing but its type strings.
 */
export function planTypedData(json: string, maxElements = MAX_EIP712_ELEMENTS): TypedDataPlan {
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
  const planner = new Planner(types, maxElements);
  planner.document(Uint8Array.of(0x19, 0x01), () => {
    planner.struct("EIP712Domain", domain, "domain", 0);
    if (primaryType !== "EIP712Domain") planner.struct(primaryType, d.message, "message", 0);
  });
  return { elements: planner.elements, steps: planner.steps };
}

/** A plan being hashed: the open keccak states, innermost last, and the next step. */
class Hashing {
  private readonly open: ReturnType<typeof keccak_256.create>[] = [];
  private at = 0;
  private digest: Uint8Array | undefined;

  constructor(private readonly steps: readonly Step[]) {}

  /** Runs steps until `pause()` says so (asked every 8 steps: a step may be a keccak, ~25 µs here) or the plan ends; the digest once it has. */
  run(pause: () => boolean): Uint8Array | undefined {
    const { steps, open } = this;
    while (this.at < steps.length) {
      const s = steps[this.at++]!;
      if (s.op === OPEN) {
        const h = keccak_256.create();
        if (s.data) h.update(s.data);
        open.push(h);
      } else if (s.op === WORD) open[open.length - 1]!.update(s.data!);
      else if (s.op === BYTES) open[open.length - 1]!.update(keccak_256(s.data!));
      else {
        const digest = open.pop()!.digest();
        if (open.length === 0) this.digest = digest;
        else open[open.length - 1]!.update(digest);
      }
      if ((this.at & 7) === 0 && pause()) break;
    }
    if (this.at < steps.length) return undefined;
    if (!this.digest) throw new Error("a typed-data plan ended without its document's digest");
    return this.digest;
  }
}

/** The plan's digest, computed at once. */
export function hashPlan(plan: TypedDataPlan): Uint8Array {
  return new Hashing(plan.steps).run(() => false)!;
}

/**
 * How long hashing runs before it lets the event loop serve others (docs/signing.md §2.4):
 * the largest document is some hundreds of milliseconds of keccak on a loaded machine, which
 * /healthz and every other tenant would otherwise wait out. [our choice]
 */
const SLICE_MS = 5;
const otherWork = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The plan's digest, hashed in slices of about SLICE_MS with the event loop served between them. */
export async function hashPlanSliced(plan: TypedDataPlan): Promise<Uint8Array> {
  const hashing = new Hashing(plan.steps);
  for (;;) {
    const start = performance.now();
    const digest = hashing.run(() => performance.now() - start > SLICE_MS);
    if (digest) return digest;
    await otherWork();
  }
}

/** The EIP-712 digest of a typed-data document as JSON text, computed at once. */
export function hashTypedDataJson(json: string, maxElements = MAX_EIP712_ELEMENTS): Uint8Array {
  return hashPlan(planTypedData(json, maxElements));
}
