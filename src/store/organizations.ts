// Organizations and their root quorum.
import { sql } from "kysely";
import { dialectOf } from "./engines.ts";
import type { Executor, OrganizationsTable } from "./schema.ts";
import { lockOrganization, locksRows } from "./locks.ts";
import { precompiled } from "./precompiled.ts";
import { UUID_PATTERN } from "../schemas/common.ts";

export type OrganizationRow = OrganizationsTable;

/** Organizations nest; a chain longer than this is refused at creation. */
export const MAX_ORGANIZATION_DEPTH = 8;

// An organization's parent never changes, so its chain of ancestors can be cached for the
// life of the store (one ChainCache per store, on the service state). Bounded so a flood of
// distinct ids can't grow it without limit.
const MAX_CHAINS = 50_000;

export class ChainCache {
  readonly #chains = new Map<string, readonly string[]>();

  get(id: string): readonly string[] | undefined {
    return this.#chains.get(id);
  }

  set(id: string, chain: readonly string[]): void {
    if (this.#chains.size >= MAX_CHAINS) this.#chains.clear();
    this.#chains.set(id, chain);
  }
}

/**
 * [id, parent, grandparent, ...]; empty when the organization does not exist. With `cache`
 * (the store's, from the service state) a known chain is answered from memory.
 */
export async function organizationChain(db: Executor, id: string, cache?: ChainCache): Promise<readonly string[]> {
  const cached = cache?.get(id);
  if (cached) return cached;
  const chain: string[] = [];
  let cursor: string | null = id;
  while (cursor && chain.length <= MAX_ORGANIZATION_DEPTH) {
    const row: { parent_id: string | null } | undefined = await db
      .selectFrom("organizations")
      .select("parent_id")
      .where("id", "=", cursor)
      .executeTakeFirst();
    if (!row) break;
    chain.push(cursor);
    cursor = row.parent_id;
  }
  if (chain.length > 0) cache?.set(id, chain);
  return chain;
}

export async function insertOrganization(db: Executor, row: OrganizationRow): Promise<void> {
  await db.insertInto("organizations").values(row).execute();
}

/**
 * Replaces the root quorum's members (the threshold is the caller's, in the same transaction).
 * Delete-then-insert is only correct while no other transaction replaces the same quorum: two
 * interleaved replacements would each delete the other's old rows and keep both inserts (a
 * quorum nobody asked for) or collide on the primary key. So the organization row is locked
 * first (a no-op when the caller already holds it, and on SQLite).
 */
/** Whether the user is in the organization's root quorum. */
export async function isRootUser(db: Executor, organizationId: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom("root_quorum_members")
    .select("user_id")
    .where("organization_id", "=", organizationId)
    .where("user_id", "=", userId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function setRootQuorum(db: Executor, organizationId: string, userIds: string[]): Promise<void> {
  await lockOrganization(db, organizationId);
  await db.deleteFrom("root_quorum_members").where("organization_id", "=", organizationId).execute();
  if (userIds.length) {
    await db
      .insertInto("root_quorum_members")
      .values(userIds.map((user_id) => ({ organization_id: organizationId, user_id })))
      .execute();
  }
}

/**
 * Whether the organization exists and was not deleted (docs/organizations.md §7.3). The chain
 * cache knows only the structure, which never changes; deletion is read here.
 */
export async function organizationIsLive(db: Executor, id: string): Promise<boolean> {
  const row = await db.selectFrom("organizations").select("deleted_at").where("id", "=", id).executeTakeFirst();
  return row !== undefined && row.deleted_at == null;
}

/**
 * In an activity's transaction, before it runs: whether its organization is still live, and
 * the version of its signing keys (docs/signing.md §5; undefined when not live). On
 * PostgreSQL the read takes FOR KEY SHARE on the row — what any insert referencing the row
 * takes anyway, so it queues behind nothing but a deletion (FOR UPDATE): an activity
 * authenticated before its organization was deleted waits for that deletion to commit and
 * then finds it gone (docs/organizations.md §7.3).
 */
export async function liveOrganizationLocked(tx: Executor, id: string, forDeletion = false): Promise<{ keysVersion: number } | undefined> {
  // Where every statement is a round trip, the id goes in as a literal (an id Sigil made: a
  // UUID, checked): a statement without parameters rides with the transaction's BEGIN in one
  // message (store/postgres/pool.ts; docs/storage.md §3). An activity that deletes the
  // organization takes the lock it will need at once (ActivityDefinition.deletesOrganization).
  const lock = forDeletion ? sql.raw("for update") : sql.raw("for key share");
  const [row] =
    dialectOf(tx).roundTrips && UUID_LITERAL.test(id)
      ? (
          await sql<{
            deleted_at: number | null;
            keys_version: number | string;
          }>`select deleted_at, keys_version from organizations where id = ${sql.lit(id)} ${lock}`.execute(tx)
        ).rows
      : await (forDeletion ? livenessForDeletion : liveness)(tx, { id });
  return row !== undefined && row.deleted_at == null ? { keysVersion: Number(row.keys_version) } : undefined;
}

const UUID_LITERAL = new RegExp(UUID_PATTERN);

// Every activity runs it: compiled once per dialect (store/precompiled.ts).
const liveness = precompiled(["id"], (db, v) => {
  const q = db.selectFrom("organizations").select(["deleted_at", "keys_version"]).where("id", "=", v.id);
  return locksRows(db) ? q.forKeyShare() : q;
});
const livenessForDeletion = precompiled(["id"], (db, v) => {
  const q = db.selectFrom("organizations").select(["deleted_at", "keys_version"]).where("id", "=", v.id);
  return locksRows(db) ? q.forUpdate() : q;
});
