// Bulk inserts for `sigil seed` on PostgreSQL: one INSERT … SELECT FROM unnest(…) per table
// and batch (each column travels as one array parameter), all in one transaction, with the
// seeded tables' secondary indexes built once at the end.
import pg from "pg";
import type { BulkWriter, BulkWriterOptions } from "../engine.ts";

export async function postgresBulkWriter(opts: BulkWriterOptions): Promise<BulkWriter> {
  const client = new pg.Client({ connectionString: opts.databaseUrl });
  await client.connect();
  // Seeding only: commits do not wait for the WAL flush (a crash loses the last batches, not consistency).
  await client.query("SET synchronous_commit = off");
  await client.query("SET maintenance_work_mem = '256MB'");
  // Foreign-key triggers fire once per row; the rows are generated parent first, so they are
  // skipped when the role may (superuser). Without the privilege the checks run, slower.
  await client.query("SET session_replication_role = replica").catch(() => {});
  // One transaction for the whole seed: the secondary indexes of the seeded tables are dropped
  // and built again at the end (a sorted build instead of millions of random B-tree inserts
  // into indexes larger than shared_buffers). Indexes behind constraints (primary keys,
  // UNIQUE columns) stay. A failure rolls everything back, indexes included.
  await client.query("BEGIN");
  const deferred = await client.query<{ name: string; def: string }>(
    `SELECT i.indexname AS name, i.indexdef AS def FROM pg_indexes i
      WHERE i.schemaname = current_schema() AND i.tablename = ANY($1::text[])
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = (quote_ident(i.schemaname) || '.' || quote_ident(i.indexname))::regclass)`,
    [opts.tables],
  );
  for (const ix of deferred.rows) await client.query(`DROP INDEX "${ix.name}"`);
  let open = true;
  return {
    async write(batch) {
      for (const t of batch) {
        if (t.rows.length === 0) continue;
        const types = t.columns.map((c) => (opts.integerColumns.has(c) ? "int8" : "text"));
        const arrays = t.columns.map((_, c) => t.rows.map((r) => r[c]));
        await client.query(
          `INSERT INTO "${t.table}" (${t.columns.map((c) => `"${c}"`).join(", ")}) SELECT * FROM unnest(${types.map((ty, i) => `$${i + 1}::${ty}[]`).join(", ")})`,
          arrays,
        );
      }
    },
    async finish() {
      for (const ix of deferred.rows) await client.query(ix.def);
      await client.query("COMMIT");
      open = false;
      await client.query("ANALYZE");
    },
    async close() {
      if (open) await client.query("ROLLBACK").catch(() => {});
      await client.end();
    },
  };
}
