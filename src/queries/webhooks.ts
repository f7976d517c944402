import { Type } from "@sinclair/typebox";
import { OrganizationId } from "../schemas/common.ts";
import { endpointView } from "../store/webhooks.ts";
import { defineQuery } from "./define.ts";

export const listWebhookEndpoints = defineQuery({
  op: "list_webhook_endpoints",
  summary: "List an organization's webhook endpoints, oldest first.",
  request: Type.Object({ organizationId: OrganizationId }),
  response: Type.Object({ webhookEndpoints: Type.Array(Type.Unknown()) }),
  async run({ db, organization }) {
    const rows = await db
      .selectFrom("webhook_endpoints")
      .selectAll()
      .where("organization_id", "=", organization.id)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return { webhookEndpoints: rows.map(endpointView) };
  },
});
