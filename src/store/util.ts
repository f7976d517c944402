import { randomUUID } from "node:crypto";

export const newId = (): string => randomUUID();

/** The `{seconds, nanos}` timestamp object of query responses (both strings). */
export function timestampObject(ms: number): { seconds: string; nanos: string } {
  return { seconds: String(Math.floor(ms / 1000)), nanos: String((ms % 1000) * 1_000_000) };
}

/**
 * True when `err` is a unique-constraint violation on `table`, on either engine.
 * Uniqueness is guarded by the database, never by read-then-write, so several API nodes
 * on one PostgreSQL stay correct; callers turn this into a 409.
 */
export function isUniqueViolation(err: unknown, table: string): boolean {
  const e = err as { code?: string; constraint?: string; message?: string; table?: string };
  if (e?.code === "23505") return (e.table ?? e.constraint ?? "").startsWith(table);
  if (typeof e?.code === "string" && e.code.startsWith("SQLITE_CONSTRAINT")) {
    return e.code !== "SQLITE_CONSTRAINT_FOREIGNKEY" && (e.message ?? "").includes(`${table}.`);
  }
  return false;
}

/** Parses a JSON text column written by us. */
export function json<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}
