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
  tagIdList: () =>
    sql<string | null>`(select string_agg(m.tag_id, ',' order by m.tag_id) from user_tag_members m where m.user_id = users.id)`,
  // Statement triggers over transition tables: one UPDATE per statement and organization, however
  // many rows it wrote (an organization's deletion removes all its keys in one statement).
  async createCounterTriggers(db, table, counter) {
    const fn = `sigil_bump_${counter}`;
    await sql
      .raw(
        `CREATE OR REPLACE FUNCTION "${fn}"() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ` +
          `IF TG_OP = 'DELETE' THEN UPDATE organizations SET "${counter}" = "${counter}" + 1 WHERE id IN (SELECT DISTINCT organization_id FROM old_rows); ` +
          `ELSE UPDATE organizations SET "${counter}" = "${counter}" + 1 WHERE id IN (SELECT DISTINCT organization_id FROM new_rows); END IF; ` +
          `RETURN NULL; END $$`,
      )
      .execute(db);
    // A transition table may be named by one event only per trigger.
    for (const [event, ref] of [
      ["INSERT", "NEW TABLE AS new_rows"],
      ["UPDATE", "NEW TABLE AS new_rows"],
      ["DELETE", "OLD TABLE AS old_rows"],
    ] as const) {
      await sql
        .raw(
          `CREATE TRIGGER "${table}_${counter}_${event.toLowerCase()}" AFTER ${event} ON "${table}" REFERENCING ${ref} FOR EACH STATEMENT EXECUTE FUNCTION "${fn}"()`,
        )
        .execute(db);
    }
  },
  async dropCounterTriggers(db, table, counter) {
    for (const event of ["insert", "update", "delete"])
      await sql.raw(`DROP TRIGGER IF EXISTS "${table}_${counter}_${event}" ON "${table}"`).execute(db);
  },
  // Row triggers, so a statement that changed no row announces nothing; the server folds a
  // transaction's identical notices into one.
  async createNoticeTriggers(db, table, channel, events, columns) {
    const fn = `sigil_notify_${channel}`;
    await sql
      .raw(
        `CREATE OR REPLACE FUNCTION "${fn}"() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ` +
          `PERFORM pg_notify('${channel}', ''); RETURN NULL; END $$`,
      )
      .execute(db);
    const on = events.map((e) => (e === "UPDATE" && columns ? `UPDATE OF ${columns.map((c) => `"${c}"`).join(", ")}` : e)).join(" OR ");
    await sql.raw(`CREATE TRIGGER "${table}_${channel}" AFTER ${on} ON "${table}" FOR EACH ROW EXECUTE FUNCTION "${fn}"()`).execute(db);
  },
  async dropNoticeTriggers(db, table, channel) {
    await sql.raw(`DROP TRIGGER IF EXISTS "${table}_${channel}" ON "${table}"`).execute(db);
  },
  async notify(db, channel) {
    await sql`SELECT pg_notify(${channel}, '')`.execute(db);
  },
};
