// create_api_only_users (docs/organizations.md §2.1): users with a name, an optional email,
// tags and P-256 API keys, and no passkeys or OAuth providers. They are ordinary users once
// created, so this is create_users' machinery (new-users.ts) with the other credential lists
// empty.
import { Type, type Static } from "@sinclair/typebox";
import { ApiKeyParamsV1, Email, Id, Name, maxItems } from "../../schemas/common.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { addUsers, keysOfUsers, type NewUser } from "./new-users.ts";
import { organizationsAbove, refuseAncestorKeys } from "../credentials/ancestor-keys.ts";
import { lockUserTags } from "../../store/locks.ts";
import { MAX_KEYS_PER_REQUEST, MAX_USERS_PER_REQUEST } from "./user-schemas.ts";

/** SDK type `v1ApiOnlyUserParams`; its keys are `apiApiKeyParams` (no curveType: P-256). */
const ApiOnlyUserParams = Type.Object({
  userName: Name("userName"),
  userEmail: Type.Optional(Email),
  userTags: maxItems(Id("user tag"), "userTags", 100),
  apiKeys: maxItems(ApiKeyParamsV1, "apiKeys", MAX_KEYS_PER_REQUEST),
});

const Params = Type.Object({ apiOnlyUsers: maxItems(ApiOnlyUserParams, "apiOnlyUsers", MAX_USERS_PER_REQUEST, 1) });

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const users: NewUser[] = p.apiOnlyUsers.map((u) => ({
    userName: u.userName,
    ...(u.userEmail !== undefined ? { userEmail: u.userEmail } : {}),
    apiKeys: u.apiKeys,
    authenticators: [],
    oauthProviders: [],
    userTags: u.userTags,
  }));
  // As create_users: every tag locked (shared) at once in id order, then each user's checked.
  await lockUserTags(ctx.tx, ctx.organization.id, [...new Set(users.flatMap((u) => u.userTags ?? []))], "shared");
  await refuseAncestorKeys(
    ctx.tx,
    await organizationsAbove(ctx.tx, ctx.organization.id, ctx.chains),
    ctx.actor.organizationId,
    keysOfUsers(users, "parameters.apiOnlyUsers"),
  );
  const userIds = await addUsers(ctx.tx, ctx.organization.id, users, ctx.now, "parameters.apiOnlyUsers");
  return { userIds };
}

export const createApiOnlyUsers = defineActivity({
  type: "ACTIVITY_TYPE_CREATE_API_ONLY_USERS",
  resource: "USER",
  action: "CREATE",
  kind: "CREATE_API_ONLY_USERS",
  params: Params,
  returns: Type.Object({ userIds: Type.Array(Type.String()) }),
  execute,
  summary: "Create users holding only API keys (P-256), with optional email and tags.",
});
