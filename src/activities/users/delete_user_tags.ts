import { Type, type Static } from "@sinclair/typebox";
import { notFound } from "../../errors.ts";
import { Id, maxItems } from "../../schemas/common.ts";
import { lockUserTags } from "../../store/locks.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({ userTagIds: maxItems(Id("user tag"), "userTagIds", 100, 1) });

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization } = ctx;
  const userTagIds = [...new Set(p.userTagIds)];
  // Exclusively: tagging users (create_users, update_user) holds the tags shared, so no
  // member row can appear between the delete of a tag's members and the delete of the tag.
  const found = new Set(await lockUserTags(tx, organization.id, userTagIds));
  const missing = userTagIds.filter((id) => !found.has(id));
  if (missing.length) throw notFound(`no user tag ${missing.join(", ")} in organization ${organization.id}`);
  const members = await tx.selectFrom("user_tag_members").select("user_id").where("tag_id", "in", userTagIds).execute();
  await tx.deleteFrom("user_tag_members").where("tag_id", "in", userTagIds).execute();
  await tx.deleteFrom("user_tags").where("id", "in", userTagIds).execute();
  return { userTagIds, userIds: [...new Set(members.map((m) => m.user_id))] };
}

const Result = Type.Object({ userTagIds: Type.Array(Type.String()), userIds: Type.Array(Type.String()) });

export const deleteUserTags = defineActivity({
  type: "ACTIVITY_TYPE_DELETE_USER_TAGS",
  resource: "USER",
  action: "DELETE",
  kind: "DELETE_USER_TAGS",
  summary: "Delete user tags; the result lists the users that carried them.",
  params: Params,
  returns: Result,
  execute,
});
