import { Type, type Static } from "@sinclair/typebox";
import { maxItems } from "../../schemas/common.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { addUsers } from "./new-users.ts";
import { MAX_USERS_PER_REQUEST, UserParams } from "./user-schemas.ts";

const Params = Type.Object({ users: maxItems(UserParams, "users", MAX_USERS_PER_REQUEST, 1) });

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const userIds = await addUsers(ctx.tx, ctx.organization.id, p.users, ctx.now, "parameters.users");
  return { userIds };
}

const common = {
  op: "create_users",
  resource: "USER",
  action: "CREATE",
  kind: "CREATE_USERS",
  result: "createUsersResult",
  params: Params,
  execute,
};

export const createUsersV4 = defineActivity({
  ...common,
  type: "ACTIVITY_TYPE_CREATE_USERS_V4",
  intent: "createUsersIntentV4",
  summary: "Create users in an organization, with their API keys and tags.",
});

export const createUsersV3 = defineActivity({
  ...common,
  type: "ACTIVITY_TYPE_CREATE_USERS_V3",
  intent: "createUsersIntentV3",
  summary: "Create users (the version older clients send).",
});
