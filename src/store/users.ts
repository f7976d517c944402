// Users, read back in the SDK's full User shape.
import { sql } from "kysely";
import type { ApiKeysTable, AuthenticatorsTable, Executor, OauthProvidersTable, UsersTable } from "./schema.ts";
import { dialectOf } from "./engines.ts";
import { apiKeysOfUsers, apiKeyView, type ApiKeyView } from "./api-keys.ts";
import { authenticatorsOfUsers, authenticatorView, type AuthenticatorView } from "./authenticators.ts";
import { ownedBy, timestampObject } from "./util.ts";
import { precompiled } from "./precompiled.ts";
import { missingIn } from "./ownership.ts";
import { oauthProvidersOfUsers, oauthProviderView, type OauthProviderView } from "./oauth-providers.ts";
import { mfaPoliciesByUser, mfaPolicyView, type MfaPolicyRow } from "./mfa-policies.ts";

export type UserRow = UsersTable;

export interface UserView {
  userId: string;
  userName: string;
  userEmail?: string;
  userPhoneNumber?: string;
  authenticators: AuthenticatorView[];
  apiKeys: ApiKeyView[];
  userTags: string[];
  oauthProviders: OauthProviderView[];
  createdAt: { seconds: string; nanos: string };
  updatedAt: { seconds: string; nanos: string };
  /** v1User.mfaPolicies (docs/mfa.md §1). */
  mfaPolicies: ReturnType<typeof mfaPolicyView>[];
}

export async function findUser(db: Executor, organizationId: string, userId: string): Promise<UserRow | undefined> {
  return ownedBy(await db.selectFrom("users").selectAll().where("id", "=", userId).executeTakeFirst(), organizationId);
}

/** The ids among `userIds` that are not users of the organization. */
export async function missingUsers(db: Executor, organizationId: string, userIds: readonly string[]): Promise<string[]> {
  return missingIn(db, "users", organizationId, userIds);
}

export async function insertUser(db: Executor, row: UserRow): Promise<void> {
  await db.insertInto("users").values(row).execute();
}

/** A user's api keys, passkeys, tag ids and OAuth providers, as a User view needs them. */
export type UserExtras = [ApiKeysTable[], AuthenticatorsTable[], Map<string, string[]>, OauthProvidersTable[]];

/** The columns of `extrasSelect`, as PostgreSQL returns them. */
export interface ExtrasColumns {
  keys: ApiKeysTable[];
  passkeys: AuthenticatorsTable[];
  tags: string[];
  providers: OauthProvidersTable[];
}

/**
 * The select list reading one user's api keys, passkeys, tag ids and OAuth providers (json_agg
 * of whole rows: every column is text or a number, which JSON carries unchanged; bigint
 * timestamps come back as numbers, as the int8 parser gives them), in the order of the
 * separate queries. PostgreSQL only; a statement of its own, or the tail of another one.
 */
export function extrasSelect(userId: string) {
  return sql`(select coalesce(json_agg(k order by k.created_at, k.id), '[]') from api_keys k where k.user_id = ${userId}) as keys,
    (select coalesce(json_agg(a order by a.created_at, a.id), '[]') from authenticators a where a.user_id = ${userId}) as passkeys,
    (select coalesce(json_agg(m.tag_id order by m.tag_id), '[]') from user_tag_members m where m.user_id = ${userId}) as tags,
    (select coalesce(json_agg(o order by o.created_at, o.id), '[]') from oauth_providers o where o.user_id = ${userId}) as providers`;
}

export function extrasOf(userId: string, r: ExtrasColumns): UserExtras {
  return [r.keys, r.passkeys, new Map([[userId, r.tags]]), r.providers];
}

/** One user's extras in one statement. */
async function extrasOfUser(db: Executor, userId: string): Promise<UserExtras> {
  const { rows } = await sql<ExtrasColumns>`select ${extrasSelect(userId)}`.execute(db);
  return extrasOf(userId, rows[0]!);
}

const keysOfUser = precompiled(["userId"], (db, v) =>
  db.selectFrom("api_keys").selectAll().where("user_id", "=", v.userId).orderBy("created_at").orderBy("id"),
);
const authenticatorsOfUser = precompiled(["userId"], (db, v) =>
  db.selectFrom("authenticators").selectAll().where("user_id", "=", v.userId).orderBy("created_at").orderBy("id"),
);
const tagsOfUser = precompiled(["userId"], (db, v) =>
  db.selectFrom("user_tag_members").select(["user_id", "tag_id"]).where("user_id", "=", v.userId).orderBy("tag_id"),
);

/** The tag ids of each user (every user of `userIds` is a key), one query. */
export async function tagIdsByUser(db: Executor, userIds: readonly string[]): Promise<Map<string, string[]>> {
  const tags = new Map<string, string[]>(userIds.map((id) => [id, []]));
  if (userIds.length === 0) return tags;
  const rows =
    userIds.length === 1
      ? await tagsOfUser(db, { userId: userIds[0] })
      : await db.selectFrom("user_tag_members").select(["user_id", "tag_id"]).where("user_id", "in", userIds).orderBy("tag_id").execute();
  for (const r of rows) tags.get(r.user_id)?.push(r.tag_id);
  return tags;
}

/** Builds full User objects for rows, with four queries however many users there are. */
export async function userViews(
  db: Executor,
  rows: readonly UserRow[],
  /** Their MFA policies when the caller already read them (a submission's gate): not read again. */
  knownMfa?: ReadonlyMap<string, readonly MfaPolicyRow[]>,
): Promise<UserView[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  // One user is the common case (every activity's vote, get_user): precompiled queries, or
  // where each statement is a round trip, one statement for all four.
  const extras: UserExtras =
    ids.length === 1 && dialectOf(db).roundTrips
      ? await extrasOfUser(db, ids[0]!)
      : await Promise.all([
          ids.length === 1 ? keysOfUser(db, { userId: ids[0] }) : apiKeysOfUsers(db, ids),
          ids.length === 1 ? authenticatorsOfUser(db, { userId: ids[0] }) : authenticatorsOfUsers(db, ids),
          tagIdsByUser(db, ids),
          oauthProvidersOfUsers(db, ids),
        ]);
  const mfa = knownMfa && ids.every((id) => knownMfa.has(id)) ? knownMfa : await mfaPoliciesByUser(db, ids);
  return viewsOf(rows, extras, mfa);
}

/** User views of `rows` from their extras (read by userViews, or with another statement). */
export function viewsOf(
  rows: readonly UserRow[],
  [keys, passkeys, tagsBy, providers]: UserExtras,
  mfaPolicies: ReadonlyMap<string, readonly MfaPolicyRow[]>,
): UserView[] {
  const providersBy = groupBy(providers, (p) => p.user_id);
  const keysBy = groupBy(keys, (k) => k.user_id);
  const passkeysBy = groupBy(passkeys, (a) => a.user_id);
  return rows.map((u) => ({
    userId: u.id,
    userName: u.name,
    ...(u.email !== null ? { userEmail: u.email } : {}),
    ...(u.phone !== null ? { userPhoneNumber: u.phone } : {}),
    authenticators: (passkeysBy.get(u.id) ?? []).map(authenticatorView),
    apiKeys: (keysBy.get(u.id) ?? []).map(apiKeyView),
    userTags: tagsBy.get(u.id) ?? [],
    oauthProviders: (providersBy.get(u.id) ?? []).map(oauthProviderView),
    createdAt: timestampObject(u.created_at),
    updatedAt: timestampObject(u.updated_at),
    mfaPolicies: (mfaPolicies.get(u.id) ?? []).map(mfaPolicyView),
  }));
}

export async function listUserRows(db: Executor, organizationId: string): Promise<UserRow[]> {
  return db.selectFrom("users").selectAll().where("organization_id", "=", organizationId).orderBy("created_at").orderBy("id").execute();
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}
