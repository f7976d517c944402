// Opens the store: the embedded SQLite file by default, PostgreSQL when a URL is given.
// Both run the same migrations and the same Kysely queries.
import fs from "node:fs";
import os from "node:os";
import { createHash } from "node:crypto";
import path from "node:path";
import SQLite from "better-sqlite3";
import pg from "pg";
import { Kysely, Migrator, PostgresDialect, sql, type Migration, type MigrationProvider, type PostgresPool, type PostgresPoolClient } from "kysely";
import type { Database, Db } from "./schema.ts";
import * as m001 from "./migrations/001_foundation.ts";
import * as m002 from "./migrations/002_policies.ts";
import * as m003 from "./migrations/003_webhooks.ts";
import * as m004 from "./migrations/004_app_proofs.ts";
import * as m005 from "./migrations/005_webhook_retries.ts";
import * as m006 from "./migrations/006_logins.ts";
import * as m007 from "./migrations/007_wallets.ts";
import * as m008 from "./migrations/008_ip_allowlists.ts";
import * as m009 from "./migrations/009_oauth.ts";
import * as m010 from "./migrations/010_tvc.ts";
import * as m011 from "./migrations/011_votes_index.ts";
import * as m012 from "./migrations/012_contact_verification.ts";
import * as m013 from "./migrations/013_otp_limits.ts";
import * as m014 from "./migrations/014_oauth_identity_audience.ts";
import * as m015 from "./migrations/015_session_allowlist.ts";
import * as m016 from "./migrations/016_auth_proxy.ts";
import * as m017 from "./migrations/017_private_keys.ts";
import { withStatementCache } from "./sqlite-statements.ts";
import { groupCommit, StoreUnavailableError, transactionPerCall, type LockDeadline, type Transact } from "./transactions.ts";
import { startCheckpointer, type Checkpointer } from "./sqlite-checkpointer.ts";
import { AsyncLockSqliteDialect, isSqliteBusy } from "./sqlite-driver.ts";
import { DIALECTS, type Engine, type StoreDialect } from "./dialect.ts";
import { createPrivateFile, ensurePrivateDir, restrictFiles } from "./data-dir.ts";

export { StoreUnavailableError } from "./transactions.ts";

export type { Engine, StoreDialect };

export interface Store {
  db: Db;
  engine: Engine;
  /** What differs between the engines (row locks, aggregation, notify): ask it, never test `engine`. */
  dialect: StoreDialect;
  /** Where the data lives, for logs (never includes credentials). */
  location: string;
  /** Runs one activity's writes all-or-nothing (grouped commits on SQLite). */
  transact: Transact;
  /** Long-running servers: move SQLite's WAL checkpoints off the event loop (no-op on PostgreSQL). */
  checkpointInBackground(onError: (message: string) => void): void;
  /** Readiness: resolves when the database answers, rejects within the connect timeout otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** How long to wait for the database before answering 503 (docs/configuration.md §1). */
export interface StoreTimeouts {
  /** PostgreSQL: establishing a connection, and waiting for a free one in the pool; readiness probe. */
  connectTimeoutMs: number;
  /** PostgreSQL statement_timeout (server side); the client gives up QUERY_SLACK_MS later. */
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

// statement_timeout ends a statement the server is running; this client-side deadline is
// for a server (or network) that does not answer at all. Later than statement_timeout, so
// that an answering server reports its own timeout first.
const QUERY_SLACK_MS = 1_000;

// int8 (bigint) columns hold millisecond timestamps; they fit a JS number exactly.
pg.types.setTypeParser(20, (v: string) => Number(v));

const MIGRATIONS: Record<string, Migration> = {
  "001_foundation": m001,
  "002_policies": m002,
  "003_webhooks": m003,
  "004_app_proofs": m004,
  "005_webhook_retries": m005,
  "006_logins": m006,
  "007_wallets": m007,
  "008_ip_allowlists": m008,
  "009_oauth": m009,
  "010_tvc": m010,
  "011_votes_index": m011,
  "012_contact_verification": m012,
  "013_otp_limits": m013,
  "014_oauth_identity_audience": m014,
  "015_session_allowlist": m015,
  "016_auth_proxy": m016,
  "017_private_keys": m017,
};

class StaticProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return MIGRATIONS;
  }
}

/**
 * PostgreSQL connections per process when SIGIL_DB_POOL_SIZE is not set. Node runs the
 * requests on one thread; a connection is busy for a round trip at a time, so a few per core
 * keep it fed while requests wait on the network and on commits (the number of connections
 * the database serves at once is what costs it: N nodes × this ≤ max_connections).
 */
export function defaultPoolSize(cores = os.availableParallelism()): number {
  return Math.min(20, Math.max(8, 4 * cores));
}

export function openStore(opts: { databaseUrl?: string; dataDir: string; poolSize?: number; timeouts?: Partial<StoreTimeouts> }): Store {
  const t: StoreTimeouts = { ...DEFAULT_STORE_TIMEOUTS, ...opts.timeouts };
  if (opts.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: opts.poolSize ?? defaultPoolSize(),
      connectionTimeoutMillis: t.connectTimeoutMs,
      statement_timeout: t.statementTimeoutMs,
      idle_in_transaction_session_timeout: t.idleInTransactionTimeoutMs,
      // A peer that vanished without a FIN (cable, VM pause) is noticed by the kernel.
      keepAlive: true,
    });
    // pg-pool listens for connection errors only while a client is idle in the pool. A
    // checked-out client whose backend is terminated (57P01) or whose socket drops emits
    // 'error' with nobody listening, which would crash the process. The query it was
    // running fails with that error anyway, and the pool discards the client on release
    // (it is no longer queryable), so a listener that swallows the event is all it takes.
    pool.on("connect", (client) => client.on("error", () => {}));
    pool.on("error", () => {});
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: guardedPool(pool, t.statementTimeoutMs + QUERY_SLACK_MS) }) });
    const url = new URL(opts.databaseUrl);
    return {
      db,
      engine: "postgres",
      dialect: DIALECTS.postgres,
      location: `postgres://${url.host}${url.pathname}`,
      transact: transactionPerCall(db),
      checkpointInBackground: () => {},
      ping: () => withDeadline(sql`select 1`.execute(db), t.connectTimeoutMs, "the database did not answer the readiness probe"),
      close: () => db.destroy(),
    };
  }
  // 0700 directory, 0600 files, also when they exist already (docs/tvc-isolation.md §4).
  ensurePrivateDir(opts.dataDir);
  const file = path.join(opts.dataDir, "sigil.db");
  createPrivateFile(file);
  const sqlite = openSqlite(file);
  restrictFiles(`${file}-wal`, `${file}-shm`);
  const lockDeadline: LockDeadline = { until: undefined };
  const db = new Kysely<Database>({ dialect: new AsyncLockSqliteDialect(sqlite, withStatementCache(sqlite), t.lockTimeoutMs, lockDeadline) });
  let checkpointer: Checkpointer | undefined;
  return {
    db,
    engine: "sqlite",
    dialect: DIALECTS.sqlite,
    location: file,
    transact: groupCommit(db, { deadlineMs: t.lockTimeoutMs, isTransient: isStoreUnavailable, lockDeadline }),
    checkpointInBackground(onError) {
      checkpointer ??= startCheckpointer(sqlite, file, onError);
    },
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    async close() {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

/** Hands Kysely pool clients whose queries cannot hang and whose failures are not reused. */
function guardedPool(pool: pg.Pool, queryDeadlineMs: number): PostgresPool {
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    async connect() {
      const client = await pool.connect();
      let wrapped = wrappers.get(client);
      if (!wrapped) wrappers.set(client, (wrapped = guardedClient(client, queryDeadlineMs)));
      return wrapped;
    },
    end: () => pool.end(),
  };
}

// Named prepared statements: PostgreSQL parses and plans a statement once per connection
// instead of on every execution (the unnamed statement of the extended protocol is parsed
// and planned each time, which is most of the server's work for a primary-key lookup).
// Kysely's SQL text for one query shape is always the same, so the text names the statement.
// Texts that vary with their input (`in ($1, $2, ...)` lists, multi-row inserts) would each
// stay prepared on every connection: after MAX_NAMED distinct texts, further ones run unnamed.
const MAX_NAMED = 2_000;
const statementNames = new Map<string, string>();
// Bumped when the server refuses a cached plan because a table changed under it (another
// node migrated): every statement is then prepared afresh under a new name.
let namesGeneration = 0;

function statementName(text: string): string | undefined {
  let name = statementNames.get(text);
  if (name === undefined && statementNames.size < MAX_NAMED) {
    name = `sigil_${namesGeneration}_${createHash("sha1").update(text).digest("base64url")}`;
    statementNames.set(text, name);
  }
  return name;
}

/** 0A000 "cached plan must not change result type": a prepared `select *` outlived a migration. */
function isStalePlan(e: unknown): boolean {
  return (e as { code?: unknown }).code === "0A000" && /cached plan must not change result type/.test(String((e as Error).message));
}

function guardedClient(client: pg.PoolClient, deadlineMs: number): PostgresPoolClient {
  // Set when a query timed out during the current checkout.
  let broken: Error | undefined;
  const query = (text: unknown, params?: unknown) => {
    if (typeof text !== "string") return client.query(text as never);
    const values = params as unknown[] | undefined;
    // Statements without parameters (BEGIN, COMMIT, SAVEPOINT) go as simple queries: one message.
    const name = values && values.length > 0 ? statementName(text) : undefined;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        broken = new StoreUnavailableError(`the database did not answer within ${deadlineMs} ms`);
        reject(broken);
        // The answer may still come, or never: the connection is in an unknown state and
        // is closed rather than reused (its late answer would go to the next query).
        (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
      }, deadlineMs);
      const sent = name === undefined ? client.query(text, values) : client.query({ text, values, name });
      sent.then(
        (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        (e: unknown) => {
          clearTimeout(timer);
          if (name !== undefined && isStalePlan(e)) {
            // This statement fails (its transaction is aborted anyway); the next ones re-prepare.
            namesGeneration++;
            statementNames.clear();
          }
          reject(e);
        },
      );
    });
  };
  return {
    query: query as PostgresPoolClient["query"],
    release() {
      const err = broken;
      broken = undefined;
      // With an error the pool closes the client instead of keeping it.
      client.release(err);
    },
  };
}

function withDeadline<T>(p: Promise<T>, ms: number, message: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreUnavailableError(`${message} within ${ms} ms`)), ms);
  });
  return Promise.race([p.then(() => undefined), expired]).finally(() => clearTimeout(timer));
}

// What "the database is away" looks like, as opposed to a bug in a query: connection-level
// failures, the server shutting down or refusing connections, and our own timeouts. Only
// these become 503; anything else stays a 500 with a logged error id.
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
const PG_UNAVAILABLE_STATES = new Set([
  "57P01", // admin_shutdown (pg_terminate_backend, server stopping)
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up, recovering)
  "53300", // too_many_connections
  "57014", // query_canceled: statement_timeout
  "25P03", // idle_in_transaction_session_timeout
  "55P03", // lock_not_available
]);
// node-postgres reports these as plain Errors, without a code.
const PG_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect$/,
  /is not queryable$/,
  /^Cannot use a pool after calling end on the pool$/,
  /^Query read timeout$/,
];

export function isStoreUnavailable(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; e && depth < 5; depth++, e = (e as { cause?: unknown }).cause) {
    if (e instanceof StoreUnavailableError) return true;
    if (e instanceof AggregateError && e.errors.some((x) => isStoreUnavailable(x))) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") {
      if (NETWORK_CODES.has(code) || PG_UNAVAILABLE_STATES.has(code)) return true;
      if (/^08[0-9A-Z]{3}$/.test(code)) return true; // connection_exception class
      if (isSqliteBusy(e)) return true;
    }
    const message = e instanceof Error ? e.message : undefined;
    if (message !== undefined && PG_MESSAGES.some((re) => re.test(message))) return true;
  }
  return false;
}

function openSqlite(file: string): SQLite.Database {
  const sqlite = new SQLite(file);
  // WAL: readers never block the writer; NORMAL: a commit survives a process crash
  // (what the durability test kills us with) — only an OS crash can lose the last commits.
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("foreign_keys = ON");
  // No waiting inside SQLite: a busy wait there blocks the event loop. Lock waits are done
  // asynchronously by the driver (sqlite-driver.ts), for the server and `sigil init` alike.
  sqlite.pragma("busy_timeout = 0");
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
