import { Type, type Static } from "@sinclair/typebox";
import { alreadyExists, notFound } from "../../errors.ts";
import { Id, Name, maxItems } from "../../schemas/common.ts";
import { isUniqueViolation, newId } from "../../store/util.ts";
import { lockUsers } from "../../store/locks.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  userTagName: Name("userTagName"),
  userIds: maxItems(Id("user"), "userIds", 100),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, now } = ctx;
  const userIds = [...new Set(p.userIds)];
  // Shared: a user found here is still there when tagged (delete_users locks it exclusively),
  // while tag creations for the same users don't wait on each other.
  const found = new Set(await lockUsers(tx, organization.id, userIds, "shared"));
  const missing = userIds.filter((id) => !found.has(id));
  if (missing.length) throw notFound(`no user ${missing.join(", ")} in organization ${organization.id}`);
  const userTagId = newId();
  try {
    await tx
      .insertInto("user_tags")
      .values({ id: userTagId, organization_id: organization.id, name: p.userTagName, created_at: now, updated_at: now })
      .execute();
  } catch (err) {
    if (isUniqueViolation(err, "user_tags")) throw alreadyExists(`a user tag named ${JSON.stringify(p.userTagName)} already exists`);
    throw err;
  }
  if (userIds.length) {
    await tx
      .insertInto("user_tag_members")
      .values(userIds.map((user_id) => ({ tag_id: userTagId, user_id })))
      .execute();
  }
  return { userTagId, userIds };
}

const Result = Type.Object({ userTagId: Type.String(), userIds: Type.Array(Type.String()) });

export const createUserTag = defineActivity({
  type: "ACTIVITY_TYPE_CREATE_USER_TAG",
  resource: "USER",
  action: "CREATE",
  kind: "CREATE_USER_TAG",
  summary: "Create a user tag (unique name per organization) and apply it to users.",
  params: Params,
  returns: Result,
  execute,
});
