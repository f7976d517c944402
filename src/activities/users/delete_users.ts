import { Type, type Static } from "@sinclair/typebox";
import { notFound, precondition } from "../../errors.ts";
import { Id, maxItems } from "../../schemas/common.ts";
import { lockUsers } from "../../store/locks.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({ userIds: maxItems(Id("user"), "userIds", 100, 1) });

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization } = ctx;
  const userIds = [...new Set(p.userIds)];
  // Exclusively: whoever references these users waits for us or we for them —
  // update_root_quorum and create_user_tag hold them shared, create_api_keys and update_user
  // exclusively — so the quorum check and the deletes below see their committed rows. Without
  // the lock a racing writer's row would reference a deleted user: a foreign-key failure (500),
  // or a root quorum member that no longer exists.
  const locked = new Set(await lockUsers(tx, organization.id, userIds));
  const missing = userIds.filter((id) => !locked.has(id));
  if (missing.length) throw notFound(`no user ${missing.join(", ")} in organization ${organization.id}`);
  const roots = await tx
    .selectFrom("root_quorum_members")
    .select("user_id")
    .where("organization_id", "=", organization.id)
    .where("user_id", "in", userIds)
    .execute();
  if (roots.length) {
    // Deleting a root user could leave the organization with nobody able to act.
    throw precondition(`user ${roots.map((r) => r.user_id).join(", ")} is in the root quorum; remove it from the quorum first`);
  }
  await tx.deleteFrom("user_tag_members").where("user_id", "in", userIds).execute();
  await tx.deleteFrom("api_keys").where("user_id", "in", userIds).execute();
  await tx.deleteFrom("authenticators").where("user_id", "in", userIds).execute();
  await tx.deleteFrom("oauth_providers").where("user_id", "in", userIds).execute();
  await tx.deleteFrom("users").where("id", "in", userIds).execute();
  return { userIds };
}

const Result = Type.Object({ userIds: Type.Array(Type.String()) });

export const deleteUsers = defineActivity({
  type: "ACTIVITY_TYPE_DELETE_USERS",
  resource: "USER",
  action: "DELETE",
  kind: "DELETE_USERS",
  summary: "Delete users and their credentials. Root quorum members cannot be deleted.",
  params: Params,
  returns: Result,
  policyParams: (p) => ({ user_ids: p.userIds }),
  execute,
});
