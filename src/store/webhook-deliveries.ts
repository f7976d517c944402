// Webhook deliveries as operators see them: listed with their attempts, and put back in the
// queue (redelivered).
import { sql } from "kysely";
import type { DeliveryStatus, Executor, WebhookDeliveriesTable, WebhookDeliveryAttemptsTable } from "./schema.ts";
import { page, unknownCursor, type PageRequest } from "./pagination.ts";
import { timestampObject } from "./util.ts";

/** Stored status ↔ the API's enum. */
export const DELIVERY_STATUS = {
  pending: "WEBHOOK_DELIVERY_STATUS_PENDING",
  delivered: "WEBHOOK_DELIVERY_STATUS_DELIVERED",
  failed: "WEBHOOK_DELIVERY_STATUS_FAILED",
  cancelled: "WEBHOOK_DELIVERY_STATUS_CANCELLED",
} as const satisfies Record<DeliveryStatus, string>;
export type StoredDeliveryStatus = DeliveryStatus;
export const storedStatus = (api: string): StoredDeliveryStatus =>
  (Object.entries(DELIVERY_STATUS).find(([, v]) => v === api)?.[0] ?? "pending") as StoredDeliveryStatus;

export interface DeliveryFilter {
  /** Deliveries to this organization's endpoints. */
  organizationId: string;
  endpointId?: string;
  statuses?: StoredDeliveryStatus[];
  eventId?: string;
}

function filtered(db: Executor, f: DeliveryFilter) {
  let q = db
    .selectFrom("webhook_deliveries")
    .selectAll()
    .where("endpoint_id", "in", db.selectFrom("webhook_endpoints").select("id").where("organization_id", "=", f.organizationId));
  if (f.endpointId) q = q.where("endpoint_id", "=", f.endpointId);
  if (f.statuses?.length) q = q.where("status", "in", f.statuses);
  if (f.eventId) q = q.where("event_id", "=", f.eventId);
  return q;
}

/** Newest first, paged like every list. */
export async function listDeliveries(db: Executor, f: DeliveryFilter, req: PageRequest): Promise<WebhookDeliveriesTable[]> {
  const cursorId = req.before ?? req.after;
  let cursor;
  if (cursorId) {
    cursor = await filtered(db, f).clearSelect().select(["created_at", "id"]).where("id", "=", cursorId).executeTakeFirst();
    if (!cursor) unknownCursor(cursorId);
  }
  return page(filtered(db, f), req, cursor, true);
}

/** The deliveries' attempts, oldest first, by delivery id. */
export async function attemptsOf(db: Executor, deliveryIds: string[]): Promise<Map<string, WebhookDeliveryAttemptsTable[]>> {
  const out = new Map<string, WebhookDeliveryAttemptsTable[]>(deliveryIds.map((id) => [id, []]));
  if (deliveryIds.length === 0) return out;
  const rows = await db.selectFrom("webhook_delivery_attempts").selectAll().where("delivery_id", "in", deliveryIds).orderBy("attempt").execute();
  for (const r of rows) out.get(r.delivery_id)?.push(r);
  return out;
}

export async function eventsOf(db: Executor, eventIds: string[]) {
  if (eventIds.length === 0) return new Map<string, { id: string; activity_id: string; event_type: string; organization_id: string }>();
  const rows = await db.selectFrom("webhook_events").select(["id", "activity_id", "event_type", "organization_id"]).where("id", "in", eventIds).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

export function deliveryView(
  d: WebhookDeliveriesTable,
  event: { activity_id: string; event_type: string; organization_id: string } | undefined,
  attempts: WebhookDeliveryAttemptsTable[],
) {
  return {
    deliveryId: d.id,
    endpointId: d.endpoint_id,
    eventId: d.event_id,
    eventType: event?.event_type,
    activityId: event?.activity_id,
    /** The organization the event happened in (the endpoint's, or one below it). */
    eventOrganizationId: event?.organization_id,
    status: DELIVERY_STATUS[d.status],
    attemptCount: d.attempts,
    ...(d.status === "pending" ? { nextAttemptAt: timestampObject(d.next_attempt_at) } : {}),
    ...(d.last_status !== null ? { lastHttpStatus: d.last_status } : {}),
    ...(d.last_error !== null ? { lastError: d.last_error } : {}),
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      startedAt: timestampObject(a.started_at),
      durationMs: a.duration_ms,
      ...(a.status !== null ? { httpStatus: a.status } : {}),
      ...(a.error !== null ? { error: a.error } : {}),
    })),
    createdAt: timestampObject(d.created_at),
    updatedAt: timestampObject(d.updated_at),
  };
}

/**
 * Puts deliveries back at the head of their endpoints' queues, due now, with a fresh retry
 * schedule (attempts keep counting, so the attempt log stays whole). The same event id is
 * sent again.
 */
export async function requeueDeliveries(db: Executor, ids: string[], now: number): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable("webhook_deliveries")
    .set({ status: "pending", next_attempt_at: now, lease_until: 0, schedule_offset: sql<number>`attempts`, updated_at: now })
    .where("id", "in", ids)
    .where("status", "!=", "pending")
    .execute();
}
