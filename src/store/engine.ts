// What a storage engine provides (docs/storage.md §2). Each engine is one module under
// src/store/<name>/ exporting one object of this shape, and one entry of the list in
// src/store/engines.ts; nothing outside its folder knows how it opens, locks or fails.
import type { Db } from "./schema.ts";
import type { StoreDialect } from "./dialect.ts";
import type { CredentialWatch } from "./credential-watch.ts";
import { StoreUnavailableError, type Transact } from "./transactions.ts";

/** How long to wait for the database before answering 503 (docs/configuration.md §1). */
export interface StoreTimeouts {
  /** PostgreSQL: establishing a connection, and waiting for a free one in the pool; readiness probe. */
  connectTimeoutMs: number;
  /** PostgreSQL statement_timeout (server side); the client gives up a little later. */
  statementTimeoutMs: number;
  /** PostgreSQL idle_in_transaction_session_timeout: a transaction left open is ended by the server. */
  idleInTransactionTimeoutMs: number;
  /** SQLite: how long a write waits (asynchronously) for a lock held by another process. */
  lockTimeoutMs: number;
}

export const DEFAULT_STORE_TIMEOUTS: StoreTimeouts = {
  connectTimeoutMs: 5_000,
  statementTimeoutMs: 30_000,
  idleInTransactionTimeoutMs: 60_000,
  lockTimeoutMs: 5_000,
};

export interface OpenOptions {
  /** The connection URL (undefined: the engine that takes none, SQLite). */
  databaseUrl: string | undefined;
  /** The private data directory (the SQLite file lives there). */
  dataDir: string;
  /** Connections per process, for engines with a pool. */
  poolSize?: number;
  timeouts: StoreTimeouts;
}

/** What an engine's open() returns; openStore (db.ts) adds the engine's name. */
export interface OpenedStore {
  db: Db;
  /** Where the data lives, for logs (never includes credentials). */
  location: string;
  /** Runs one activity's writes all-or-nothing. */
  transact: Transact;
  /** Long-running servers: background maintenance (SQLite's WAL checkpoints); may do nothing. */
  checkpointInBackground(onError: (message: string) => void): void;
  /** Readiness: resolves when the database answers, rejects within the connect timeout otherwise. */
  ping(): Promise<void>;
  /**
   * The store's credential epoch (docs/storage.md §3.1), one per store: what a remembered
   * credential look-up relies on. PostgreSQL opens its listening connection at the first use.
   */
  credentialWatch(): CredentialWatch;
  /** Ends the connections and drops what belongs to them (statement caches). */
  close(): Promise<void>;
}

/** Rows for one table of a bulk write: `rows[i][c]` is the value of `columns[c]`. */
export interface BulkRows {
  table: string;
  columns: readonly string[];
  rows: (string | number | null)[][];
}

/**
 * Fast bulk inserts for `sigil seed` (seeding only: durability and foreign-key checks are
 * relaxed while it runs; rows must come parent first).
 */
export interface BulkWriter {
  /** Writes the tables in the order given. */
  write(tables: readonly BulkRows[]): Promise<void>;
  /** Builds what was deferred, commits, and refreshes the planner's statistics. */
  finish(): Promise<void>;
  close(): Promise<void>;
}

export interface BulkWriterOptions {
  databaseUrl: string | undefined;
  dataDir: string;
  /** The tables that will be written (an engine may defer their secondary indexes). */
  tables: readonly string[];
  /** Integer columns (the rest are text): a column of NULLs still needs its type. */
  integerColumns: ReadonlySet<string>;
}

export interface StorageEngine<Name extends string = string> {
  name: Name;
  /** The URL schemes it serves, for the error naming them ("postgres:"); none: no URL at all. */
  schemes: readonly string[];
  /** Whether this engine serves `url` (undefined: no DATABASE_URL). */
  matches(url: string | undefined): boolean;
  open(opts: OpenOptions): OpenedStore;
  /** The SQL differences (row locks, aggregation, notify); dialectOf finds it from a handle. */
  dialect: StoreDialect;
  /** One error (not its causes: isStoreUnavailable walks those) says the store is away. */
  isUnavailable(err: unknown): boolean;
  bulkWriter(opts: BulkWriterOptions): Promise<BulkWriter>;
}

/**
 * Whether `err`, or an error it wraps, says the store cannot serve right now (503) rather
 * than a bug in a query (500). `own` judges one error; StoreUnavailableError (our own
 * timeouts) always counts.
 */
export function unavailableBy(own: (err: unknown) => boolean): (err: unknown) => boolean {
  const judge = (err: unknown): boolean => {
    let e: unknown = err;
    for (let depth = 0; e && depth < 5; depth++, e = (e as { cause?: unknown }).cause) {
      if (e instanceof StoreUnavailableError) return true;
      if (e instanceof AggregateError && e.errors.some((x) => judge(x))) return true;
      if (own(e)) return true;
    }
    return false;
  };
  return judge;
}
