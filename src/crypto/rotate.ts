// Re-wrapping every stored data key under the sealing key-encryption key (docs/custody.md §4):
// `sigil master-key rotate`, run while the service serves with both the new key and the
// previous one. Each kind of sealed value (sealed-columns.ts) is read in bounded batches of
// rows still naming another key; each value is written back with a compare-and-set on its old
// text (sealed values are unique: a fresh IV each), so a row changed meanwhile — or re-wrapped by
// another node running the same command — is left as it is and looked at again. Stopping half
// way loses nothing: the next run finds what is left.
import { sql } from "kysely";
import type { Db } from "../store/schema.ts";
import { MasterKey } from "./envelope.ts";
import { SEALED_KINDS, type SealedKind } from "./sealed-columns.ts";

/** Rows read per batch. [our choice: a few hundred small values, one short statement each] */
export const ROTATE_BATCH_ROWS = 200;

export interface RotateReport {
  /** Values re-wrapped by this run. */
  rewrapped: number;
  /** Values still naming a previous key (they did not open, or changed under us every time). */
  remaining: number;
  /** Per kind, what is left. */
  left: Record<string, number>;
  /** The old keys may be destroyed when nothing remains. */
  done: boolean;
}

export async function rotateSealed(
  db: Db,
  master: MasterKey,
  opts: { batchRows?: number; onBatch?: (kind: string, n: number) => void } = {},
): Promise<RotateReport> {
  const batch = opts.batchRows ?? ROTATE_BATCH_ROWS;
  // The sealing key's ids (a token key has one per mechanism) and the previous keys'.
  const sealing = new Set(master.kekIds.slice(0, master.sealingIds.length));
  const old = master.kekIds.filter((id) => !sealing.has(id));
  let rewrapped = 0;
  const left: Record<string, number> = {};
  for (const kind of SEALED_KINDS) {
    // Values that would not open: skipped for the rest of the run (reported as remaining).
    const stuck = new Set<string>();
    for (;;) {
      const rows = await pending(db, kind, old, batch + stuck.size);
      let progress = 0;
      for (const row of rows) {
        const text = String(row[kind.column]);
        let next = text;
        let n = 0;
        for (const v of kind.values(row)) {
          if (!old.includes(MasterKey.kekIdOf(v.sealed)!) || stuck.has(v.sealed)) continue;
          let wrapped: string | undefined;
          try {
            wrapped = await master.rewrap(v.sealed, v.aad);
          } catch (err) {
            if ((err as Error).name === "KeyUnavailableError") throw err;
            stuck.add(v.sealed);
            continue;
          }
          if (wrapped) {
            next = next.split(v.sealed).join(wrapped);
            n++;
          }
        }
        if (next === text) continue;
        const res = await db
          .updateTable(kind.table as never)
          .set({ [kind.column]: next } as never)
          .where(kind.column as never, "=", text as never)
          .executeTakeFirst();
        if (Number(res.numUpdatedRows) > 0) {
          progress++;
          rewrapped += n;
        }
      }
      opts.onBatch?.(kind.name, progress);
      if (rows.length < batch + stuck.size || progress === 0) break;
    }
    const remaining = (await pending(db, kind, old, Number.MAX_SAFE_INTEGER)).reduce(
      (n, row) => n + kind.values(row).filter((v) => old.includes(MasterKey.kekIdOf(v.sealed)!)).length,
      0,
    );
    if (remaining) left[kind.name] = remaining;
  }
  const remaining = Object.values(left).reduce((a, b) => a + b, 0);
  return { rewrapped, remaining, left, done: remaining === 0 };
}

/** Rows of `kind` holding a sealed value that names one of the previous keys (`old`). */
async function pending(db: Db, kind: SealedKind, old: readonly string[], limit: number): Promise<Record<string, unknown>[]> {
  if (old.length === 0) return [];
  let q = db.selectFrom(kind.table as never).selectAll();
  if (kind.where) q = q.where(kind.where.column as never, "=", kind.where.value as never);
  // Key ids are [0-9a-z]: no LIKE wildcard in them.
  q = q.where(
    sql.join(
      old.map((id) => sql`${sql.ref(kind.column)} like ${`%sgl1.${id}.%`}`),
      sql` or `,
    ) as never,
  );
  const rows = (await q.limit(Math.min(limit, 1_000_000)).execute()) as Record<string, unknown>[];
  return rows.filter((row) => kind.values(row).some((v) => old.includes(MasterKey.kekIdOf(v.sealed)!)));
}
