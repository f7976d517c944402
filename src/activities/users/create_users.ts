import { Type, type Static } from "@sinclair/typebox";
import { maxItems } from "../../schemas/common.ts";
import { defineActivity, type ExecuteContext, type PrepareContext } from "../define.ts";
import { prepareUsersProviders, type PreparedIdentity } from "../oauth/provider-identities.ts";
import { addUsers, keysOfUsers } from "./new-users.ts";
import { organizationsAbove, refuseAncestorKeys } from "../credentials/ancestor-keys.ts";
import { lockUserTags } from "../../store/locks.ts";
import { MAX_USERS_PER_REQUEST, UserParams } from "./user-schemas.ts";

const Params = Type.Object({ users: maxItems(UserParams, "users", MAX_USERS_PER_REQUEST, 1) });

async function execute(ctx: ExecuteContext<PreparedIdentity[][]>, p: Static<typeof Params>) {
  // Every user's tags are locked (shared) at once, in id order: tagging user by user would
  // take them in request order and could deadlock against a delete_user_tags of several.
  // Each user's tags are then checked (with its own field path) as it is created.
  await lockUserTags(ctx.tx, ctx.organization.id, [...new Set(p.users.flatMap((u) => u.userTags ?? []))], "shared");
  await refuseAncestorKeys(
    ctx.tx,
    await organizationsAbove(ctx.tx, ctx.organization.id, ctx.chains),
    ctx.actor.organizationId,
    keysOfUsers(p.users, "parameters.users"),
  );
  const userIds = await addUsers(
    ctx.tx,
    ctx.organization.id,
    p.users,
    ctx.now,
    "parameters.users",
    ctx.services.logins.webauthn,
    ctx.prepared,
  );
  return { userIds };
}

const Result = Type.Object({ userIds: Type.Array(Type.String()) });

const common = {
  resource: "USER",
  action: "CREATE",
  kind: "CREATE_USERS",
  params: Params,
  returns: Result,
  // Every OAuth provider's token verified outside the transaction (a trusted issuer's JWKS).
  prepare: (ctx: PrepareContext, p: Static<typeof Params>) => prepareUsersProviders(ctx, p.users, "parameters.users"),
  execute,
};

export const createUsersV4 = defineActivity({
  ...common,
  type: "ACTIVITY_TYPE_CREATE_USERS_V4",
  summary: "Create users in an organization, with their API keys and tags.",
});

export const createUsersV3 = defineActivity({
  ...common,
  type: "ACTIVITY_TYPE_CREATE_USERS_V3",
  summary: "Create users (the version older clients send).",
});
