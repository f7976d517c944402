// What differs between the two engines, in one place: callers ask the dialect (of a database
// handle or transaction, or Store.dialect) and never test which engine they run on.
//
// PostgreSQL: several processes may share the store; writers run in parallel READ COMMITTED
// transactions, so read-then-write needs row locks (store/locks.ts), and endpoint changes are
// announced with NOTIFY. SQLite: one process owns the store and has one writer, so nothing is
// locked, and whatever this process has not done itself cannot have happened.
import { PostgresAdapter, sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from "kysely";

export type Engine = "sqlite" | "postgres";

/** "exclusive" = FOR NO KEY UPDATE, "shared" = FOR SHARE (see store/locks.ts). */
export type LockStrength = "exclusive" | "shared";

export interface StoreDialect {
  engine: Engine;
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
  /** Announces a change on `channel` at commit (no-op where nobody else can be listening). */
  notify(db: Kysely<any>, channel: string): Promise<void>;
}

const same = <Q>(q: Q): Q => q;

const POSTGRES: StoreDialect = {
  engine: "postgres",
  locksRows: true,
  singleProcess: false,
  notifies: true,
  roundTrips: true,
  forUpdate: (q) => q.forUpdate(),
  forUpdateSkipLocked: (q) => q.forUpdate().skipLocked(),
  lock: (q, strength) => (strength === "exclusive" ? q.forNoKeyUpdate() : q.forShare()),
  tagIdList: () => sql<string | null>`(select string_agg(m.tag_id, ',' order by m.tag_id) from user_tag_members m where m.user_id = users.id)`,
  async notify(db, channel) {
    await sql`SELECT pg_notify(${channel}, '')`.execute(db);
  },
};

const SQLITE: StoreDialect = {
  engine: "sqlite",
  locksRows: false,
  singleProcess: true,
  notifies: false,
  roundTrips: false,
  forUpdate: same,
  forUpdateSkipLocked: same,
  lock: same,
  tagIdList: () =>
    sql<string | null>`(select group_concat(tag_id, ',') from (select m.tag_id from user_tag_members m where m.user_id = users.id order by m.tag_id))`,
  async notify() {},
};

export const DIALECTS: Readonly<Record<Engine, StoreDialect>> = { postgres: POSTGRES, sqlite: SQLITE };

/** The dialect of a database handle or of a transaction on it. */
export function dialectOf(db: Kysely<any>): StoreDialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? POSTGRES : SQLITE;
}
