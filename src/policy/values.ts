// Runtime values and the checks that guard dynamic (`activity.params`) data.
// bool → boolean, int/uint → bigint, string → string, list → readonly array,
// timestamp → Timestamp (epoch nanoseconds).

import { PolicyRuntimeError } from "./errors.ts";

export class Timestamp {
  constructor(readonly ns: bigint) {}
}

/** The runtime type name of a dynamic value, as error messages show it. */
export function dynKind(v: unknown): string {
  switch (typeof v) {
    case "string":
      return "string";
    case "bigint":
      return "int";
    case "boolean":
      return "bool";
    default:
      if (Array.isArray(v)) return "list";
      return isMapValue(v) ? "map" : `unsupported value (${v === null ? "null" : typeof v})`;
  }
}

export function typeMismatch(what: string, v: unknown, expected: string): PolicyRuntimeError {
  return new PolicyRuntimeError("TypeMismatch", `type mismatch: '${what}' is ${dynKind(v)}, expected ${expected}`);
}

/** A struct or map of the signing facts (facts.ts SigningValue): read by own property only. */
export function isMapValue(v: unknown): v is Readonly<Record<string, unknown>> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Timestamp);
}

const hasOwn = Object.prototype.hasOwnProperty;

/** `m.name` / `m['name']` on a dynamic value: a map's own field, else MissingField or a type mismatch. */
export function readField(v: unknown, name: string, what: string): unknown {
  if (!isMapValue(v)) throw typeMismatch(what, v, `a value with a field '${name}'`);
  if (!hasOwn.call(v, name) || v[name] === undefined) throw new PolicyRuntimeError("MissingField", `'${what}' has no field '${name}'`);
  return v[name];
}

/** `==` between two dynamic values: same primitive type required, lists are not comparable. */
export function dynEquals(a: unknown, b: unknown, what: string): boolean {
  const ka = dynKind(a);
  const kb = dynKind(b);
  if (ka === "list" || kb === "list" || ka === "map" || kb === "map") {
    throw new PolicyRuntimeError(
      "TypeMismatch",
      `type mismatch: '==' is not defined for ${ka === "list" || kb === "list" ? "lists" : "maps"} (in '${what}')`,
    );
  }
  if (ka !== kb || ka.startsWith("unsupported")) {
    throw new PolicyRuntimeError("TypeMismatch", `type mismatch: cannot compare ${ka} with ${kb} (in '${what}')`);
  }
  return a === b;
}

// String positions are Unicode code points. Only surrogate pairs make code
// points and UTF-16 units differ, so strings without them take the fast path.
const SURROGATE = /[\uD800-\uDFFF]/;
export function hasSurrogates(s: string): boolean {
  // A native scan: a charCodeAt loop is two orders of magnitude slower on long strings.
  return SURROGATE.test(s);
}

function outOfRange(what: string, detail: string, length: number): PolicyRuntimeError {
  return new PolicyRuntimeError("IndexOutOfRange", `${detail} is out of range for '${what}' (length ${length})`);
}

/** Code points in `s` (a lone surrogate counts as one, as Array.from counts it). */
function codePointCount(s: string): number {
  let n = 0;
  for (let off = 0; off < s.length; n++) off += s.codePointAt(off)! > 0xffff ? 2 : 1;
  return n;
}

/** The UTF-16 offset where code point `n` starts (s.length for n = the count). */
function offsetOf(s: string, n: number): number {
  let off = 0;
  for (let k = 0; k < n; k++) off += s.codePointAt(off)! > 0xffff ? 2 : 1;
  return off;
}

// Walked, not spread into an array: a long string indexed in a lambda must not allocate one
// string per character at every iteration (the evaluation budget charges per 32 characters).
export function indexString(s: string, i: bigint, what: string): string {
  const surrogates = hasSurrogates(s);
  const length = surrogates ? codePointCount(s) : s.length;
  if (i < 0n || i >= length) throw outOfRange(what, `index ${i}`, length);
  if (!surrogates) return s[Number(i)]!;
  const off = offsetOf(s, Number(i));
  return s.slice(off, off + (s.codePointAt(off)! > 0xffff ? 2 : 1));
}

export function sliceString(s: string, a: bigint, b: bigint, what: string): string {
  const surrogates = hasSurrogates(s);
  const length = surrogates ? codePointCount(s) : s.length;
  if (a < 0n || a > b || b > length) throw outOfRange(what, `slice [${a}..${b}]`, length);
  if (!surrogates) return s.slice(Number(a), Number(b));
  const start = offsetOf(s, Number(a));
  return s.slice(start, start + offsetOf(s.slice(start), Number(b - a)));
}

export function indexList<T>(list: readonly T[], i: bigint, what: string): T {
  if (i < 0n || i >= list.length) throw outOfRange(what, `index ${i}`, list.length);
  return list[Number(i)]!;
}

export function sliceList<T>(list: readonly T[], a: bigint, b: bigint, what: string): readonly T[] {
  if (a < 0n || a > b || b > list.length) throw outOfRange(what, `slice [${a}..${b}]`, list.length);
  return list.slice(Number(a), Number(b));
}

const SMALL_INTS: readonly bigint[] = Array.from({ length: 257 }, (_, i) => BigInt(i));
/** A list length as an int, without allocating for the usual small counts. */
export function countOf(n: number): bigint {
  return n < SMALL_INTS.length ? SMALL_INTS[n]! : BigInt(n);
}
