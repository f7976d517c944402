import type { Kysely } from "kysely";

// Webhooks: signing keys (private halves sealed with the master key), endpoints, the
// outbox of events written with their activity, and one delivery row per (event, endpoint).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("webhook_signing_keys")
    .addColumn("id", "text", (c) => c.primaryKey())
    /** base64url of the 32-byte Ed25519 public key (the JWK `x`). */
    .addColumn("public_key", "text", (c) => c.notNull())
    /** The PKCS#8 private key, sealed with the master key (AAD binds it to the id). */
    .addColumn("private_key_sealed", "text", (c) => c.notNull())
    /** active (signs), published (verifies only), retired (gone from the key set). */
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("webhook_endpoints")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("is_active", "integer", (c) => c.notNull())
    /** JSON: [{eventType, filtersJson?, isActive?}]. */
    .addColumn("subscriptions", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("webhook_endpoints_org").on("webhook_endpoints").columns(["organization_id", "created_at", "id"]).execute();

  await db.schema
    .createTable("webhook_events")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("event_type", "text", (c) => c.notNull())
    .addColumn("activity_id", "text", (c) => c.notNull())
    /** The exact body delivered: the activity as it stood at this status change. */
    .addColumn("payload", "text", (c) => c.notNull())
    /** 0 until the dispatcher has created the event's deliveries. */
    .addColumn("fanned_out", "integer", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("webhook_events_pending").on("webhook_events").columns(["fanned_out", "id"]).execute();

  await db.schema
    .createTable("webhook_deliveries")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("event_id", "text", (c) => c.notNull().references("webhook_events.id"))
    .addColumn("endpoint_id", "text", (c) => c.notNull())
    /** pending, delivered, failed (terminal), cancelled (endpoint paused or deleted). */
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull())
    .addColumn("next_attempt_at", "bigint", (c) => c.notNull())
    /** A worker holds the delivery until then; a crashed worker's claim simply lapses. */
    .addColumn("lease_until", "bigint", (c) => c.notNull())
    .addColumn("last_status", "integer")
    .addColumn("last_error", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  // The head of an endpoint's queue: its pending delivery with the smallest (time-ordered) id.
  await db.schema.createIndex("webhook_deliveries_queue").on("webhook_deliveries").columns(["endpoint_id", "status", "id"]).execute();
  await db.schema.createIndex("webhook_deliveries_event").on("webhook_deliveries").columns(["event_id", "endpoint_id"]).unique().execute();
}

export async function down(): Promise<void> {
  throw new Error("migrations are forward-only");
}
