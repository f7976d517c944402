// PostgreSQL's side of the SQL differences (store/dialect.ts): parallel writers take row
// locks, and changes are announced to the other processes with NOTIFY.
import { PostgresAdapter, sql } from "kysely";
import type { StoreDialect } from "../dialect.ts";

export const POSTGRES_DIALECT: StoreDialect = {
  engine: "postgres",
  ownsAdapter: (adapter) => adapter instanceof PostgresAdapter,
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
