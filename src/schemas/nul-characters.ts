// U+0000 in a request string. PostgreSQL text cannot hold it (the insert fails with
// "invalid byte sequence") while SQLite stores it, and no identifier, name, email or
// expression legitimately contains it. One walk over the whole parsed body refuses it
// everywhere — values and object keys, known fields and ones the schemas would drop —
// so both engines answer alike and no field can be forgotten.
import type { FieldViolation } from "../errors.ts";

const MAX_REPORTED = 20;
const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Field paths (as the schema validator names them: `parameters.users[0].userName`) holding U+0000. */
export function nulViolations(value: unknown): FieldViolation[] {
  const out: FieldViolation[] = [];
  walk(value, "", out);
  return out;
}

function walk(value: unknown, at: string, out: FieldViolation[]): void {
  if (out.length >= MAX_REPORTED) return;
  if (typeof value === "string") {
    if (value.includes("\u0000")) out.push({ field: at || "body", description: "must not contain the NUL character (U+0000)" });
    return;
  }
  if (typeof value !== "object" || value === null) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) walk(value[i], `${at}[${i}]`, out);
    return;
  }
  // Own keys only (JSON.parse makes "__proto__" an own key; nothing is read through a prototype).
  for (const key of Object.keys(value)) {
    const path = fieldPath(at, key);
    if (key.includes("\u0000")) {
      out.push({ field: path, description: "field name must not contain the NUL character (U+0000)" });
      if (out.length >= MAX_REPORTED) return;
      continue;
    }
    walk((value as Record<string, unknown>)[key], path, out);
  }
}

function fieldPath(at: string, key: string): string {
  if (!PLAIN_KEY.test(key)) return `${at}[${JSON.stringify(key)}]`;
  return at ? `${at}.${key}` : key;
}
