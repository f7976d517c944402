// The shared engine: PostgreSQL through node-postgres, chosen by a postgres:// or
// postgresql:// DATABASE_URL; several processes may share it (docs/storage.md §1).
import os from "node:os";
import pg from "pg";
import { Kysely, PostgresDialect, sql } from "kysely";
import type { Database } from "../schema.ts";
import { StoreUnavailableError, transactionPerCall } from "../transactions.ts";
import type { OpenOptions, OpenedStore, StorageEngine } from "../engine.ts";
import { guardedPool, StatementNames } from "./pool.ts";
import { POSTGRES_DIALECT } from "./dialect.ts";
import { postgresBulkWriter } from "./bulk.ts";
import { postgresCredentialWatch } from "./credential-watch.ts";
import type { CredentialWatch } from "../credential-watch.ts";

// statement_timeout ends a statement the server is running; this client-side deadline is
// for a server (or network) that does not answer at all. Later than statement_timeout, so
// that an answering server reports its own timeout first.
const QUERY_SLACK_MS = 1_000;

const SCHEMES = ["postgres:", "postgresql:"];

/**
 * PostgreSQL connections per process when SIGIL_DB_POOL_SIZE is not set. Node runs the
 * requests on one thread; a connection is busy for a round trip at a time, so a few per core
 * keep it fed while requests wait on the network and on commits (the number of connections
 * the database serves at once is what costs it: N nodes × this ≤ max_connections).
 */
export function defaultPoolSize(cores = os.availableParallelism()): number {
  return Math.min(20, Math.max(8, 4 * cores));
}

function open(opts: OpenOptions): OpenedStore {
  const t = opts.timeouts;
  const url = new URL(opts.databaseUrl!);
  // int8 (bigint) columns hold millisecond timestamps; they fit a JS number exactly. Set on
  // this pool's clients only, not on node-postgres's process-wide parsers.
  const types = new pg.TypeOverrides();
  types.setTypeParser(20, (v: string) => Number(v));
  const pool = new pg.Pool({
    connectionString: opts.databaseUrl,
    max: opts.poolSize ?? defaultPoolSize(),
    connectionTimeoutMillis: t.connectTimeoutMs,
    statement_timeout: t.statementTimeoutMs,
    idle_in_transaction_session_timeout: t.idleInTransactionTimeoutMs,
    // A peer that vanished without a FIN (cable, VM pause) is noticed by the kernel.
    keepAlive: true,
    types,
  });
  // pg-pool listens for connection errors only while a client is idle in the pool. A
  // checked-out client whose backend is terminated (57P01) or whose socket drops emits
  // 'error' with nobody listening, which would crash the process. The query it was
  // running fails with that error anyway, and the pool discards the client on release
  // (it is no longer queryable), so a listener that swallows the event is all it takes.
  pool.on("connect", (client) => client.on("error", () => {}));
  pool.on("error", () => {});
  // The pool's statement cache lives and dies with it (docs/storage.md §3).
  const names = new StatementNames();
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: guardedPool(pool, t.statementTimeoutMs + QUERY_SLACK_MS, names) }),
  });
  let watch: CredentialWatch | undefined;
  return {
    db,
    location: `postgres://${url.host}${url.pathname}`,
    transact: transactionPerCall(db),
    checkpointInBackground: () => {},
    ping: () => withDeadline(sql`select 1`.execute(db), t.connectTimeoutMs, "the database did not answer the readiness probe"),
    credentialWatch: () => (watch ??= postgresCredentialWatch(opts.databaseUrl!)),
    async close() {
      await watch?.close();
      await db.destroy();
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
// failures, the server shutting down or refusing connections, and the server's timeouts. Only
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
const UNAVAILABLE_STATES = new Set([
  "57P01", // admin_shutdown (pg_terminate_backend, server stopping)
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up, recovering)
  "53300", // too_many_connections
  "57014", // query_canceled: statement_timeout
  "25P03", // idle_in_transaction_session_timeout
  "55P03", // lock_not_available
]);
// node-postgres reports these as plain Errors, without a code.
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect$/,
  /is not queryable$/,
  /^Cannot use a pool after calling end on the pool$/,
  /^Query read timeout$/,
];

function isUnavailable(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === "string") {
    if (NETWORK_CODES.has(code) || UNAVAILABLE_STATES.has(code)) return true;
    if (/^08[0-9A-Z]{3}$/.test(code)) return true; // connection_exception class
  }
  const message = e instanceof Error ? e.message : undefined;
  return message !== undefined && UNAVAILABLE_MESSAGES.some((re) => re.test(message));
}

export const postgres = {
  name: "postgres",
  schemes: SCHEMES,
  matches: (url) => url !== undefined && SCHEMES.some((s) => url.toLowerCase().startsWith(`${s}//`)),
  open,
  dialect: POSTGRES_DIALECT,
  isUnavailable,
  bulkWriter: postgresBulkWriter,
} satisfies StorageEngine<"postgres">;
