// The read side of webhooks: turns outbox events into deliveries and delivers them.
//
// 1. Fan-out: each new event gets one delivery row per active endpoint subscribed to it
//    (the event's organization and its ancestors: parent-owned endpoints see sub-orgs).
// 2. Claim: per endpoint only its oldest pending delivery is eligible (deliveries to one
//    endpoint go out in event order), when due and not leased. A claim is a lease: a worker
//    that dies mid-delivery simply lets it lapse and the delivery is attempted again.
//    PostgreSQL claims with FOR UPDATE SKIP LOCKED, so several workers share the outbox
//    without two of them taking the same attempt.
// 3. Deliver: sign (fresh timestamp and signature per attempt, same event id), POST, then
//    record delivered / retry with exponential backoff and jitter / failed.
import { sql } from "kysely";
import type { Db, Executor } from "../store/schema.ts";
import type { Engine } from "../store/db.ts";
import type { MasterKey } from "../crypto/envelope.ts";
import { organizationChain } from "../store/organizations.ts";
import { newOrderedId } from "../store/util.ts";
import { subscribes } from "../store/webhooks.ts";
import { activeSigningKey, type SigningKey } from "./signing-keys.ts";
import { attemptDelivery, classify, type Attempt } from "./deliver.ts";

export interface DispatcherOptions {
  db: Db;
  engine: Engine;
  masterKey: MasterKey;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** Idle poll period; commits that write events wake the dispatcher at once. */
  pollMs?: number;
  /** Deliveries in flight at once (one per endpoint at most). */
  concurrency?: number;
  /** Per attempt. */
  timeoutMs?: number;
  /** Attempts before a delivery is given up as failed. */
  maxAttempts?: number;
  /** First retry delay; doubles per attempt up to maxBackoffMs, with jitter. */
  retryBaseMs?: number;
  maxBackoffMs?: number;
}

export const DISPATCH_DEFAULTS = {
  pollMs: 500,
  concurrency: 16,
  timeoutMs: 10_000,
  maxAttempts: 10,
  retryBaseMs: 1_000,
  maxBackoffMs: 5 * 60_000,
};

export interface Dispatcher {
  /** Something was written: look now instead of at the next poll. */
  wake(): void;
  stop(): Promise<void>;
}

/** Delay before attempt n+1 after n failed attempts: base·2^(n−1), capped, jittered to 50–100 %. */
export function backoffMs(attempts: number, baseMs: number, maxMs: number, random = Math.random): number {
  const full = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(full * (0.5 + random() / 2));
}

export function startDispatcher(opts: DispatcherOptions): Dispatcher {
  const o = { ...DISPATCH_DEFAULTS, ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) } as Required<DispatcherOptions>;
  const { db } = o;
  const inFlight = new Set<string>(); // endpoint ids
  const running = new Set<Promise<void>>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let cycle: Promise<void> | undefined;
  let again = false;
  // The lease covers the attempt and its bookkeeping; a crashed worker's lease lapses.
  const leaseMs = o.timeoutMs + 5_000;

  async function fanOut(): Promise<void> {
    const now = Date.now();
    await db.transaction().execute(async (tx) => {
      let q = tx.selectFrom("webhook_events").selectAll().where("fanned_out", "=", 0).orderBy("created_at").orderBy("id").limit(200);
      if (o.engine === "postgres") q = q.forUpdate().skipLocked();
      const events = await q.execute();
      for (const e of events) {
        const chain = await organizationChain(tx, e.organization_id);
        const endpoints = chain.length
          ? await tx
              .selectFrom("webhook_endpoints")
              .select(["id", "subscriptions"])
              .where("organization_id", "in", chain)
              .where("is_active", "=", 1)
              .execute()
          : [];
        const rows = endpoints
          .filter((ep) => subscribes(ep.subscriptions))
          .map((ep) => ({
            id: newOrderedId(now),
            event_id: e.id,
            endpoint_id: ep.id,
            status: "pending",
            attempts: 0,
            next_attempt_at: now,
            lease_until: 0,
            last_status: null,
            last_error: null,
            created_at: e.created_at,
            updated_at: now,
          }));
        if (rows.length) {
          await tx.insertInto("webhook_deliveries").values(rows).onConflict((oc) => oc.columns(["event_id", "endpoint_id"]).doNothing()).execute();
        }
        await tx.updateTable("webhook_events").set({ fanned_out: 1 }).where("id", "=", e.id).execute();
      }
    });
  }

  /** The oldest pending delivery of each endpoint, when due and unleased; leased to us. */
  async function claim(limit: number): Promise<{ id: string; event_id: string; endpoint_id: string; attempts: number }[]> {
    const now = Date.now();
    return db.transaction().execute(async (tx) => {
      let q = tx
        .selectFrom("webhook_deliveries as d")
        .select(["d.id", "d.event_id", "d.endpoint_id", "d.attempts"])
        .where("d.status", "=", "pending")
        .where("d.next_attempt_at", "<=", now)
        .where("d.lease_until", "<=", now)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom("webhook_deliveries as e")
                .select(sql`1`.as("one"))
                .whereRef("e.endpoint_id", "=", "d.endpoint_id")
                .where("e.status", "=", "pending")
                .where((eb) =>
                  eb.or([
                    eb("e.created_at", "<", eb.ref("d.created_at")),
                    eb.and([eb("e.created_at", "=", eb.ref("d.created_at")), eb("e.id", "<", eb.ref("d.id"))]),
                  ]),
                ),
            ),
          ),
        )
        .orderBy("d.created_at")
        .orderBy("d.id")
        .limit(limit + inFlight.size);
      if (o.engine === "postgres") q = q.forUpdate().skipLocked();
      const due = (await q.execute()).filter((d) => !inFlight.has(d.endpoint_id)).slice(0, limit);
      if (due.length) {
        await tx
          .updateTable("webhook_deliveries")
          .set({ lease_until: now + leaseMs, attempts: sql`attempts + 1`, updated_at: now })
          .where("id", "in", due.map((d) => d.id))
          .execute();
      }
      return due.map((d) => ({ ...d, attempts: d.attempts + 1 }));
    });
  }

  async function deliver(d: { id: string; event_id: string; endpoint_id: string; attempts: number }, key: SigningKey): Promise<void> {
    const endpoint = await db.selectFrom("webhook_endpoints").select(["url", "is_active"]).where("id", "=", d.endpoint_id).executeTakeFirst();
    const now = Date.now();
    if (!endpoint || endpoint.is_active !== 1) {
      await db.updateTable("webhook_deliveries").set({ status: "cancelled", updated_at: now }).where("id", "=", d.id).execute();
      return;
    }
    const event = await db.selectFrom("webhook_events").selectAll().where("id", "=", d.event_id).executeTakeFirstOrThrow();
    let attempt: Attempt;
    try {
      attempt = await attemptDelivery({
        url: endpoint.url,
        eventId: event.id,
        eventType: event.event_type,
        organizationId: event.organization_id,
        body: Buffer.from(event.payload, "utf8"),
        key,
        timeoutMs: o.timeoutMs,
        now: Date.now(),
      });
    } catch (err) {
      attempt = { error: (err as Error).message };
    }
    const verdict = classify(attempt);
    const done = Date.now();
    const outcome =
      verdict === "retry" && d.attempts < o.maxAttempts
        ? { status: "pending", next_attempt_at: done + backoffMs(d.attempts, o.retryBaseMs, o.maxBackoffMs) }
        : { status: verdict === "delivered" ? "delivered" : "failed", next_attempt_at: done };
    await db
      .updateTable("webhook_deliveries")
      .set({
        ...outcome,
        lease_until: 0,
        last_status: attempt.status ?? null,
        last_error: attempt.error ?? null,
        updated_at: done,
      })
      .where("id", "=", d.id)
      .where("status", "=", "pending") // cancelled meanwhile: leave it cancelled
      .execute();
    const fields = { deliveryId: d.id, eventId: event.id, endpointId: d.endpoint_id, attempt: d.attempts, status: attempt.status, error: attempt.error };
    if (outcome.status === "failed") o.log.warn(fields, "webhook delivery failed for good");
    else if (outcome.status === "pending") o.log.info(fields, "webhook delivery will be retried");
  }

  async function runCycle(): Promise<void> {
    do {
      again = false;
      await fanOut();
      const free = o.concurrency - running.size;
      if (free <= 0) return;
      const claimed = await claim(free);
      // One key per cycle: opened from its sealed form once, not per delivery; a rotation
      // (possibly by another process) is picked up by the next cycle.
      const key = claimed.length ? await activeSigningKey(db, o.masterKey) : undefined;
      for (const d of claimed) {
        inFlight.add(d.endpoint_id);
        const p = deliver(d, key!)
          .catch((err: unknown) => o.log.warn({ err, deliveryId: d.id }, "webhook delivery bookkeeping failed; its lease will lapse"))
          .finally(() => {
            inFlight.delete(d.endpoint_id);
            running.delete(p);
            wake(); // the endpoint's next delivery may be due
          });
        running.add(p);
      }
    } while (again && !stopped);
  }

  function wake(): void {
    if (stopped) return;
    if (cycle) {
      again = true;
      return;
    }
    if (timer) clearTimeout(timer);
    cycle = runCycle()
      .catch((err: unknown) => o.log.warn({ err }, "webhook dispatcher cycle failed"))
      .finally(() => {
        cycle = undefined;
        if (!stopped) timer = setTimeout(wake, o.pollMs);
      });
  }

  // SQLite has a single node: leases left by a previous run of this process are void.
  const start = o.engine === "sqlite"
    ? db.updateTable("webhook_deliveries").set({ lease_until: 0 }).where("status", "=", "pending").execute().then(() => undefined)
    : Promise.resolve();
  void start.then(wake, (err: unknown) => o.log.warn({ err }, "webhook dispatcher could not start"));

  return {
    wake,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await cycle;
      await Promise.allSettled([...running]);
    },
  };
}

/** For tests and operators: deliveries of an event. */
export async function deliveriesOf(db: Executor, eventId: string) {
  return db.selectFrom("webhook_deliveries").selectAll().where("event_id", "=", eventId).execute();
}
