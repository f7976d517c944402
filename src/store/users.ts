// Users, read back in the SDK's full User shape.
import type { Executor, UsersTable } from "./schema.ts";
import { apiKeysOfUsers, apiKeyView, type ApiKeyView } from "./api-keys.ts";
import { timestampObject } from "./util.ts";
import { precompiled } from "./precompiled.ts";

export type UserRow = UsersTable;

export interface UserView {
  userId: string;
  userName: string;
  userEmail?: string;
  userPhoneNumber?: string;
  authenticators: unknown[];
  apiKeys: ApiKeyView[];
  userTags: string[];
  oauthProviders: unknown[];
  createdAt: { seconds: string; nanos: string };
  updatedAt: { seconds: string; nanos: string };
}

export async function findUser(db: Executor, organizationId: string, userId: string): Promise<UserRow | undefined> {
  return db
    .selectFrom("users")
    .selectAll()
    .where("id", "=", userId)
    .where("organization_id", "=", organizationId)
    .executeTakeFirst();
}

/** The ids among `userIds` that are not users of the organization. */
export async function missingUsers(db: Executor, organizationId: string, userIds: readonly string[]): Promise<string[]> {
  if (userIds.length === 0) return [];
  const found = await db
    .selectFrom("users")
    .select("id")
    .where("organization_id", "=", organizationId)
    .where("id", "in", userIds)
    .execute();
  const have = new Set(found.map((r) => r.id));
  return userIds.filter((id) => !have.has(id));
}

export async function insertUser(db: Executor, row: UserRow): Promise<void> {
  await db.insertInto("users").values(row).execute();
}

const keysOfUser = precompiled(["userId"], (db, v) =>
  db.selectFrom("api_keys").selectAll().where("user_id", "=", v.userId).orderBy("created_at").orderBy("id"),
);
const tagsOfUser = precompiled(["userId"], (db, v) =>
  db.selectFrom("user_tag_members").select(["user_id", "tag_id"]).where("user_id", "=", v.userId).orderBy("tag_id"),
);

/** Builds full User objects for rows, with two queries however many users there are. */
export async function userViews(db: Executor, rows: readonly UserRow[]): Promise<UserView[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  // One user is the common case (every activity's vote, get_user): precompiled queries.
  const [keys, tags] =
    ids.length === 1
      ? await Promise.all([keysOfUser(db, { userId: ids[0] }), tagsOfUser(db, { userId: ids[0] })])
      : await Promise.all([
          apiKeysOfUsers(db, ids),
          db.selectFrom("user_tag_members").select(["user_id", "tag_id"]).where("user_id", "in", ids).orderBy("tag_id").execute(),
        ]);
  const keysBy = groupBy(keys, (k) => k.user_id);
  const tagsBy = groupBy(tags, (t) => t.user_id);
  return rows.map((u) => ({
    userId: u.id,
    userName: u.name,
    ...(u.email !== null ? { userEmail: u.email } : {}),
    ...(u.phone !== null ? { userPhoneNumber: u.phone } : {}),
    authenticators: [],
    apiKeys: (keysBy.get(u.id) ?? []).map(apiKeyView),
    userTags: (tagsBy.get(u.id) ?? []).map((t) => t.tag_id),
    oauthProviders: [],
    createdAt: timestampObject(u.created_at),
    updatedAt: timestampObject(u.updated_at),
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
