// "At most N at once" limits (live OTP codes per contact, OTP initiations per identifier
// per window) that hold under concurrent requests on PostgreSQL without count-then-insert:
// a limit of N is N numbered rows per scope, and taking one is one conditional upsert that
// succeeds only on a slot that is new or whose `until` has passed. The row lock the upsert
// takes serialises two takers of the same slot; the loser moves on to the next one.
// Inside an activity's transaction a slot taken by a failed activity is given back by the
// rollback.
import { sql } from "kysely";
import type { Executor } from "./schema.ts";

/** Takes a free slot of `scope` until `until` (epoch ms) for `holder`; false when all `limit` are held. */
export async function takeSlot(db: Executor, scope: string, limit: number, holder: string, until: number, now: number): Promise<boolean> {
  for (let slot = 0; slot < limit; slot++) {
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
    if (row) return true;
  }
  return false;
}

/** Frees the slots `holder` holds in `scope` (e.g. an OTP verified or burnt before it expired). */
export async function releaseSlots(db: Executor, scope: string, holder: string): Promise<void> {
  await db.updateTable("limit_slots").set({ until: 0 }).where("scope", "=", scope).where("holder", "=", holder).execute();
}

/** When the earliest slot of a full scope frees itself (for Retry-After style messages). */
export async function nextFreeAt(db: Executor, scope: string): Promise<number | undefined> {
  const row = await db.selectFrom("limit_slots").select((eb) => eb.fn.min("until").as("until")).where("scope", "=", scope).executeTakeFirst();
  return row?.until == null ? undefined : Number(row.until);
}
