// Webhook deliveries: as operators see them (listed with their attempts, put back in the
// queue), and the dispatcher's reads and writes — fan-out, claims, what a lane needs
// (docs/webhooks.md §5.2). Outcomes are recorded by src/webhooks/delivery-records.ts.
import { sql } from "kysely";
import type { DeliveryStatus, Executor, WebhookDeliveriesTable, WebhookDeliveryAttemptsTable } from "./schema.ts";
import { dialectOf } from "./engines.ts";
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
  const rows = await db
    .selectFrom("webhook_delivery_attempts")
    .selectAll()
    .where("delivery_id", "in", deliveryIds)
    .orderBy("attempt")
    .execute();
  for (const r of rows) out.get(r.delivery_id)?.push(r);
  return out;
}

export async function eventsOf(db: Executor, eventIds: string[]) {
  if (eventIds.length === 0) return new Map<string, { id: string; activity_id: string; event_type: string; organization_id: string }>();
  const rows = await db
    .selectFrom("webhook_events")
    .select(["id", "activity_id", "event_type", "organization_id"])
    .where("id", "in", eventIds)
    .execute();
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

// ---------------------------------------------------------------- the dispatcher's queries

/** For tests and operators: deliveries of an event. */
export async function deliveriesOf(db: Executor, eventId: string) {
  return db.selectFrom("webhook_deliveries").selectAll().where("event_id", "=", eventId).execute();
}

/** Active endpoints, all organizations. */
export async function countActiveEndpoints(db: Executor): Promise<number> {
  const row = await db
    .selectFrom("webhook_endpoints")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .where("is_active", "=", 1)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Whether any event still waits for its deliveries (a plain read: no transaction needed). */
export async function anyEventToFanOut(db: Executor): Promise<boolean> {
  return (await db.selectFrom("webhook_events").select("id").where("fanned_out", "=", 0).limit(1).executeTakeFirst()) !== undefined;
}

/** Up to `limit` events without deliveries yet, in id order; PostgreSQL: locked, skipping those another server holds. */
export async function eventsToFanOut(tx: Executor, limit: number): Promise<{ id: string; organization_id: string }[]> {
  const q = tx.selectFrom("webhook_events").select(["id", "organization_id"]).where("fanned_out", "=", 0).orderBy("id").limit(limit);
  return dialectOf(tx).forUpdateSkipLocked(q).execute();
}

/** Active endpoints, with what they subscribe to (webhooks.ts subscribes: who listens to activity updates). */
export async function activeEndpoints(tx: Executor): Promise<{ id: string; organization_id: string; subscriptions: string }[]> {
  return tx.selectFrom("webhook_endpoints").select(["id", "organization_id", "subscriptions"]).where("is_active", "=", 1).execute();
}

/** New pending deliveries, due `now`; one per (event, endpoint) whatever happens twice. */
export async function insertDeliveries(
  tx: Executor,
  pairs: readonly { id: string; event_id: string; endpoint_id: string }[],
  now: number,
): Promise<void> {
  const rows = pairs.map((p) => ({
    ...p,
    status: "pending" as const,
    attempts: 0,
    schedule_offset: 0,
    next_attempt_at: now,
    lease_until: 0,
    last_status: null,
    last_error: null,
    created_at: now,
    updated_at: now,
  }));
  for (let i = 0; i < rows.length; i += 200) {
    await tx
      .insertInto("webhook_deliveries")
      .values(rows.slice(i, i + 200))
      .onConflict((oc) => oc.columns(["event_id", "endpoint_id"]).doNothing())
      .execute();
  }
}

export async function markFannedOut(tx: Executor, eventIds: readonly string[]): Promise<void> {
  await tx.updateTable("webhook_events").set({ fanned_out: 1 }).where("id", "in", eventIds).execute();
}

/** A pending delivery as a claim sees it. */
export interface QueuedDelivery {
  id: string;
  event_id: string;
  endpoint_id: string;
  attempts: number;
  schedule_offset: number;
  next_attempt_at: number;
  lease_until: number;
}

/**
 * Due heads of the active endpoints' queues, longest-waiting first: one index probe per
 * active endpoint, whatever the backlog.
 */
export async function dueHeads(db: Executor, now: number, limit: number): Promise<QueuedDelivery[]> {
  const { rows } = await sql<QueuedDelivery>`
    SELECT d.id, d.event_id, d.endpoint_id, d.attempts, d.schedule_offset, d.next_attempt_at, d.lease_until
    FROM webhook_endpoints e
    JOIN webhook_deliveries d ON d.id = (
      SELECT h.id FROM webhook_deliveries h WHERE h.endpoint_id = e.id AND h.status = 'pending' ORDER BY h.id LIMIT 1
    )
    WHERE e.is_active = 1 AND d.next_attempt_at <= ${now} AND d.lease_until <= ${now}
    ORDER BY d.next_attempt_at, d.id
    LIMIT ${limit}`.execute(db);
  return rows;
}

/** The first `n` pending deliveries of each endpoint's queue, in one statement (an index range each). */
export async function queueFronts(db: Executor, endpointIds: readonly string[], n: number): Promise<QueuedDelivery[]> {
  const parts = endpointIds.map(
    (id, i) => sql`SELECT * FROM (
      SELECT id, event_id, endpoint_id, attempts, schedule_offset, next_attempt_at, lease_until FROM webhook_deliveries
      WHERE endpoint_id = ${id} AND status = 'pending' ORDER BY id LIMIT ${n}) ${sql.ref(`q${i}`)}`,
  );
  const { rows } = await sql<QueuedDelivery>`${sql.join(parts, sql` UNION ALL `)}`.execute(db);
  return rows;
}

/**
 * The active endpoints among `ids` whose rows this transaction could lock (FOR UPDATE SKIP
 * LOCKED): another server claiming for an endpoint holds its row. Call only where rows are
 * locked (dialect.locksRows).
 */
export async function lockFreeEndpoints(tx: Executor, ids: readonly string[]): Promise<Set<string>> {
  const q = tx.selectFrom("webhook_endpoints").select("id").where("id", "in", ids).where("is_active", "=", 1);
  return new Set((await dialectOf(tx).forUpdateSkipLocked(q).execute()).map((r) => r.id));
}

/**
 * Leases `ids` until `lease` where each is still pending, due and unleased at `now`; counts the
 * attempt of those in `heads` now. Returns the ids leased.
 */
export async function leaseDeliveries(
  tx: Executor,
  ids: readonly string[],
  heads: readonly string[],
  lease: number,
  now: number,
): Promise<Set<string>> {
  const updated = await tx
    .updateTable("webhook_deliveries")
    .set((eb) => ({
      lease_until: lease,
      updated_at: now,
      attempts: eb("attempts", "+", eb.case().when("id", "in", heads).then(eb.lit(1)).else(eb.lit(0)).end()),
    }))
    .where("id", "in", ids)
    .where("status", "=", "pending")
    .where("lease_until", "<=", now)
    .where("next_attempt_at", "<=", now)
    .returning("id")
    .execute();
  return new Set(updated.map((r) => r.id));
}

/** Gives back what the claim of `lease` leased (and did not count) among `ids`. */
export async function releaseLeases(tx: Executor, ids: readonly string[], lease: number): Promise<void> {
  await tx.updateTable("webhook_deliveries").set({ lease_until: 0 }).where("id", "in", ids).where("lease_until", "=", lease).execute();
}

/** SQLite (one node): leases left by a previous run of this process are void. */
export async function voidLeases(db: Executor): Promise<void> {
  await db.updateTable("webhook_deliveries").set({ lease_until: 0 }).where("status", "=", "pending").where("lease_until", ">", 0).execute();
}

/** What lanes send to: their endpoints. */
export async function laneEndpoints(db: Executor, ids: readonly string[]) {
  return db.selectFrom("webhook_endpoints").select(["id", "url", "is_active", "failing_since"]).where("id", "in", ids).execute();
}

/** What lanes send: their events, with the stored body. */
export async function laneEvents(db: Executor, ids: readonly string[]) {
  return db.selectFrom("webhook_events").select(["id", "event_type", "organization_id", "payload"]).where("id", "in", ids).execute();
}

/** Cancels those of `ids` still pending (their endpoint was paused or deleted). */
export async function cancelPending(db: Executor, ids: readonly string[], now: number): Promise<void> {
  await db
    .updateTable("webhook_deliveries")
    .set({ status: "cancelled", updated_at: now })
    .where("id", "in", ids)
    .where("status", "=", "pending")
    .execute();
}
