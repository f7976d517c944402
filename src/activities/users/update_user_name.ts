import { Type, type Static } from "@sinclair/typebox";
import { notFound } from "../../errors.ts";
import { Id, Name } from "../../schemas/common.ts";
import { lockUsers } from "../../store/locks.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  userId: Id("user"),
  userName: Name("userName"),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  // The user's lock: a user deleted meanwhile is a 404, never a silent success.
  const [userId] = await lockUsers(ctx.tx, ctx.organization.id, [p.userId]);
  if (!userId) throw notFound(`no user ${p.userId} in organization ${ctx.organization.id}`);
  await ctx.tx.updateTable("users").set({ name: p.userName, updated_at: ctx.now }).where("id", "=", userId).execute();
  return { userId };
}

export const updateUserName = defineActivity({
  type: "ACTIVITY_TYPE_UPDATE_USER_NAME",
  resource: "USER",
  action: "UPDATE",
  kind: "UPDATE_USER_NAME",
  summary: "Rename a user.",
  params: Params,
  returns: Type.Object({ userId: Type.String() }),
  execute,
});
