// The read side of webhooks: turns outbox events into deliveries and delivers them.
//
// 1. Fan-out: each new event gets one delivery row per active endpoint subscribed to it
//    (the event's organization and its ancestors: parent-owned endpoints see sub-orgs).
// 2. Claim: per endpoint only its oldest pending delivery is eligible (deliveries to one
//    endpoint go out in event order), when due and not leased. The due heads of all
//    endpoints are read in one query, oldest due first, so every endpoint gets its turn
//    however many there are. A claim is a lease: a worker that dies mid-delivery simply
//    lets it lapse and the delivery is attempted again. On PostgreSQL a claim locks the
//    endpoint's row FOR UPDATE SKIP LOCKED, so several workers share the outbox without two
//    of them taking the same attempt (or one taking an endpoint's second delivery while
//    another holds its first).
// 3. Deliver: sign (fresh timestamp and signature per attempt, same event id), POST with a
//    total deadline that ends before the lease does, then record the attempt and the
//    outcome: delivered / retried on the schedule (retry-schedule.ts) / failed, after which
//    the endpoint's next delivery goes. An endpoint that has failed continuously for
//    `disableAfterMs` is disabled, with its reason.
//
// Idle polls only read: the outbox and the due heads are read before any transaction is
// opened. While no endpoint is active a poll reads nothing at all when the dispatcher will
// hear of a new one anyway — on SQLite (one node) every event is written by this process,
// which wakes it; on PostgreSQL a LISTEN connection hears every endpoint change from any
// server (change-listener.ts) — and reads only the webhook version otherwise.
import { sql } from "kysely";
import type { Db, Executor } from "../store/schema.ts";
import { dialectOf } from "../store/dialect.ts";
import type { MasterKey } from "../crypto/envelope.ts";
import type { ServiceState } from "../service-state.ts";
import { organizationChain } from "../store/organizations.ts";
import { newOrderedId } from "../store/util.ts";
import { subscribes, webhookVersion } from "../store/webhooks.ts";
import { activeSigningKey, type SigningKey } from "./signing-keys.ts";
import { attemptDelivery, classify, type Attempt } from "./deliver.ts";
import { DEFAULT_DISABLE_AFTER_MS, DEFAULT_RETRY_SCHEDULE_MS, retryDelayMs } from "./retry-schedule.ts";
import { disableFailingEndpoint, recordOutcome } from "./delivery-records.ts";
import { listenForChanges, type ChangeListener } from "./change-listener.ts";

export interface DispatcherOptions {
  db: Db;
  /** The store's caches (Service.state): organization chains, the opened signing key. */
  state: ServiceState;
  masterKey: MasterKey;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** Idle poll period; commits that write events wake the dispatcher at once. */
  pollMs?: number;
  /** Deliveries in flight at once (one per endpoint at most). */
  concurrency?: number;
  /** Total deadline of one attempt (resolution, connect, headers, whole answer). */
  timeoutMs?: number;
  /** Delay before each attempt of a delivery (the first is usually 0). */
  retrySchedule?: readonly number[];
  /** Attempts per delivery: cuts the schedule short, or repeats its last delay. */
  maxAttempts?: number;
  /** An endpoint failing continuously this long is disabled. */
  disableAfterMs?: number;
  /** PostgreSQL: where to LISTEN for endpoint changes (absent: poll the webhook version). */
  databaseUrl?: string;
}

export const DISPATCH_DEFAULTS = {
  pollMs: 500,
  concurrency: 16,
  timeoutMs: 10_000,
  retrySchedule: DEFAULT_RETRY_SCHEDULE_MS,
  disableAfterMs: DEFAULT_DISABLE_AFTER_MS,
};

/**
 * What the lease adds to the attempt's deadline: time for the outcome's bookkeeping. The
 * attempt is over by the deadline, so another worker can only claim the delivery once this
 * worker has stopped sending it.
 */
export const LEASE_GRACE_MS = 5_000;

export interface Dispatcher {
  /** Something was written: look now instead of at the next poll. */
  wake(): void;
  stop(): Promise<void>;
}

/** The schedule with exactly `maxAttempts` entries, when given. */
export function effectiveSchedule(schedule: readonly number[], maxAttempts?: number): readonly number[] {
  if (maxAttempts === undefined) return schedule;
  const last = schedule[schedule.length - 1] ?? 0;
  return Array.from({ length: maxAttempts }, (_, i) => schedule[i] ?? last);
}

export interface Claimed {
  id: string;
  event_id: string;
  endpoint_id: string;
  /** Including this attempt. */
  attempts: number;
  schedule_offset: number;
  claimedAt: number;
}

interface Head {
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
async function dueHeads(db: Executor, now: number, limit: number): Promise<Head[]> {
  const { rows } = await sql<Head>`
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

export function startDispatcher(opts: DispatcherOptions): Dispatcher {
  const o = { ...DISPATCH_DEFAULTS, ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) } as Required<DispatcherOptions>;
  const { db } = o;
  const dialect = dialectOf(db);
  const schedule = effectiveSchedule(o.retrySchedule, opts.maxAttempts);
  const leaseMs = o.timeoutMs + LEASE_GRACE_MS;
  const inFlight = new Set<string>(); // endpoint ids
  const running = new Set<Promise<void>>();
  let stopped = false;
  // Stopping cuts attempts in flight: a shutdown must not wait out a slow receiver.
  const stopping = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let cycle: Promise<void> | undefined;
  let again = false;
  /** A wake (something was written here) rather than a poll: look at everything. */
  let forced = true;
  /** Active endpoints at a webhook version; a poll at the same version with none does nothing. */
  let endpoints: { version: number; active: number } | undefined;

  /**
   * Nothing can be due while no endpoint is active (events are written only for active
   * endpoints, and every change to an endpoint bumps the version). A forced cycle (a wake)
   * looks at everything; a poll looks only when the endpoints may have changed.
   */
  async function nothingToDo(full: boolean): Promise<boolean> {
    if (full) {
      // Woken while believing no endpoint is active: something changed; count again.
      if (endpoints?.active === 0) endpoints = undefined;
      return false;
    }
    if (endpoints?.active === 0 && running.size === 0 && (dialect.singleProcess || listener?.listening)) return true;
    const version = await webhookVersion(db);
    if (endpoints?.version !== version) {
      const row = await db
        .selectFrom("webhook_endpoints")
        .select((eb) => eb.fn.countAll<number | string>().as("n"))
        .where("is_active", "=", 1)
        .executeTakeFirstOrThrow();
      // Everything written before this version still gets its one full look below.
      const previous = endpoints;
      endpoints = { version, active: Number(row.n) };
      if (previous === undefined || previous.active > 0) return false;
    }
    return endpoints.active === 0 && running.size === 0;
  }

  /**
   * New events → one delivery per listening endpoint. The active endpoints are read once per
   * batch and matched against each event's (cached) organization chain. Events are taken
   * in id order: ids are UUIDv7 minted at insert, inside the writing transaction, so on
   * SQLite (one writer) id order is commit order. On PostgreSQL concurrent transactions
   * may commit out of id order; delivery order is then best effort.
   */
  async function fanOut(): Promise<number> {
    // Read first: a poll that finds nothing opens no transaction.
    const any = await db.selectFrom("webhook_events").select("id").where("fanned_out", "=", 0).limit(1).executeTakeFirst();
    if (!any) return 0;
    const now = Date.now();
    return db.transaction().execute(async (tx) => {
      const q = tx.selectFrom("webhook_events").select(["id", "organization_id"]).where("fanned_out", "=", 0).orderBy("id").limit(500);
      const events = await dialect.forUpdateSkipLocked(q).execute();
      if (events.length === 0) return 0;
      const active = (await tx.selectFrom("webhook_endpoints").select(["id", "organization_id", "subscriptions"]).where("is_active", "=", 1).execute())
        .filter((ep) => subscribes(ep.subscriptions));
      const rows = [];
      for (const e of events) {
        const chain = await organizationChain(tx, e.organization_id, o.state.chains);
        for (const ep of active) {
          if (!chain.includes(ep.organization_id)) continue;
          rows.push({
            id: newOrderedId(now),
            event_id: e.id,
            endpoint_id: ep.id,
            status: "pending" as const,
            attempts: 0,
            schedule_offset: 0,
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

  /** Leases the due heads of up to `limit` idle endpoints' queues, longest-waiting first. */
  async function claim(limit: number): Promise<Claimed[]> {
    const now = Date.now();
    // Read first: a poll with nothing due opens no transaction.
    const candidates = (await dueHeads(db, now, limit + inFlight.size)).filter((h) => !inFlight.has(h.endpoint_id)).slice(0, limit);
    if (candidates.length === 0) return [];
    return db.transaction().execute(async (tx) => {
      const claimed: Claimed[] = [];
      for (const c of candidates) {
        // Another worker claiming for this endpoint holds its row: skip the endpoint rather
        // than the head delivery (SKIP LOCKED on the delivery would hand us the next one,
        // out of order).
        if (dialect.locksRows) {
          const mine = await dialect.forUpdateSkipLocked(tx.selectFrom("webhook_endpoints").select("id").where("id", "=", c.endpoint_id).where("is_active", "=", 1)).executeTakeFirst();
          if (!mine) continue;
        }
        // The head again, under the lock: another worker may have moved the queue on.
        const head = await tx
          .selectFrom("webhook_deliveries")
          .select(["id", "event_id", "endpoint_id", "attempts", "schedule_offset", "next_attempt_at", "lease_until"])
          .where("endpoint_id", "=", c.endpoint_id)
          .where("status", "=", "pending")
          .orderBy("id")
          .limit(1)
          .executeTakeFirst();
        if (!head || head.next_attempt_at > now || head.lease_until > now) continue;
        await tx
          .updateTable("webhook_deliveries")
          .set({ lease_until: now + leaseMs, attempts: head.attempts + 1, updated_at: now })
          .where("id", "=", head.id)
          .execute();
        claimed.push({ ...head, schedule_offset: head.schedule_offset ?? 0, attempts: head.attempts + 1, claimedAt: now });
      }
      return claimed;
    });
  }

  async function deliver(d: Claimed, key: SigningKey): Promise<void> {
    const endpoint = await db
      .selectFrom("webhook_endpoints")
      .select(["url", "is_active", "failing_since"])
      .where("id", "=", d.endpoint_id)
      .executeTakeFirst();
    if (!endpoint || endpoint.is_active !== 1) {
      await db.updateTable("webhook_deliveries").set({ status: "cancelled", updated_at: Date.now() }).where("id", "=", d.id).where("status", "=", "pending").execute();
      return;
    }
    const event = await db.selectFrom("webhook_events").selectAll().where("id", "=", d.event_id).executeTakeFirstOrThrow();
    const startedAt = Date.now();
    let attempt: Attempt;
    try {
      attempt = await attemptDelivery({
        url: endpoint.url,
        eventId: event.id,
        eventType: event.event_type,
        organizationId: event.organization_id,
        body: Buffer.from(event.payload, "utf8"),
        key,
        // From the claim, not from now: the lease was taken then.
        deadlineAt: d.claimedAt + o.timeoutMs,
        now: startedAt,
        signal: stopping.signal,
      });
    } catch (err) {
      attempt = { error: (err as Error).message };
    }
    if (stopping.signal.aborted && classify(attempt) !== "delivered") {
      // Cut by stop(): not the receiver's fault, so it costs no attempt of the schedule. The
      // claim is given back (lease released, count restored) and the same event id goes out
      // again — from another server at once, or from this one after its restart.
      await db
        .updateTable("webhook_deliveries")
        .set({ lease_until: 0, attempts: d.attempts - 1 })
        .where("id", "=", d.id)
        .where("attempts", "=", d.attempts)
        .where("status", "=", "pending")
        .execute()
        .catch((err: unknown) => o.log.warn({ err, deliveryId: d.id }, "could not release an interrupted webhook delivery; its lease will lapse"));
      return;
    }
    const verdict = classify(attempt);
    const done = Date.now();
    const delay = verdict === "retry" ? retryDelayMs(schedule, d.attempts - d.schedule_offset) : undefined;
    const status = verdict === "delivered" ? "delivered" : delay !== undefined ? "pending" : "failed";
    const failingSince = verdict === "delivered" ? null : (endpoint.failing_since ?? startedAt);
    const disable = failingSince !== null && done - failingSince >= o.disableAfterMs;
    const recorded = await db.transaction().execute(async (tx) => {
      const mine = await recordOutcome(tx, {
        delivery: d,
        attempt,
        startedAt,
        done,
        status,
        nextAttemptAt: done + (delay ?? 0),
        failingSince,
        endpointWasFailing: endpoint.failing_since != null,
      });
      // Only on an outcome that counted (not one whose lease another worker took over).
      if (mine && disable) await disableFailingEndpoint(tx, d.endpoint_id, failingSince, attempt, done);
      return mine;
    });
    const fields = { deliveryId: d.id, eventId: event.id, endpointId: d.endpoint_id, attempt: d.attempts, status: attempt.status, error: attempt.error };
    if (!recorded) o.log.warn(fields, "webhook delivery changed while it was attempted (cancelled, or its lease lapsed); outcome not applied");
    else if (status === "failed") o.log.warn(fields, "webhook delivery failed for good; the endpoint's next delivery goes");
    else if (status === "pending") o.log.info({ ...fields, retryInMs: delay }, "webhook delivery will be retried");
    if (recorded && disable) o.log.warn({ endpointId: d.endpoint_id, failingSince }, "webhook endpoint disabled: failing for too long");
    // A retry due before the next poll is looked at when it is due, not at the poll.
    if (recorded && status === "pending" && delay !== undefined && delay < o.pollMs) wakeIn(delay);
  }

  /** One timer for the earliest retry due before the next poll. */
  let retryTimer: { at: number; timer: NodeJS.Timeout } | undefined;
  function wakeIn(ms: number): void {
    const at = Date.now() + ms;
    if (stopped || (retryTimer && retryTimer.at <= at)) return;
    if (retryTimer) clearTimeout(retryTimer.timer);
    retryTimer = {
      at,
      timer: setTimeout(() => {
        retryTimer = undefined;
        wake();
      }, ms + 1),
    };
  }

  async function runCycle(): Promise<void> {
    do {
      again = false;
      const full = forced;
      forced = false;
      if (await nothingToDo(full)) continue;
      // Fan out everything new before claiming, in batches, so a burst does not make each
      // cycle re-read its whole backlog.
      while ((await fanOut()) === 500 && !stopped);
      const free = o.concurrency - running.size;
      if (free <= 0) continue;
      const claimed = await claim(free);
      // One key per cycle: opened from its sealed form once, not per delivery; a rotation
      // (possibly by another process) is picked up by the next cycle.
      const key = claimed.length ? await activeSigningKey(o.state.signingKey, db, o.masterKey) : undefined;
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

  function run(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    cycle = runCycle()
      .catch((err: unknown) => o.log.warn({ err }, "webhook dispatcher cycle failed"))
      .finally(() => {
        cycle = undefined;
        if (!stopped) timer = setTimeout(poll, o.pollMs);
      });
  }

  function poll(): void {
    if (stopped || cycle) return;
    run();
  }

  function wake(): void {
    if (stopped) return;
    forced = true;
    if (cycle) {
      again = true;
      return;
    }
    run();
  }

  const listener: ChangeListener | undefined =
    dialect.notifies && opts.databaseUrl
      ? listenForChanges(
          opts.databaseUrl,
          () => {
            endpoints = undefined;
            wake();
          },
          o.log,
        )
      : undefined;

  // SQLite has a single node: leases left by a previous run of this process are void.
  const start = dialect.singleProcess
    ? db.updateTable("webhook_deliveries").set({ lease_until: 0 }).where("status", "=", "pending").where("lease_until", ">", 0).execute().then(() => undefined)
    : Promise.resolve();
  void start.then(wake, (err: unknown) => o.log.warn({ err }, "webhook dispatcher could not start"));

  return {
    wake,
    async stop() {
      stopped = true;
      stopping.abort();
      if (timer) clearTimeout(timer);
      if (retryTimer) clearTimeout(retryTimer.timer);
      await listener?.close();
      await cycle;
      await Promise.allSettled([...running]);
    },
  };
}

/** For tests and operators: deliveries of an event. */
export async function deliveriesOf(db: Executor, eventId: string) {
  return db.selectFrom("webhook_deliveries").selectAll().where("event_id", "=", eventId).execute();
}
