// Opens the store: the embedded SQLite file by default, PostgreSQL when a URL is given.
// Both run the same migrations and the same Kysely queries.
import fs from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";
import pg from "pg";
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type Migration, type MigrationProvider } from "kysely";
import type { Database, Db } from "./schema.ts";
import * as m001 from "./migrations/001_foundation.ts";
import { withStatementCache } from "./sqlite-statements.ts";

export type Engine = "sqlite" | "postgres";

export interface Store {
  db: Db;
  engine: Engine;
  /** Where the data lives, for logs (never includes credentials). */
  location: string;
  close(): Promise<void>;
}

// int8 (bigint) columns hold millisecond timestamps; they fit a JS number exactly.
pg.types.setTypeParser(20, (v: string) => Number(v));

const MIGRATIONS: Record<string, Migration> = {
  "001_foundation": m001,
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
      close: () => db.destroy(),
    };
  }
  fs.mkdirSync(opts.dataDir, { recursive: true });
  const file = path.join(opts.dataDir, "sigil.db");
  const sqlite = new SQLite(file);
  // WAL: readers never block the writer; NORMAL: a commit survives a process crash
  // (what the durability test kills us with) — only an OS crash can lose the last commits.
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("foreign_keys = ON");
  // `sigil init` may write while the server runs: wait for the lock instead of failing.
  sqlite.pragma("busy_timeout = 5000");
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  return { db, engine: "sqlite", location: file, close: () => db.destroy() };
}

export async function migrate(db: Db): Promise<void> {
  const migrator = new Migrator({ db, provider: new StaticProvider() });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error");
    throw new Error(`database migration ${failed?.migrationName ?? ""} failed: ${(error as Error).message ?? error}`);
  }
}
