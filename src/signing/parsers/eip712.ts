// EIP-712 typed data (the JSON a client signs with PAYLOAD_ENCODING_EIP712) → the
// `eth.eip_712` facts. Pure. Values are read through the declared types, so a policy sees
// what the signature covers: integers as ints, addresses lower-case, structs as maps keyed
// by field name (docs/signing-policies.md §1.2).
import { ParseError } from "./errors.ts";

/** A struct of the message, keyed by field name (no prototype: names come from the request). */
export type Eip712Map = { readonly [field: string]: Eip712Value };
export type Eip712Value = string | bigint | boolean | readonly Eip712Value[] | Eip712Map;

export type Eip712DomainFacts = {
  name?: string;
  version?: string;
  chain_id?: bigint;
  verifying_contract?: string;
  salt?: string;
};

export type Eip712Facts = {
  primary_type: string;
  domain: Eip712DomainFacts;
  message: Eip712Map;
};

type Field = { name: string; type: string };
type Types = ReadonlyMap<string, readonly Field[]>;

const MAX_JSON = 64 * 1024;
const MAX_DEPTH = 16;
const INT_TYPE = /^(u?)int(\d*)$/;
const BYTES_TYPE = /^bytes(\d*)$/;
const ARRAY_TYPE = /^(.+)\[(\d*)\]$/;
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const own = (o: Record<string, unknown>, k: string): unknown => (Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined);

function readTypes(raw: unknown): Types {
  if (!isRecord(raw)) throw new ParseError("typed data: types must be an object");
  const types = new Map<string, readonly Field[]>();
  for (const name of Object.keys(raw)) {
    if (!IDENT.test(name)) throw new ParseError(`typed data: invalid type name ${JSON.stringify(name)}`);
    const fields = raw[name];
    if (!Array.isArray(fields)) throw new ParseError(`typed data: types.${name} must be a list`);
    const seen = new Set<string>();
    types.set(
      name,
      fields.map((f, i) => {
        if (!isRecord(f) || typeof f.name !== "string" || typeof f.type !== "string")
          throw new ParseError(`typed data: types.${name}[${i}] needs a name and a type`);
        if (seen.has(f.name)) throw new ParseError(`typed data: types.${name} declares ${f.name} twice`);
        seen.add(f.name);
        return { name: f.name, type: f.type };
      }),
    );
  }
  return types;
}

function integer(v: unknown, type: string, signed: boolean, bits: number, what: string): bigint {
  let n: bigint;
  if (typeof v === "number" && Number.isSafeInteger(v)) n = BigInt(v);
  else if (typeof v === "string" && /^-?(0x[0-9a-fA-F]+|[0-9]+)$/.test(v)) n = v.startsWith("-") ? -BigInt(v.slice(1)) : BigInt(v);
  else if (typeof v === "bigint") n = v;
  else throw new ParseError(`typed data: ${what} is not a ${type}`);
  const limit = 1n << BigInt(signed ? bits - 1 : bits);
  if (signed ? n < -limit || n >= limit : n < 0n || n >= limit) throw new ParseError(`typed data: ${what} is out of range for ${type}`);
  return n;
}

function value(types: Types, type: string, v: unknown, what: string, depth: number): Eip712Value {
  if (depth > MAX_DEPTH) throw new ParseError("typed data: nested too deeply");
  const arr = ARRAY_TYPE.exec(type);
  if (arr) {
    if (!Array.isArray(v)) throw new ParseError(`typed data: ${what} is not a list`);
    if (arr[2] !== "" && v.length !== Number(arr[2])) throw new ParseError(`typed data: ${what} must have ${arr[2]} elements`);
    return v.map((e, i) => value(types, arr[1]!, e, `${what}[${i}]`, depth + 1));
  }
  const struct = types.get(type);
  if (struct) {
    if (!isRecord(v)) throw new ParseError(`typed data: ${what} is not a ${type} object`);
    const out: Record<string, Eip712Value> = Object.create(null) as Record<string, Eip712Value>;
    for (const f of struct) {
      const fv = own(v, f.name);
      if (fv === undefined) throw new ParseError(`typed data: ${what}.${f.name} is missing`);
      out[f.name] = value(types, f.type, fv, `${what}.${f.name}`, depth + 1);
    }
    return out;
  }
  const int = INT_TYPE.exec(type);
  if (int) {
    const bits = int[2] === "" ? 256 : Number(int[2]);
    if (bits < 8 || bits > 256 || bits % 8) throw new ParseError(`typed data: unknown type ${type}`);
    return integer(v, type, int[1] === "", bits, what);
  }
  const bytes = BYTES_TYPE.exec(type);
  if (bytes) {
    if (typeof v !== "string" || !/^0x([0-9a-fA-F]{2})*$/.test(v)) throw new ParseError(`typed data: ${what} is not 0x hex`);
    if (bytes[1] !== "" && (Number(bytes[1]) < 1 || Number(bytes[1]) > 32 || v.length !== 2 + 2 * Number(bytes[1])))
      throw new ParseError(`typed data: ${what} is not a ${type}`);
    return v.toLowerCase();
  }
  switch (type) {
    case "address":
      if (typeof v !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(v)) throw new ParseError(`typed data: ${what} is not an address`);
      return v.toLowerCase();
    case "bool":
      if (typeof v !== "boolean") throw new ParseError(`typed data: ${what} is not a bool`);
      return v;
    case "string":
      if (typeof v !== "string") throw new ParseError(`typed data: ${what} is not a string`);
      return v;
    default:
      throw new ParseError(`typed data: unknown type ${type}`);
  }
}

/** Parses the typed-data JSON text (as the SDK sends it). */
export function parseEip712(json: string): Eip712Facts {
  if (json.length > MAX_JSON) throw new ParseError(`typed data is longer than ${MAX_JSON} characters`);
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch {
    throw new ParseError("typed data is not JSON");
  }
  if (!isRecord(doc)) throw new ParseError("typed data must be a JSON object");
  const types = readTypes(own(doc, "types"));
  const primary = own(doc, "primaryType");
  if (typeof primary !== "string" || !types.has(primary)) throw new ParseError("typed data: primaryType must name one of its types");
  const domainType = types.get("EIP712Domain");
  if (!domainType) throw new ParseError("typed data: types.EIP712Domain is missing");
  const rawDomain = own(doc, "domain");
  if (!isRecord(rawDomain)) throw new ParseError("typed data: domain must be an object");
  const d = value(types, "EIP712Domain", rawDomain, "domain", 0) as Eip712Map;
  const domain: Eip712DomainFacts = {};
  for (const f of domainType) {
    const v = d[f.name];
    switch (f.name) {
      case "name":
      case "version":
        if (typeof v === "string") domain[f.name] = v;
        break;
      case "chainId":
        if (typeof v === "bigint") domain.chain_id = v;
        break;
      case "verifyingContract":
        if (typeof v === "string") domain.verifying_contract = v;
        break;
      case "salt":
        if (typeof v === "string") domain.salt = v;
        break;
      default:
        throw new ParseError(`typed data: EIP712Domain has no field ${f.name}`);
    }
  }
  const message = value(types, primary, own(doc, "message"), "message", 0) as Eip712Map;
  return { primary_type: primary, domain, message };
}
