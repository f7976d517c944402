// delete_oauth_providers (docs/oauth.md §6.2): detach OAuth identities from a user of the
// organization. Every id must be one of that user's providers, else nothing is removed.
import { Type } from "@sinclair/typebox";
import { notFound } from "../../errors.ts";
import { Id, maxItems } from "../../schemas/common.ts";
import { lockUsers } from "../../store/locks.ts";
import { detachProviders } from "../../store/oauth-providers.ts";
import { defineActivity, type Actor } from "../define.ts";

const Params = Type.Object({
  userId: Id("user"),
  providerIds: maxItems(Id("oauth provider"), "providerIds", 100, 1),
});

export const deleteOauthProviders = defineActivity({
  type: "ACTIVITY_TYPE_DELETE_OAUTH_PROVIDERS",
  resource: "CREDENTIAL",
  action: "DELETE",
  kind: "DELETE_OAUTH_PROVIDERS",
  summary: "Detach OAuth (OIDC) identities from a user.",
  params: Params,
  returns: Type.Object({ providerIds: Type.Array(Type.String()) }),
  // docs/policy-language.md §6.8: a user removing their own sign-in method.
  implicitlyAllowed: (p, actor: Actor) => p.userId === actor.userId,
  async execute(ctx, p) {
    const [userId] = await lockUsers(ctx.tx, ctx.organization.id, [p.userId]);
    if (!userId) throw notFound(`parameters.userId: no user ${p.userId} in organization ${ctx.organization.id}`);
    const { removed, missing } = await detachProviders(ctx.tx, ctx.organization.id, userId, p.providerIds);
    if (missing.length > 0) throw notFound(`parameters.providerIds: no OAuth provider ${missing.join(", ")} on user ${userId}`);
    return { providerIds: removed };
  },
});
