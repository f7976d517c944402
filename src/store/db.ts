// Opens the store: the embedded SQLite file by default, PostgreSQL when a URL is given.
// Both run the same migrations and the same Kysely queries.
import fs from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";
import pg from "pg";
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type Migration, type MigrationProvider } from "kysely";
import type { Database, Db } from "./schema.ts";
import * as m001 from "./migrations/001_foundation.ts";
import * as m002 from "./migrations/002_policies.ts";
import * as m003 from "./migrations/003_webhooks.ts";
import * as m004 from "./migrations/004_app_proofs.ts";
import { withStatementCache } from "./sqlite-statements.ts";
import { groupCommit, transactionPerCall, type Transact } from "./transactions.ts";
import { startCheckpointer, type Checkpointer } from "./sqlite-checkpointer.ts";

export type Engine = "sqlite" | "postgres";

export interface Store {
  db: Db;
  engine: Engine;
  /** Where the data lives, for logs (never includes credentials). */
  location: string;
  /** Runs one activity's writes all-or-nothing (grouped commits on SQLite). */
  transact: Transact;
  /** Long-running servers: move SQLite's WAL checkpoints off the event loop (no-op on PostgreSQL). */
  checkpointInBackground(onError: (message: string) => void): void;
  close(): Promise<void>;
}

// int8 (bigint) columns hold millisecond timestamps; they fit a JS number exactly.
pg.types.setTypeParser(20, (v: string) => Number(v));

const MIGRATIONS: Record<string, Migration> = {
  "001_foundation": m001,
  "002_policies": m002,
  "003_webhooks": m003,
  "004_app_proofs": m004,
};

class StaticProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return MIGRATIONS;
  }
}

export function openStore(opts: { databaseUrl?: string; dataDir: string }): Store {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 10 });
    // An idle client losing its connection must not crash the process.
    pool.on("error", () => {});
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const url = new URL(opts.databaseUrl);
    return {
      db,
      engine: "postgres",
      location: `postgres://${url.host}${url.pathname}`,
      transact: transactionPerCall(db),
      checkpointInBackground: () => {},
      close: () => db.destroy(),
    };
  }
  fs.mkdirSync(opts.dataDir, { recursive: true });
  const file = path.join(opts.dataDir, "sigil.db");
  const sqlite = openSqlite(file);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  let checkpointer: Checkpointer | undefined;
  return {
    db,
    engine: "sqlite",
    location: file,
    transact: groupCommit(db),
    checkpointInBackground(onError) {
      checkpointer ??= startCheckpointer(sqlite, file, onError);
    },
    async close() {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

function openSqlite(file: string): SQLite.Database {
  const sqlite = new SQLite(file);
  // WAL: readers never block the writer; NORMAL: a commit survives a process crash
  // (what the durability test kills us with) — only an OS crash can lose the last commits.
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("foreign_keys = ON");
  // `sigil init` may write while the server runs: wait for the lock instead of failing.
  sqlite.pragma("busy_timeout = 5000");
  return sqlite;
}

export async function migrate(db: Db): Promise<void> {
  const migrator = new Migrator({ db, provider: new StaticProvider() });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error");
    throw new Error(`database migration ${failed?.migrationName ?? ""} failed: ${(error as Error).message ?? error}`);
  }
}
