// Hot queries compiled once per dialect; each call only binds its values. Building and
// compiling a Kysely query costs more than SQLite takes to run a primary-key lookup, and
// these run on every request. Values are located by compiling with sentinel strings.
// The cache is keyed by the dialect adapter, which a database handle and its transactions
// share, so a query compiled on one runs on the others.
import type { Compilable, CompiledQuery, DialectAdapter } from "kysely";
import type { Executor } from "./schema.ts";

type Slot<K extends string> = { name: K } | { constant: unknown };

export function precompiled<K extends string, R>(
  names: readonly K[],
  build: (db: Executor, values: Record<K, string>) => Compilable<R>,
): (db: Executor, values: Record<K, unknown>) => Promise<R[]> {
  const cache = new WeakMap<DialectAdapter, { compiled: CompiledQuery<R>; slots: Slot<K>[] }>();
  return async (db, values) => {
    const adapter = db.getExecutor().adapter;
    let entry = cache.get(adapter);
    if (!entry) {
      const sentinels = Object.fromEntries(names.map((n) => [n, `\u0000sigil-param:${n}\u0000`])) as Record<K, string>;
      const compiled = build(db, sentinels).compile();
      const slots = compiled.parameters.map((p): Slot<K> => {
        const name = names.find((n) => sentinels[n] === p);
        return name ? { name } : { constant: p };
      });
      entry = { compiled, slots };
      cache.set(adapter, entry);
    }
    const parameters = entry.slots.map((s) => ("name" in s ? values[s.name] : s.constant));
    const result = await db.executeQuery<R>({ ...entry.compiled, parameters });
    return result.rows;
  };
}
