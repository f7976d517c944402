// SQLite's side of the SQL differences (store/dialect.ts): one process, one writer, so
// nothing is locked and nobody else listens.
import { SqliteAdapter, sql } from "kysely";
import type { StoreDialect } from "../dialect.ts";

const same = <Q>(q: Q): Q => q;

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
    sql<string | null>`(select group_concat(tag_id, ',') from (select m.tag_id from user_tag_members m where m.user_id = users.id order by m.tag_id))`,
  async notify() {},
};
