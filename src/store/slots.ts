// "At most N at once" limits (live OTP codes per contact, OTP initiations per identifier
// per window, wrong guesses and messages per contact or organization per window:
// docs/otp-limits-and-mail.md §4) that hold under concurrent requests on PostgreSQL without
// count-then-insert: a limit of N is at most N numbered rows per scope, and taking one is
// one conditional upsert that succeeds only on a slot that is new or whose `until` has
// passed. The row lock the upsert takes serialises two takers of the same slot; the loser
// moves on to another one. Inside an activity's transaction a slot taken by a failed
// activity is given back by the rollback.
//
// Small limits try the numbers in order. Large ones (a thousand messages per organization
// per hour) would cost up to N statements that way, so they first look for a slot that is
// free — an expired row, locked as it is read and skipping rows other transactions hold
// (PostgreSQL), else a number that has no row yet — and take that one: the expired row by an
// update still conditional on its `until`, a new number by an insert that does nothing when
// the number was taken meanwhile. Neither locks a row it does not get (an upsert whose
// condition fails still locks the row, and takers locking rows in different orders would
// deadlock), so a stale look costs a retry, never an extra slot or a deadlock.
import { sql } from "kysely";
import { dialectOf } from "./engines.ts";
import type { Executor } from "./schema.ts";

/** Up to this many slots, numbers are simply tried in order. */
const LINEAR_UP_TO = 16;
/** Looks before falling back to trying every number in order. */
const HINTED_TRIES = 6;

async function claim(db: Executor, scope: string, slot: number, holder: string, until: number, now: number): Promise<boolean> {
  const row = await db
    .insertInto("limit_slots")
    .values({ scope, slot, until, holder })
    .onConflict((oc) =>
      oc
        .columns(["scope", "slot"])
        .doUpdateSet({ until: sql`excluded.until`, holder: sql`excluded.holder` })
        .where("limit_slots.until", "<=", now),
    )
    .returning("slot")
    .executeTakeFirst();
  return row !== undefined;
}

/** One look-and-take for a large limit: true (taken), false (every number has a live row) or undefined (lost a race: look again). */
async function claimFree(
  db: Executor,
  scope: string,
  limit: number,
  holder: string,
  until: number,
  now: number,
): Promise<boolean | undefined> {
  const expired = await dialectOf(db)
    .forUpdateSkipLocked(
      db.selectFrom("limit_slots").select("slot").where("scope", "=", scope).where("until", "<=", now).where("slot", "<", limit).limit(1),
    )
    .executeTakeFirst();
  if (expired) {
    const r = await db
      .updateTable("limit_slots")
      .set({ until, holder })
      .where("scope", "=", scope)
      .where("slot", "=", expired.slot)
      .where("until", "<=", now)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1 ? true : undefined;
  }
  // Numbers without a row (never used, or swept): 0, or one after a used number; picked at
  // random so concurrent takers rarely aim at the same one.
  const missing = await sql<{ slot: number }>`
    select n.slot from (
      select 0 as slot where not exists (select 1 from limit_slots where scope = ${scope} and slot = 0)
      union all
      select s.slot + 1 as slot from limit_slots s
       where s.scope = ${scope} and s.slot + 1 < ${limit}
         and not exists (select 1 from limit_slots t where t.scope = s.scope and t.slot = s.slot + 1)
    ) n order by random() limit 1`.execute(db);
  const n = missing.rows[0]?.slot;
  // Every number has a row and none is free (rows other transactions are taking count as held).
  if (n === undefined) return false;
  const row = await db
    .insertInto("limit_slots")
    .values({ scope, slot: Number(n), until, holder })
    .onConflict((oc) => oc.columns(["scope", "slot"]).doNothing())
    .returning("slot")
    .executeTakeFirst();
  return row !== undefined ? true : undefined;
}

/** Takes a free slot of `scope` until `until` (epoch ms) for `holder`; false when all `limit` are held. */
export async function takeSlot(db: Executor, scope: string, limit: number, holder: string, until: number, now: number): Promise<boolean> {
  if (limit > LINEAR_UP_TO) {
    for (let i = 0; i < HINTED_TRIES; i++) {
      const taken = await claimFree(db, scope, limit, holder, until, now);
      if (taken !== undefined) return taken;
    }
  }
  // Numbers in order: two takers lock the rows they pass in the same order.
  for (let slot = 0; slot < limit; slot++) {
    if (await claim(db, scope, slot, holder, until, now)) return true;
  }
  return false;
}

/** Frees the slots `holder` holds in `scope` (e.g. an OTP verified before it expired). */
export async function releaseSlots(db: Executor, scope: string, holder: string): Promise<void> {
  await db.updateTable("limit_slots").set({ until: 0 }).where("scope", "=", scope).where("holder", "=", holder).execute();
}

/** When the earliest held slot of a full scope frees itself (for Retry-After). */
export async function nextFreeAt(db: Executor, scope: string, now?: number): Promise<number | undefined> {
  let q = db
    .selectFrom("limit_slots")
    .select((eb) => eb.fn.min("until").as("until"))
    .where("scope", "=", scope);
  if (now !== undefined) q = q.where("until", ">", now);
  const row = await q.executeTakeFirst();
  return row?.until == null ? undefined : Number(row.until);
}
