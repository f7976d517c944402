// Kysely's SQLite driver, with lock waits moved off the event loop.
//
// better-sqlite3 is synchronous: with `busy_timeout` set, a statement that finds the write
// lock taken by another process (`sigil init`, a backup, an operator's shell) spins inside
// SQLite, and the whole server — /healthz included — freezes for as long as it waits. So the
// server's connection runs with busy_timeout = 0: a statement that cannot get the lock fails
// at once with SQLITE_BUSY (having done nothing), and this driver retries it after an
// asynchronous, growing delay, until a deadline; then it fails with StoreUnavailableError
// (503). Outside a transaction the connection is handed back while waiting, so reads (which
// WAL never blocks) go on being served meanwhile.
import type BetterSqlite3 from "better-sqlite3";
import { CompiledQuery, SqliteDialect, type DatabaseConnection, type Driver, type QueryResult, type SqliteDatabase } from "kysely";
import { StoreUnavailableError, type LockDeadline } from "../transactions.ts";

/** SQLite's "someone else holds the lock" codes: the statement did nothing and may be retried. */
const RETRYABLE = new Set(["SQLITE_BUSY", "SQLITE_BUSY_RECOVERY", "SQLITE_BUSY_TIMEOUT"]);
const FIRST_DELAY_MS = 2;
const MAX_DELAY_MS = 100;

export function isSqliteBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && RETRYABLE.has(code);
}

export class AsyncLockSqliteDialect extends SqliteDialect {
  readonly #raw: BetterSqlite3.Database;
  readonly #db: SqliteDatabase;
  readonly #lockTimeoutMs: number;
  readonly #deadline: LockDeadline;

  /**
   * `raw` is the connection itself (for its transaction state); `db` what statements are
   * prepared on; `deadline` a tighter deadline its holder (groupCommit) may set for the lock
   * waits of the transaction it runs.
   */
  constructor(raw: BetterSqlite3.Database, db: SqliteDatabase, lockTimeoutMs: number, deadline: LockDeadline = { until: undefined }) {
    super({ database: db });
    this.#raw = raw;
    this.#db = db;
    this.#lockTimeoutMs = lockTimeoutMs;
    this.#deadline = deadline;
  }

  override createDriver(): Driver {
    return new AsyncLockDriver(this.#raw, this.#db, this.#lockTimeoutMs, this.#deadline);
  }
}

class Mutex {
  #held: Promise<void> | undefined;
  #release: (() => void) | undefined;
  async lock(): Promise<void> {
    while (this.#held) await this.#held;
    this.#held = new Promise((resolve) => (this.#release = resolve));
  }
  unlock(): void {
    const release = this.#release;
    this.#held = undefined;
    this.#release = undefined;
    release?.();
  }
}

class AsyncLockDriver implements Driver {
  readonly #mutex = new Mutex();
  readonly #connection: AsyncLockConnection;
  readonly #db: SqliteDatabase;

  constructor(raw: BetterSqlite3.Database, db: SqliteDatabase, lockTimeoutMs: number, deadline: LockDeadline) {
    this.#db = db;
    this.#connection = new AsyncLockConnection(raw, db, this.#mutex, lockTimeoutMs, deadline);
  }
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    // One connection: callers take turns (a transaction holds it from BEGIN to COMMIT).
    await this.#mutex.lock();
    return this.#connection;
  }
  async beginTransaction(c: DatabaseConnection): Promise<void> {
    await c.executeQuery(CompiledQuery.raw("begin"));
  }
  async commitTransaction(c: DatabaseConnection): Promise<void> {
    await c.executeQuery(CompiledQuery.raw("commit"));
  }
  async rollbackTransaction(c: DatabaseConnection): Promise<void> {
    await c.executeQuery(CompiledQuery.raw("rollback"));
  }
  async savepoint(c: DatabaseConnection, name: string): Promise<void> {
    await c.executeQuery(CompiledQuery.raw(`savepoint ${quoteName(name)}`));
  }
  async rollbackToSavepoint(c: DatabaseConnection, name: string): Promise<void> {
    await c.executeQuery(CompiledQuery.raw(`rollback to ${quoteName(name)}`));
  }
  async releaseSavepoint(c: DatabaseConnection, name: string): Promise<void> {
    await c.executeQuery(CompiledQuery.raw(`release ${quoteName(name)}`));
  }
  async releaseConnection(): Promise<void> {
    this.#mutex.unlock();
  }
  async destroy(): Promise<void> {
    this.#db.close();
  }
}

function quoteName(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

class AsyncLockConnection implements DatabaseConnection {
  constructor(
    private readonly raw: BetterSqlite3.Database,
    private readonly db: SqliteDatabase,
    private readonly mutex: Mutex,
    private readonly lockTimeoutMs: number,
    private readonly deadline: LockDeadline,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const started = Date.now();
    const deadline = Math.min(started + this.lockTimeoutMs, this.deadline.until ?? Infinity);
    for (let attempt = 0; ; attempt++) {
      try {
        return this.run<R>(query);
      } catch (err) {
        if (!isSqliteBusy(err)) throw err;
        const now = Date.now();
        if (now >= deadline) {
          throw new StoreUnavailableError(`the database is locked by another process (waited ${now - started} ms)`, { cause: err });
        }
        const delay = Math.min(FIRST_DELAY_MS * 2 ** attempt, MAX_DELAY_MS, deadline - now);
        // Outside a transaction nothing of ours is pending on the connection: let other
        // callers (reads) use it while we wait. Inside one, it must stay ours.
        // The holder's deadline is not lent out with the connection.
        const handBack = !this.raw.inTransaction;
        const mine = this.deadline.until;
        if (handBack) {
          this.deadline.until = undefined;
          this.mutex.unlock();
        }
        try {
          await new Promise((resolve) => setTimeout(resolve, delay));
        } finally {
          if (handBack) {
            await this.mutex.lock();
            this.deadline.until = mine;
          }
        }
      }
    }
  }

  private run<R>(query: CompiledQuery): QueryResult<R> {
    const stmt = this.db.prepare(query.sql);
    const parameters = query.parameters as unknown[];
    if (stmt.reader) return { rows: stmt.all(parameters) as R[] };
    const { changes, lastInsertRowid } = stmt.run(parameters);
    return {
      numAffectedRows: changes !== undefined && changes !== null ? BigInt(changes) : undefined,
      insertId: lastInsertRowid !== undefined && lastInsertRowid !== null ? BigInt(lastInsertRowid) : undefined,
      rows: [],
    };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("streaming is not supported on the SQLite store");
  }
}
