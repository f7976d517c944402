// Characters no stored text can hold, refused in every request string (docs/network.md §6.3):
// - U+0000: PostgreSQL text cannot hold it (the insert fails with "invalid byte sequence"),
//   while SQLite stores it;
// - an unpaired surrogate (a `\ud800` escape with no partner): it has no UTF-8 form, so
//   PostgreSQL's jsonb refuses the escape when an activity's intent is stored and the
//   UTF-8 encoder would turn it into U+FFFD elsewhere — a value not the one that was signed.
// No identifier, name, email or expression legitimately contains either. One walk over the
// whole parsed body refuses them everywhere — values and object keys, known fields and ones
// the schemas would drop — so both engines answer alike and no field can be forgotten.
import type { FieldViolation } from "../errors.ts";

const MAX_REPORTED = 20;
const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
// One pass over each string (every request string goes through it): U+0000, or, in code units
// rather than code points (no `u` flag), a high surrogate not followed by a low one or a low
// one not preceded by a high one.
// eslint-disable-next-line no-control-regex -- NUL is one of the characters it looks for
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function problem(s: string): string | undefined {
  if (!UNSTORABLE.test(s)) return undefined;
  return s.includes("\u0000") ? "the NUL character (U+0000)" : "an unpaired surrogate (U+D800–U+DFFF without its partner)";
}

/** Field paths (as the schema validator names them: `parameters.users[0].userName`) holding a character no store can keep. */
export function unstorableCharacters(value: unknown): FieldViolation[] {
  const out: FieldViolation[] = [];
  walk(value, "", out);
  return out;
}

function walk(value: unknown, at: string, out: FieldViolation[]): void {
  if (out.length >= MAX_REPORTED) return;
  if (typeof value === "string") {
    const p = problem(value);
    if (p) out.push({ field: at || "body", description: `must not contain ${p}` });
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
    const p = problem(key);
    if (p) {
      out.push({ field: path, description: `field name must not contain ${p}` });
      if (out.length >= MAX_REPORTED) return;
      continue;
    }
    walk((value as Record<string, unknown>)[key], path, out);
  }
}

function fieldPath(at: string, key: string): string {
  // JSON.stringify writes an unpaired surrogate as an escape, so the path stays printable.
  if (!PLAIN_KEY.test(key)) return `${at}[${JSON.stringify(key)}]`;
  return at ? `${at}.${key}` : key;
}
