import { Type } from "@sinclair/typebox";
import { notFound } from "../errors.ts";
import { Id, OrganizationId } from "../schemas/common.ts";
import { ApiKey } from "../schemas/views.ts";
import { apiKeyView } from "../store/api-keys.ts";
import { findUser } from "../store/users.ts";
import { ownedBy } from "../store/util.ts";
import { defineQuery } from "./define.ts";

export const getApiKey = defineQuery({
  op: "get_api_key",
  summary: "Get one API key of the organization.",
  request: Type.Object({ organizationId: OrganizationId, apiKeyId: Id("api key") }),
  response: Type.Object({ apiKey: ApiKey }),
  async run({ db, organization }, req) {
    const row = ownedBy(await db.selectFrom("api_keys").selectAll().where("id", "=", req.apiKeyId).executeTakeFirst(), organization.id);
    if (!row) throw notFound(`no api key ${req.apiKeyId} in organization ${organization.id}`);
    return { apiKey: apiKeyView(row) };
  },
});

export const getApiKeys = defineQuery({
  op: "get_api_keys",
  summary: "List the organization's API keys, or one user's.",
  request: Type.Object({ organizationId: OrganizationId, userId: Type.Optional(Id("user")) }),
  response: Type.Object({ apiKeys: Type.Array(ApiKey) }),
  async run({ db, organization }, req) {
    let q = db.selectFrom("api_keys").selectAll().where("organization_id", "=", organization.id);
    if (req.userId) {
      if (!(await findUser(db, organization.id, req.userId))) {
        throw notFound(`no user ${req.userId} in organization ${organization.id}`);
      }
      q = q.where("user_id", "=", req.userId);
    }
    const rows = await q.orderBy("created_at").orderBy("id").execute();
    return { apiKeys: rows.map(apiKeyView) };
  },
});
