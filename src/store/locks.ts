// Row locks that make read-then-write activities (caps checked by counting, the root quorum
// replaced by delete + insert, a policy merged with its stored fields, "exists" checked before
// a row referencing it is inserted) correct under concurrency, on both engines, without the
// callers knowing which engine they run on.
//
// PostgreSQL runs activities in parallel READ COMMITTED transactions: a count or a read taken
// before another transaction commits is stale by the time we write. Locking the owning row
// first makes the writers of one owner queue up; each statement after the lock sees what the
// previous holder committed (READ COMMITTED takes a fresh snapshot per statement).
//
// Two strengths:
//   "exclusive" = FOR NO KEY UPDATE: one holder at a time. Taken by whoever counts, replaces
//     or deletes what belongs to the row (its keys, its members, the row itself). Not FOR
//     UPDATE: every insert that references the row by foreign key takes FOR KEY SHARE on it,
//     which FOR UPDATE would conflict with (a transaction that inserted such a row and then
//     locked would deadlock against another doing the same).
//   "shared" = FOR SHARE: many holders, no exclusive one. Taken by whoever only needs the row
//     to go on existing until commit (a user being tagged or made a root, a tag being applied),
//     so such writers don't queue behind each other.
//
// SQLite has one writer (activities run one at a time, src/store/transactions.ts), so
// everything an activity reads inside its transaction is already current: nothing to lock.
//
// Lock order, everywhere: the organization row, then user rows, then user tag rows, each set
// in id order. Nothing locks a user and then its organization, or a tag and then a user.
import type { SelectQueryBuilder } from "kysely";
import type { Executor } from "./schema.ts";
import { dialectOf } from "./engines.ts";
import type { LockStrength } from "./dialect.ts";

export type { LockStrength };

/** Whether this executor's engine runs writers in parallel (and so needs row locks). */
export function locksRows(db: Executor): boolean {
  return dialectOf(db).locksRows;
}

/** `q` with the row lock where the engine needs it (see above); unchanged on SQLite. */
export function lockingRead<DB, TB extends keyof DB, O>(
  db: Executor,
  q: SelectQueryBuilder<DB, TB, O>,
  strength: LockStrength = "exclusive",
): SelectQueryBuilder<DB, TB, O> {
  return dialectOf(db).lock(q, strength);
}

/**
 * Serializes, until the end of the transaction, the activities that change what belongs to
 * the organization as a whole and check it first: its root quorum, its policies (cap, merge),
 * its webhook endpoints (cap).
 */
export async function lockOrganization(tx: Executor, organizationId: string): Promise<void> {
  if (!locksRows(tx)) return;
  await tx.selectFrom("organizations").select("id").where("id", "=", organizationId).forNoKeyUpdate().execute();
}

/** Locks users of the organization; returns the ids that exist, in id order (the lock order). */
export async function lockUsers(
  tx: Executor,
  organizationId: string,
  userIds: readonly string[],
  strength: LockStrength = "exclusive",
): Promise<string[]> {
  if (userIds.length === 0) return [];
  const q = tx
    .selectFrom("users")
    .select("id")
    .where("organization_id", "=", organizationId)
    .where("id", "in", [...userIds])
    .orderBy("id");
  return (await lockingRead(tx, q, strength).execute()).map((r) => r.id);
}

/** Locks user tags of the organization; returns the ids that exist, in id order (the lock order). */
export async function lockUserTags(
  tx: Executor,
  organizationId: string,
  tagIds: readonly string[],
  strength: LockStrength = "exclusive",
): Promise<string[]> {
  if (tagIds.length === 0) return [];
  const q = tx
    .selectFrom("user_tags")
    .select("id")
    .where("organization_id", "=", organizationId)
    .where("id", "in", [...tagIds])
    .orderBy("id");
  return (await lockingRead(tx, q, strength).execute()).map((r) => r.id);
}
