// better-sqlite3 handed to Kysely with its prepared statements reused. Kysely prepares
// every query afresh; preparing is ~20% of an activity's CPU time on SQLite. Statements
// are keyed by SQL text (parameters stay bound per call), and the cache is bounded because
// `IN (?, ?, …)` lists produce a text per list length.
import type BetterSqlite3 from "better-sqlite3";
import type { SqliteDatabase, SqliteStatement } from "kysely";
import { Lru } from "../../cache/lru.ts";

const MAX_STATEMENTS = 500;

export function withStatementCache(db: BetterSqlite3.Database): SqliteDatabase {
  const cache = new Lru<BetterSqlite3.Statement>(MAX_STATEMENTS);
  return {
    close: () => {
      cache.clear();
      db.close();
    },
    prepare(text: string): SqliteStatement {
      // Every transaction here writes. A deferred BEGIN takes the write lock only at its
      // first write, and a read-then-write transaction whose snapshot went stale meanwhile
      // (e.g. the checkpointer's RESTART) fails at once with SQLITE_BUSY instead of waiting
      // out busy_timeout. BEGIN IMMEDIATE takes the lock up front, waiting if need be.
      const sql = /^begin$/i.test(text.trim()) ? "begin immediate" : text;
      // get refreshes its place: the least recently used statement is the one evicted.
      let stmt = cache.get(sql);
      if (!stmt) cache.set(sql, (stmt = db.prepare(sql)));
      return stmt as unknown as SqliteStatement;
    },
  };
}
