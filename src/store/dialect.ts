// What differs between the engines' SQL, as one interface: callers ask the dialect of a
// database handle or transaction (dialectOf in store/engines.ts) and never test which engine
// they run on. Each engine's folder holds its implementation (docs/storage.md §1).
//
// PostgreSQL: several processes may share the store; writers run in parallel READ COMMITTED
// transactions, so read-then-write needs row locks (store/locks.ts), and endpoint changes are
// announced with NOTIFY. SQLite: one process owns the store and has one writer, so nothing is
// locked, and whatever this process has not done itself cannot have happened.
import type { DialectAdapter, Kysely, RawBuilder, SelectQueryBuilder } from "kysely";

/** A handle on any schema: the DDL and NOTIFY below name their tables and channels themselves. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's own spelling of "any schema"
type AnySchema = Kysely<any>;

/** "exclusive" = FOR NO KEY UPDATE, "shared" = FOR SHARE (see store/locks.ts). */
export type LockStrength = "exclusive" | "shared";

export interface StoreDialect {
  /** The engine's name (StorageEngine.name). */
  engine: string;
  /** Whether a Kysely handle runs on this engine (dialectOf asks each engine in turn). */
  ownsAdapter(adapter: DialectAdapter): boolean;
  /** Writers run in parallel, so read-then-write needs row locks. */
  locksRows: boolean;
  /** One process owns the store: leases of a previous run are void; every change is this process's own. */
  singleProcess: boolean;
  /** Changes can be announced to other processes (notify) and listened for. */
  notifies: boolean;
  /**
   * Every statement is a network round trip (PostgreSQL): small reads that belong together are
   * worth combining into one statement. SQLite reads are function calls: simple queries win.
   */
  roundTrips: boolean;
  /** `q` FOR UPDATE where rows are locked; unchanged otherwise. */
  forUpdate<DB, TB extends keyof DB, O>(q: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O>;
  /** `q` FOR UPDATE SKIP LOCKED (several workers claiming) where rows are locked; unchanged otherwise. */
  forUpdateSkipLocked<DB, TB extends keyof DB, O>(q: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O>;
  /** `q` FOR NO KEY UPDATE (exclusive) or FOR SHARE where rows are locked; unchanged otherwise. */
  lock<DB, TB extends keyof DB, O>(q: SelectQueryBuilder<DB, TB, O>, strength: LockStrength): SelectQueryBuilder<DB, TB, O>;
  /** A correlated subquery: the tag ids of `users.id`, sorted, comma-separated (null when none). */
  tagIdList(): RawBuilder<string | null>;
  /**
   * Creates triggers that add 1 to `organizations.<counter>` of the organization of every row
   * inserted into, updated in or deleted from `table` (its `organization_id`), in the same
   * transaction: a version no writer can forget to bump (migration 024).
   */
  createCounterTriggers(db: AnySchema, table: string, counter: string): Promise<void>;
  /** Drops what createCounterTriggers made. */
  dropCounterTriggers(db: AnySchema, table: string, counter: string): Promise<void>;
  /**
   * Creates row triggers that announce on `channel` (NOTIFY, delivered at commit) every write of
   * `events` to `table` — an UPDATE only when it names one of `columns`, if given. A no-op where
   * nothing is announced: SQLite's credential watch makes connection-local triggers instead
   * (docs/storage.md §3.1).
   */
  createNoticeTriggers(
    db: AnySchema,
    table: string,
    channel: string,
    events: readonly string[],
    columns?: readonly string[],
  ): Promise<void>;
  /** Drops what createNoticeTriggers made. */
  dropNoticeTriggers(db: AnySchema, table: string, channel: string): Promise<void>;
  /** Announces a change on `channel` at commit (no-op where nobody else can be listening). */
  notify(db: AnySchema, channel: string): Promise<void>;
}
