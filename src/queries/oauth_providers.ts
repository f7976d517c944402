// get_oauth_providers (docs/oauth.md §6.2): the OAuth identities of a user, or of every user of
// the organization when no userId is given; oldest first.
import { Type } from "@sinclair/typebox";
import { notFound } from "../errors.ts";
import { Id, OrganizationId } from "../schemas/common.ts";
import { findUser } from "../store/users.ts";
import { OauthProviderSchema, oauthProviderView, oauthProvidersOfOrganization, oauthProvidersOfUsers } from "../store/oauth-providers.ts";
import { defineQuery } from "./define.ts";

export const getOauthProviders = defineQuery({
  op: "get_oauth_providers",
  summary: "The OAuth (OIDC) providers of a user, or of all users of the organization without userId; oldest first.",
  request: Type.Object({ organizationId: OrganizationId, userId: Type.Optional(Id("user")) }),
  response: Type.Object({ oauthProviders: Type.Array(OauthProviderSchema) }),
  async run({ db, organization }, req) {
    if (req.userId === undefined)
      return { oauthProviders: (await oauthProvidersOfOrganization(db, organization.id)).map(oauthProviderView) };
    if (!(await findUser(db, organization.id, req.userId))) throw notFound(`no user ${req.userId} in organization ${organization.id}`);
    return { oauthProviders: (await oauthProvidersOfUsers(db, [req.userId])).map(oauthProviderView) };
  },
});
