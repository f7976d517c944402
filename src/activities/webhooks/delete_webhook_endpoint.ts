import { Type } from "@sinclair/typebox";
import { notFound } from "../../errors.ts";
import { Id } from "../../schemas/common.ts";
import { bumpWebhookVersion, cancelPendingDeliveries, findEndpoint } from "../../store/webhooks.ts";
import { defineActivity } from "../define.ts";

const Result = Type.Object({ endpointId: Type.String() });

export const deleteWebhookEndpoint = defineActivity({
  type: "ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT",
  resource: "WEBHOOK_ENDPOINT",
  action: "DELETE",
  kind: "DELETE_WEBHOOK_ENDPOINT",
  summary: "Delete a webhook endpoint and its subscriptions; its pending deliveries are cancelled.",
  params: Type.Object({ endpointId: Id("webhook endpoint") }),
  returns: Result,
  policyParams: (p) => ({ endpoint_id: p.endpointId }),
  async execute({ tx, organization, now }, p) {
    const current = await findEndpoint(tx, organization.id, p.endpointId);
    if (!current) throw notFound(`no webhook endpoint ${p.endpointId} in organization ${organization.id}`);
    await cancelPendingDeliveries(tx, current.id, now);
    await tx.deleteFrom("webhook_endpoints").where("id", "=", current.id).execute();
    await bumpWebhookVersion(tx);
    return { endpointId: current.id };
  },
});
