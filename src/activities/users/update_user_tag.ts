// update_user_tag (SDK type v1UpdateUserTagIntent): rename a user tag, and add it to or remove
// it from users. Lock order: the users it is added to first (shared, as create_user_tag: none
// is deleted before it is tagged; update_user, which holds its user exclusively and then the
// tags shared, is waited for before this takes the tag), then the tag exclusively (as
// delete_user_tags: its members cannot change under a concurrent delete or a second update).
import { Type, type Static } from "@sinclair/typebox";
import { alreadyExists, notFound } from "../../errors.ts";
import { Id, Name, maxItems } from "../../schemas/common.ts";
import { lockUserTags, lockUsers } from "../../store/locks.ts";
import { isUniqueViolation } from "../../store/util.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  userTagId: Id("user tag"),
  newUserTagName: Type.Optional(Name("newUserTagName")),
  addUserIds: maxItems(Id("user"), "addUserIds", 100),
  removeUserIds: maxItems(Id("user"), "removeUserIds", 100),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, now } = ctx;
  const add = [...new Set(p.addUserIds)];
  const found = new Set(await lockUsers(tx, organization.id, add, "shared"));
  const [tag] = await lockUserTags(tx, organization.id, [p.userTagId]);
  if (!tag) throw notFound(`no user tag ${p.userTagId} in organization ${organization.id}`);
  const missing = add.filter((id) => !found.has(id));
  if (missing.length) throw notFound(`parameters.addUserIds: no user ${missing.join(", ")} in organization ${organization.id}`);
  try {
    await tx
      .updateTable("user_tags")
      .set({ updated_at: now, ...(p.newUserTagName !== undefined ? { name: p.newUserTagName } : {}) })
      .where("id", "=", tag)
      .execute();
  } catch (err) {
    if (isUniqueViolation(err, "user_tags")) throw alreadyExists(`a user tag named ${JSON.stringify(p.newUserTagName)} already exists`);
    throw err;
  }
  // Removing a user the tag does not carry (or that does not exist) changes nothing, as for
  // update_private_key_tag.
  if (p.removeUserIds.length) {
    await tx
      .deleteFrom("user_tag_members")
      .where("tag_id", "=", tag)
      .where("user_id", "in", [...new Set(p.removeUserIds)])
      .execute();
  }
  if (add.length) {
    const have = new Set(
      (await tx.selectFrom("user_tag_members").select("user_id").where("tag_id", "=", tag).where("user_id", "in", add).execute()).map(
        (r) => r.user_id,
      ),
    );
    const rows = add.filter((id) => !have.has(id)).map((user_id) => ({ tag_id: tag, user_id }));
    if (rows.length) await tx.insertInto("user_tag_members").values(rows).execute();
  }
  return { userTagId: tag };
}

export const updateUserTag = defineActivity({
  type: "ACTIVITY_TYPE_UPDATE_USER_TAG",
  resource: "USER",
  action: "UPDATE",
  kind: "UPDATE_USER_TAG",
  summary: "Rename a user tag, and add it to or remove it from users.",
  params: Params,
  returns: Type.Object({ userTagId: Type.String() }),
  execute,
});
