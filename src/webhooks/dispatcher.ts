// The read side of webhooks: turns outbox events into deliveries and delivers them.
//
// 1. Fan-out: each new event gets one delivery row per active endpoint subscribed to it
//    (the event's organization and its ancestors: parent-owned endpoints see sub-orgs).
// 2. Claim: per endpoint only its oldest pending delivery is eligible (deliveries to one
//    endpoint go out in event order), when due and not leased. A claim is a lease: a worker
//    that dies mid-delivery simply lets it lapse and the delivery is attempted again.
//    On PostgreSQL a claim locks the endpoint's row FOR UPDATE SKIP LOCKED, so several
//    workers share the outbox without two of them taking the same attempt (or one taking
//    an endpoint's second delivery while another holds its first).
// 3. Deliver: sign (fresh timestamp and signature per attempt, same event id), POST, then
//    record delivered / retry with exponential backoff and jitter / failed.
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

  /**
   * New events → one delivery per listening endpoint. The active endpoints are read once per
   * batch and matched against each event's (cached) organization chain. Events are taken
   * in id order: ids are UUIDv7 minted at insert, inside the writing transaction, so on
   * SQLite (one writer) id order is commit order. On PostgreSQL concurrent transactions
   * may commit out of id order; delivery order is then best effort.
   */
  async function fanOut(): Promise<number> {
    const now = Date.now();
    return db.transaction().execute(async (tx) => {
      let q = tx.selectFrom("webhook_events").select(["id", "organization_id"]).where("fanned_out", "=", 0).orderBy("id").limit(500);
      if (o.engine === "postgres") q = q.forUpdate().skipLocked();
      const events = await q.execute();
      if (events.length === 0) return 0;
      const endpoints = (await tx.selectFrom("webhook_endpoints").select(["id", "organization_id", "subscriptions"]).where("is_active", "=", 1).execute())
        .filter((ep) => subscribes(ep.subscriptions));
      const rows = [];
      for (const e of events) {
        const chain = await organizationChain(tx, e.organization_id);
        for (const ep of endpoints) {
          if (!chain.includes(ep.organization_id)) continue;
          rows.push({
            id: newOrderedId(now),
            event_id: e.id,
            endpoint_id: ep.id,
            status: "pending",
            attempts: 0,
            next_attempt_at: now,
            lease_until: 0,
            last_status: null,
            last_error: null,
            created_at: now,
            updated_at: now,
          });
        }
      }
      for (let i = 0; i < rows.length; i += 200) {
        await tx
          .insertInto("webhook_deliveries")
          .values(rows.slice(i, i + 200))
          .onConflict((oc) => oc.columns(["event_id", "endpoint_id"]).doNothing())
          .execute();
      }
      await tx.updateTable("webhook_events").set({ fanned_out: 1 }).where("id", "in", events.map((e) => e.id)).execute();
      return events.length;
    });
  }

  /**
   * Leases the head of each endpoint's queue (its oldest pending delivery) when it is due:
   * one index probe per endpoint, whatever the backlog — deliveries to one endpoint go out
   * in order, one at a time.
   */
  async function claim(limit: number): Promise<{ id: string; event_id: string; endpoint_id: string; attempts: number }[]> {
    const now = Date.now();
    const endpoints = await db.selectFrom("webhook_endpoints").select("id").where("is_active", "=", 1).execute();
    const idle = endpoints.map((e) => e.id).filter((id) => !inFlight.has(id)).slice(0, limit);
    if (idle.length === 0) return [];
    return db.transaction().execute(async (tx) => {
      const claimed = [];
      for (const endpointId of idle) {
        // Another worker claiming for this endpoint holds its row: skip the endpoint rather
        // than the head delivery (SKIP LOCKED on the delivery would hand us the next one,
        // out of order).
        if (o.engine === "postgres") {
          const mine = await tx.selectFrom("webhook_endpoints").select("id").where("id", "=", endpointId).forUpdate().skipLocked().executeTakeFirst();
          if (!mine) continue;
        }
        const q = tx
          .selectFrom("webhook_deliveries")
          .select(["id", "event_id", "endpoint_id", "attempts", "next_attempt_at", "lease_until"])
          .where("endpoint_id", "=", endpointId)
          .where("status", "=", "pending")
          .orderBy("id")
          .limit(1);
        const head = await q.executeTakeFirst();
        if (!head || head.next_attempt_at > now || head.lease_until > now) continue;
        await tx
          .updateTable("webhook_deliveries")
          .set({ lease_until: now + leaseMs, attempts: head.attempts + 1, updated_at: now })
          .where("id", "=", head.id)
          .execute();
        claimed.push({ id: head.id, event_id: head.event_id, endpoint_id: head.endpoint_id, attempts: head.attempts + 1 });
      }
      return claimed;
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
      // Fan out everything new before claiming, in batches, so a burst does not make each
      // cycle re-read its whole backlog.
      while ((await fanOut()) === 500 && !stopped);
      const free = o.concurrency - running.size;
      if (free <= 0) continue;
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
