// Compiles a TypeBox schema once and turns its failures into the SDK's error shape:
// INVALID_ARGUMENT with a google.rpc.BadRequest listing every offending field.
import { KindGuard, type TSchema, type Static } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import { ValueErrorType } from "@sinclair/typebox/errors";
import { Value } from "@sinclair/typebox/value";
import { invalid, type FieldViolation } from "../errors.ts";

export interface Validator<T extends TSchema> {
  schema: T;
  /** Returns a copy holding only the declared fields, or throws REQUEST_INVALID. */
  parse(value: unknown, at: string): Static<T>;
  /** Whether a value (e.g. a stored intent, validated when it was submitted) matches the schema. */
  is(value: unknown): value is Static<T>;
}

const MAX_VIOLATIONS = 20;

export function compile<T extends TSchema>(schema: T): Validator<T> {
  const check: TypeCheck<T> = TypeCompiler.Compile(schema);
  // What parse() returned already passed the check: `is` on it (each definition hook re-narrows
  // its parameters) costs a set lookup instead of a second walk on the hot path.
  const parsed = new WeakSet<object>();
  return {
    schema,
    is: (value: unknown): value is Static<T> => (typeof value === "object" && value !== null && parsed.has(value)) || check.Check(value),
    parse(value: unknown, at: string): Static<T> {
      if (check.Check(value)) {
        const out = cleanCopy(schema, value) as Static<T>;
        if (typeof out === "object" && out !== null) parsed.add(out);
        return out;
      }
      const violations: FieldViolation[] = [];
      const seen = new Set<string>();
      for (const e of check.Errors(value)) {
        const field = toField(at, e.path);
        if (seen.has(field)) continue;
        seen.add(field);
        const custom = (e.schema as { errorMessage?: string }).errorMessage;
        const description =
          e.type === ValueErrorType.ObjectRequiredProperty ? "must be set" : (custom ?? e.message.replace(/^Expected/, "expected"));
        violations.push({ field, description });
        if (violations.length >= MAX_VIOLATIONS) break;
      }
      const first = violations[0] ?? { field: at, description: "is invalid" };
      throw invalid(`bad request body: ${first.field} ${first.description}`, violations);
    },
  };
}

/** "/users/0/userEmail" under "parameters" → "parameters.users[0].userEmail" */
function toField(at: string, pointer: string): string {
  let out = at;
  for (const raw of pointer.split("/").slice(1)) {
    const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    out += /^\d+$/.test(seg) ? `[${seg}]` : out ? `.${seg}` : seg;
  }
  return out || "body";
}

/**
 * A copy of `value` holding only what the schema declares: Value.Clean over a clone, except
 * that (1) an object keeps only the properties its schema declares as its OWN (TypeBox tests
 * `key in schema.properties`, so "constructor", "toString" or "__proto__" in a request were
 * kept as if declared and reached the stored intent), and (2) a member the schema drops is
 * never copied — cloning the whole request first made a dropped member of a megabyte cost
 * seconds (docs/network.md §6.2). The kinds request schemas use are handled here; any other
 * is cloned and left to TypeBox. `value` has passed the schema's check.
 */
function cleanCopy(schema: TSchema, value: unknown): unknown {
  if (KindGuard.IsObject(schema) && schema.additionalProperties === undefined) {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return structuredClone(value);
    const obj = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(obj)) {
      if (Object.hasOwn(schema.properties, key)) out[key] = cleanCopy(schema.properties[key]!, obj[key]);
    }
    return out;
  }
  if (KindGuard.IsArray(schema)) return Array.isArray(value) ? value.map((item) => cleanCopy(schema.items, item)) : structuredClone(value);
  if (KindGuard.IsUnion(schema)) {
    // As TypeBox: cleaned by the first alternative the value satisfies.
    const match = schema.anyOf.find((inner) => Value.Check(inner, value));
    return match ? cleanCopy(match, value) : structuredClone(value);
  }
  return Value.Clean(schema, structuredClone(value));
}
