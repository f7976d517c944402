import { randomUUID } from "node:crypto";

export const newId = (): string => randomUUID();

let lastMs = 0;
let counter = 0;

/**
 * A UUIDv7 (RFC 9562): 48-bit millisecond time, then a 12-bit counter that makes ids of
 * one process strictly increasing within a millisecond, then random bits. Lists ordered
 * by (created_at, id) then keep creation order — policies of one create_policies call,
 * the votes and evaluation records of one activity.
 */
export function newOrderedId(now = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    counter = 0;
  } else if (++counter > 0xfff) {
    lastMs++; // more than 4,096 ids in one millisecond: borrow the next one
    counter = 0;
  }
  // randomUUID draws from a pooled buffer; its last 16 hex digits already carry the
  // RFC 9562 variant and 62 random bits.
  const tail = randomUUID().replace(/-/g, "").slice(16);
  const h = lastMs.toString(16).padStart(12, "0") + (0x7000 | counter).toString(16) + tail;
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

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
/**
 * `row` when it belongs to `organizationId`. Rows named by id and organization are looked up
 * by id alone and checked here: on PostgreSQL a prepared `id = $1 and organization_id = $2`
 * runs a generic plan after five executions, and where organizations are nearly unique per
 * row (a million sub-organizations with one user each) that plan may read the organization's
 * index instead of the primary key — every row of a large organization for one look-up
 * (measured: 10,000 rows, 0.03 → 0.9 ms, on the seeded database of `npm run bench:data`).
 */
export function ownedBy<T extends { organization_id: string }>(row: T | undefined, organizationId: string): T | undefined {
  return row !== undefined && row.organization_id === organizationId ? row : undefined;
}

export function json<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}
