// Session profiles (docs/sessions-and-network.md §6): written once by create_session_profile,
// never changed. A profile is visible to — and usable by the logins of — its own organization
// and every organization below it: an organization's chain (itself, then its ancestors) names
// the profiles it may see.
import { organizationChain, type ChainCache } from "./organizations.ts";
import type { Executor, SessionProfilesTable } from "./schema.ts";
import { timestampObject } from "./util.ts";

export type SessionProfileRow = SessionProfilesTable;

/** Per organization, as upstream caps nothing we know of: our choice, so a tenant cannot grow the table without bound. */
export const MAX_SESSION_PROFILES_PER_ORGANIZATION = 100;

export async function insertSessionProfile(db: Executor, row: SessionProfileRow): Promise<void> {
  await db.insertInto("session_profiles").values(row).execute();
}

export async function countSessionProfiles(db: Executor, organizationId: string): Promise<number> {
  const r = await db
    .selectFrom("session_profiles")
    .select((eb) => eb.fn.countAll<string | number>().as("n"))
    .where("organization_id", "=", organizationId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** The profile by id, whichever organization made it (the scope check's look-up: the id comes from a session key). */
export async function sessionProfileById(db: Executor, id: string): Promise<SessionProfileRow | undefined> {
  return db.selectFrom("session_profiles").selectAll().where("id", "=", id).executeTakeFirst();
}

/** The profile if `organizationId` or one of its ancestors made it; undefined for any other organization's. */
export async function visibleSessionProfile(
  db: Executor,
  organizationId: string,
  id: string,
  chains?: ChainCache,
): Promise<SessionProfileRow | undefined> {
  const [chain, row] = await Promise.all([organizationChain(db, organizationId, chains), sessionProfileById(db, id)]);
  return row && chain.includes(row.organization_id) ? row : undefined;
}

/** Every profile `organizationId` may use: its own and its ancestors', oldest first. */
export async function visibleSessionProfiles(db: Executor, organizationId: string, chains?: ChainCache): Promise<SessionProfileRow[]> {
  const chain = await organizationChain(db, organizationId, chains);
  if (chain.length === 0) return [];
  return db
    .selectFrom("session_profiles")
    .selectAll()
    .where("organization_id", "in", [...chain])
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

/** SDK type v1SessionProfile: updatedAt is createdAt (profiles never change). */
export function sessionProfileView(r: SessionProfileRow) {
  return {
    sessionProfileId: r.id,
    sessionProfileName: r.name,
    scope: r.scope,
    ...(r.expiration_seconds !== null ? { expirationSeconds: r.expiration_seconds } : {}),
    ...(r.notes !== null ? { notes: r.notes } : {}),
    createdAt: timestampObject(Number(r.created_at)),
    updatedAt: timestampObject(Number(r.created_at)),
  };
}
