import type { Kysely } from "kysely";

// Webhook retries that outlive long outages: each attempt is recorded (operators list them),
// an endpoint remembers since when it has been failing (it is disabled, with a reason, after
// days of it), and a delivery can be redelivered by an operator (its retry schedule restarts).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("webhook_endpoints")
    /** Time of the first failed attempt since the last successful one; null while healthy. */
    .addColumn("failing_since", "bigint")
    .execute();
  /** Why the service disabled the endpoint (null: active, or paused by a user). */
  await db.schema.alterTable("webhook_endpoints").addColumn("disabled_reason", "text").execute();
  await db.schema.alterTable("webhook_endpoints").addColumn("disabled_at", "bigint").execute();

  /**
   * The delivery's attempt count when its current retry schedule began: 0, or the count at
   * its last redelivery. The schedule is indexed by attempts − schedule_offset.
   */
  await db.schema
    .alterTable("webhook_deliveries")
    .addColumn("schedule_offset", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  // Listing an endpoint's deliveries in (created_at, id) order, as every list pages.
  await db.schema.createIndex("webhook_deliveries_list").on("webhook_deliveries").columns(["endpoint_id", "created_at", "id"]).execute();

  await db.schema
    .createTable("webhook_delivery_attempts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("delivery_id", "text", (c) => c.notNull().references("webhook_deliveries.id"))
    /** 1-based, over the delivery's whole life (redeliveries continue the count). */
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("started_at", "bigint", (c) => c.notNull())
    .addColumn("duration_ms", "integer", (c) => c.notNull())
    /** HTTP status, when the endpoint answered. */
    .addColumn("status", "integer")
    /** Network error, deadline, refused destination. */
    .addColumn("error", "text")
    .execute();
  await db.schema
    .createIndex("webhook_delivery_attempts_delivery")
    .on("webhook_delivery_attempts")
    .columns(["delivery_id", "attempt"])
    .unique()
    .execute();
}

export async function down(): Promise<void> {
  throw new Error("migrations are forward-only");
}
