// The embedded engine: one SQLite file (WAL mode) in the data directory, used when no
// DATABASE_URL is given (docs/storage.md §1).
import path from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, sql } from "kysely";
import type { Database } from "../schema.ts";
import { groupCommit, type LockDeadline } from "../transactions.ts";
import { createPrivateFile, ensurePrivateDir, restrictFiles } from "../data-dir.ts";
import { unavailableBy, type BulkRows, type BulkWriter, type OpenOptions, type OpenedStore, type StorageEngine } from "../engine.ts";
import { withStatementCache } from "./statements.ts";
import { startCheckpointer, type Checkpointer } from "./checkpointer.ts";
import { AsyncLockSqliteDialect, isSqliteBusy } from "./driver.ts";
import { SQLITE_DIALECT } from "./dialect.ts";
import { sqliteCredentialWatch } from "./credential-watch.ts";
import type { CredentialWatch } from "../credential-watch.ts";

const FILE_NAME = "sigil.db";

function open(opts: OpenOptions): OpenedStore {
  const t = opts.timeouts;
  // 0700 directory, 0600 files, also when they exist already (docs/tvc-isolation.md §4).
  ensurePrivateDir(opts.dataDir);
  const file = path.join(opts.dataDir, FILE_NAME);
  createPrivateFile(file);
  const raw = openFile(file);
  restrictFiles(`${file}-wal`, `${file}-shm`);
  const lockDeadline: LockDeadline = { until: undefined };
  const db = new Kysely<Database>({ dialect: new AsyncLockSqliteDialect(raw, withStatementCache(raw), t.lockTimeoutMs, lockDeadline) });
  let checkpointer: Checkpointer | undefined;
  let watch: CredentialWatch | undefined;
  return {
    db,
    location: file,
    // Grouped commits: one writer, and a commit costs more than the inserts (store/transactions.ts).
    transact: groupCommit(db, { deadlineMs: t.lockTimeoutMs, isTransient: unavailableBy(isSqliteBusy), lockDeadline }),
    checkpointInBackground(onError) {
      checkpointer ??= startCheckpointer(raw, file, onError);
    },
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    credentialWatch: () => (watch ??= sqliteCredentialWatch(raw)),
    async close() {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

function openFile(file: string): SQLite.Database {
  const raw = new SQLite(file);
  // WAL: readers never block the writer; NORMAL: a commit survives a process crash
  // (what the durability test kills us with) — only an OS crash can lose the last commits.
  raw.pragma("journal_mode = WAL");
  raw.pragma("synchronous = NORMAL");
  raw.pragma("foreign_keys = ON");
  // No waiting inside SQLite: a busy wait there blocks the event loop. Lock waits are done
  // asynchronously by the driver (sqlite/driver.ts), for the server and `sigil init` alike.
  raw.pragma("busy_timeout = 0");
  return raw;
}

/** One prepared insert per table, run in a loop inside one transaction per write. */
async function bulkWriter(opts: { dataDir: string }): Promise<BulkWriter> {
  const db = new SQLite(path.join(opts.dataDir, FILE_NAME));
  db.pragma("journal_mode = WAL");
  // Seeding only: a crash means seeding again. The rows are generated parent first.
  db.pragma("synchronous = OFF");
  db.pragma("foreign_keys = OFF");
  db.pragma("cache_size = -65536");
  db.pragma("busy_timeout = 5000");
  const statements = new Map<string, SQLite.Statement>();
  const statement = (r: BulkRows) => {
    const key = `${r.table}(${r.columns.join(",")})`;
    let s = statements.get(key);
    if (!s) {
      s = db.prepare(
        `INSERT INTO "${r.table}" (${r.columns.map((c) => `"${c}"`).join(", ")}) VALUES (${r.columns.map(() => "?").join(", ")})`,
      );
      statements.set(key, s);
    }
    return s;
  };
  const tx = db.transaction((tables: readonly BulkRows[]) => {
    for (const t of tables) {
      if (t.rows.length === 0) continue;
      const s = statement(t);
      for (const row of t.rows) s.run(row);
    }
  });
  return {
    async write(tables) {
      tx(tables);
    },
    async finish() {
      db.exec("ANALYZE");
    },
    async close() {
      db.pragma("wal_checkpoint(TRUNCATE)");
      db.close();
    },
  };
}

export const sqlite = {
  name: "sqlite",
  schemes: [],
  // The default: no DATABASE_URL at all (the file lives in SIGIL_DATA_DIR).
  matches: (url) => url === undefined || url === "",
  open,
  dialect: SQLITE_DIALECT,
  // Another process holds the write lock (past the driver's asynchronous wait).
  isUnavailable: isSqliteBusy,
  bulkWriter,
} satisfies StorageEngine<"sqlite">;
