import { Type } from "@sinclair/typebox";
import { notFound } from "../errors.ts";
import { Id, OrganizationId, Pagination, maxItems } from "../schemas/common.ts";
import { pageRequest } from "../store/pagination.ts";
import { findEndpoint } from "../store/webhooks.ts";
import { DELIVERY_STATUS, attemptsOf, deliveryView, eventsOf, listDeliveries, storedStatus } from "../store/webhook-deliveries.ts";
import { defineQuery } from "./define.ts";

const Status = Type.Union(
  Object.values(DELIVERY_STATUS).map((s) => Type.Literal(s)),
  { errorMessage: "must be a WEBHOOK_DELIVERY_STATUS_* value (PENDING, DELIVERED, FAILED, CANCELLED)" },
);

export const listWebhookDeliveries = defineQuery({
  op: "list_webhook_deliveries",
  summary:
    "List deliveries to the organization's webhook endpoints, newest first, each with its attempts (time, duration, HTTP status or error); filters endpointId, filterByStatus, eventId; cursor pagination.",
  request: Type.Object({
    organizationId: OrganizationId,
    endpointId: Type.Optional(Id("webhook endpoint")),
    eventId: Type.Optional(Id("webhook event")),
    filterByStatus: Type.Optional(maxItems(Status, "filterByStatus", 4)),
    paginationOptions: Type.Optional(Pagination),
  }),
  response: Type.Object({ webhookDeliveries: Type.Array(Type.Unknown()) }),
  async run({ db, organization }, req) {
    const page = pageRequest(req.paginationOptions);
    if (req.endpointId && !(await findEndpoint(db, organization.id, req.endpointId))) {
      throw notFound(`no webhook endpoint ${req.endpointId} in organization ${organization.id}`);
    }
    const rows = await listDeliveries(
      db,
      {
        organizationId: organization.id,
        endpointId: req.endpointId,
        eventId: req.eventId,
        statuses: req.filterByStatus?.map(storedStatus),
      },
      page,
    );
    const [attempts, events] = await Promise.all([
      attemptsOf(
        db,
        rows.map((r) => r.id),
      ),
      eventsOf(db, [...new Set(rows.map((r) => r.event_id))]),
    ]);
    return { webhookDeliveries: rows.map((r) => deliveryView(r, events.get(r.event_id), attempts.get(r.id) ?? [])) };
  },
});
