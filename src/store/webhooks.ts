// Webhook endpoints and the outbox.
import { sql } from "kysely";
import { dialectOf } from "./engines.ts";
import type { Executor, WebhookEndpointsTable, WebhookEventsTable, WebhookEventType } from "./schema.ts";
import { timestampObject } from "./util.ts";

export type WebhookEndpointRow = WebhookEndpointsTable;
export type WebhookEventRow = WebhookEventsTable;

export const EVENT_ACTIVITY_UPDATES: WebhookEventType = "ACTIVITY_UPDATES";
export const MAX_ENDPOINTS_PER_ORGANIZATION = 20;

export interface Subscription {
  eventType: string;
  filtersJson?: string;
  isActive?: boolean;
}

const VERSION_KEY = "webhook_version";

/** PostgreSQL NOTIFY channel: the set of endpoints changed (webhooks/change-listener.ts). */
export const WEBHOOK_CHANNEL = "sigil_webhooks";

/**
 * Marks the set of endpoints as changed (in the changing activity's transaction). Every
 * request reads the version with its credential, so the cached "who has endpoints" is
 * refreshed without a read of its own. On PostgreSQL every server's dispatcher is told at
 * commit (an idle dispatcher that knows of no endpoint does not poll).
 */
export async function bumpWebhookVersion(db: Executor): Promise<void> {
  await db
    .insertInto("sigil_meta")
    .values({ key: VERSION_KEY, value: "1" })
    .onConflict((oc) => oc.column("key").doUpdateSet({ value: sql<string>`cast(cast(sigil_meta.value as integer) + 1 as text)` }))
    .execute();
  await dialectOf(db).notify(db, WEBHOOK_CHANNEL);
}

export async function webhookVersion(db: Executor): Promise<number> {
  const row = await db.selectFrom("sigil_meta").select("value").where("key", "=", VERSION_KEY).executeTakeFirst();
  return row ? Number(row.value) : 0;
}

export const WEBHOOK_VERSION_KEY = VERSION_KEY;

/** Organizations that own an active endpoint subscribed to activity updates. */
export async function organizationsWithEndpoints(db: Executor): Promise<Set<string>> {
  const rows = await db.selectFrom("webhook_endpoints").select(["organization_id", "subscriptions"]).where("is_active", "=", 1).execute();
  return new Set(rows.filter((r) => subscribes(r.subscriptions)).map((r) => r.organization_id));
}

export function subscribes(subscriptions: string): boolean {
  return (JSON.parse(subscriptions) as Subscription[]).some((s) => s.eventType === EVENT_ACTIVITY_UPDATES && s.isActive !== false);
}

export async function findEndpoint(db: Executor, organizationId: string, id: string): Promise<WebhookEndpointRow | undefined> {
  return db
    .selectFrom("webhook_endpoints")
    .selectAll()
    .where("id", "=", id)
    .where("organization_id", "=", organizationId)
    .executeTakeFirst();
}

/** Stops what an endpoint still had to deliver (it was paused or deleted). */
export async function cancelPendingDeliveries(db: Executor, endpointId: string, now: number): Promise<void> {
  await db
    .updateTable("webhook_deliveries")
    .set({ status: "cancelled", updated_at: now })
    .where("endpoint_id", "=", endpointId)
    .where("status", "=", "pending")
    .execute();
}

export async function insertEvent(db: Executor, row: WebhookEventRow): Promise<void> {
  await db.insertInto("webhook_events").values(row).execute();
}

export function endpointView(r: WebhookEndpointRow) {
  return {
    endpointId: r.id,
    organizationId: r.organization_id,
    url: r.url,
    name: r.name,
    isActive: r.is_active === 1,
    subscriptions: JSON.parse(r.subscriptions) as Subscription[],
    createdAt: timestampObject(r.created_at),
    updatedAt: timestampObject(r.updated_at),
    // Present only while the service keeps the endpoint disabled (failing for too long).
    ...(r.disabled_reason ? { disabledReason: r.disabled_reason, disabledAt: timestampObject(r.disabled_at ?? r.updated_at) } : {}),
  };
}
