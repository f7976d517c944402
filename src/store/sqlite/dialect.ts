// SQLite's side of the SQL differences (store/dialect.ts): one process, one writer, so
// nothing is locked and nobody else listens.
import { SqliteAdapter, sql } from "kysely";
import type { StoreDialect } from "../dialect.ts";

const same = <Q>(q: Q): Q => q;
const TRIGGER_EVENTS = ["insert", "update", "delete"] as const;

export const SQLITE_DIALECT: StoreDialect = {
  engine: "sqlite",
  ownsAdapter: (adapter) => adapter instanceof SqliteAdapter,
  locksRows: false,
  singleProcess: true,
  notifies: false,
  roundTrips: false,
  forUpdate: same,
  forUpdateSkipLocked: same,
  lock: same,
  tagIdList: () =>
    sql<
      string | null
    >`(select group_concat(tag_id, ',') from (select m.tag_id from user_tag_members m where m.user_id = users.id order by m.tag_id))`,
  // Row triggers: SQLite has no statement triggers. A trigger name cannot be a bound value.
  async createCounterTriggers(db, table, counter) {
    for (const [event, row] of [
      ["INSERT", "NEW"],
      ["UPDATE", "NEW"],
      ["DELETE", "OLD"],
    ] as const) {
      await sql
        .raw(
          `CREATE TRIGGER "${table}_${counter}_${event.toLowerCase()}" AFTER ${event} ON "${table}" FOR EACH ROW BEGIN ` +
            `UPDATE organizations SET "${counter}" = "${counter}" + 1 WHERE id = ${row}.organization_id; END`,
        )
        .execute(db);
    }
  },
  async dropCounterTriggers(db, table, counter) {
    for (const event of TRIGGER_EVENTS) await sql.raw(`DROP TRIGGER IF EXISTS "${table}_${counter}_${event}"`).execute(db);
  },
  // Nothing to announce to: one process serves the file (its own writes are seen by its credential watch's
  // temporary triggers, another process's commits by PRAGMA data_version: sqlite/credential-watch.ts).
  async createNoticeTriggers() {},
  async dropNoticeTriggers() {},
  async notify() {},
};
