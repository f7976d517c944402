// Operators' way back from an outage: failed (or cancelled, or even delivered) deliveries are
// put back at the head of their endpoint's queue with a fresh retry schedule; the receiver
// gets the same event id and body again (signed afresh).
import { Type, type Static } from "@sinclair/typebox";
import { invalid, notFound, precondition } from "../../errors.ts";
import { Id } from "../../schemas/common.ts";
import { findEndpoint } from "../../store/webhooks.ts";
import { requeueDeliveries } from "../../store/webhook-deliveries.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

/** Most deliveries one activity redelivers (by endpoint: its oldest failed ones). */
export const MAX_REDELIVERIES = 1000;

const Params = Type.Object({
  /** These deliveries (each to an endpoint of this organization, none pending). */
  deliveryIds: Type.Optional(
    Type.Array(Id("webhook delivery"), {
      minItems: 1,
      maxItems: 100,
      uniqueItems: true,
      errorMessage: "deliveryIds must hold 1 to 100 distinct delivery ids",
    }),
  ),
  /** Or: every failed delivery of this endpoint (oldest first, at most 1000). */
  endpointId: Type.Optional(Id("webhook endpoint")),
});
type P = Static<typeof Params>;

async function execute(ctx: ExecuteContext, p: P) {
  const { tx, organization, now } = ctx;
  let ids: string[];
  if (p.endpointId) {
    const endpoint = await findEndpoint(tx, organization.id, p.endpointId);
    if (!endpoint) throw notFound(`no webhook endpoint ${p.endpointId} in organization ${organization.id}`);
    if (endpoint.is_active !== 1)
      throw precondition(`webhook endpoint ${endpoint.id} is not active; re-enable it (update_webhook_endpoint isActive: true) first`);
    const rows = await tx
      .selectFrom("webhook_deliveries")
      .select("id")
      .where("endpoint_id", "=", endpoint.id)
      .where("status", "=", "failed")
      .orderBy("id")
      .limit(MAX_REDELIVERIES)
      .execute();
    ids = rows.map((r) => r.id);
  } else {
    ids = p.deliveryIds!;
    const rows = await tx
      .selectFrom("webhook_deliveries")
      .innerJoin("webhook_endpoints", "webhook_endpoints.id", "webhook_deliveries.endpoint_id")
      .select([
        "webhook_deliveries.id as id",
        "webhook_deliveries.status as status",
        "webhook_endpoints.is_active as is_active",
        "webhook_endpoints.id as endpoint_id",
      ])
      .where("webhook_deliveries.id", "in", ids)
      .where("webhook_endpoints.organization_id", "=", organization.id)
      .execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    ids.forEach((id, i) => {
      const row = byId.get(id);
      if (!row) throw notFound(`no webhook delivery ${id} to an endpoint of organization ${organization.id}`);
      if (row.status === "pending") {
        throw invalid(`webhook delivery ${id} is still pending`, [
          { field: `parameters.deliveryIds[${i}]`, description: "is pending: it will be attempted anyway" },
        ]);
      }
      if (row.is_active !== 1)
        throw precondition(`webhook endpoint ${row.endpoint_id} of delivery ${id} is not active; re-enable it first`);
    });
  }
  await requeueDeliveries(tx, ids, now);
  return { deliveryIds: ids };
}

const Result = Type.Object({ deliveryIds: Type.Array(Type.String()) });

export const redeliverWebhookDeliveries = defineActivity({
  type: "ACTIVITY_TYPE_REDELIVER_WEBHOOK_DELIVERIES",
  resource: "WEBHOOK_ENDPOINT",
  action: "UPDATE",
  kind: "REDELIVER_WEBHOOK_DELIVERIES",
  summary:
    "Send webhook deliveries again (same event id and body, fresh signature and retry schedule): the given deliveryIds, or every failed delivery of endpointId. The endpoint must be active.",
  params: Params,
  returns: Result,
  policyParams: (p) => ({ endpoint_id: p.endpointId ?? "" }),
  check(p) {
    if ((p.deliveryIds === undefined) === (p.endpointId === undefined)) {
      throw invalid("give either deliveryIds or endpointId", [
        { field: "parameters", description: "exactly one of deliveryIds, endpointId" },
      ]);
    }
  },
  execute,
});
