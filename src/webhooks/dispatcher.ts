// The read side of webhooks: turns outbox events into deliveries and delivers them.
//
// 1. Fan-out: each new event gets one delivery row per active endpoint subscribed to it
//    (the event's organization and its ancestors: parent-owned endpoints see sub-orgs).
// 2. Claim: per endpoint only its oldest pending delivery is eligible (deliveries to one
//    endpoint go out in event order), when due and not leased. The due heads of all
//    endpoints are read in one query, oldest due first, so every endpoint gets its turn
//    however many there are. A claim takes, for each of up to `concurrency` endpoints (a
//    lane each), its head and the deliveries queued right behind it that are due too (up
//    to LANE_BATCH), in one transaction for all endpoints. A claim is a lease: a worker that
//    dies mid-delivery simply lets it lapse and the deliveries are attempted again. On
//    PostgreSQL a claim locks the endpoints' rows FOR UPDATE SKIP LOCKED, so several workers
//    share the outbox without two of them taking the same attempt (or one taking an
//    endpoint's next deliveries while another holds its head).
// 3. Deliver: a lane sends its batch one delivery after another, in event order (one in
//    flight per endpoint), over a kept-alive connection; each attempt is signed (fresh
//    timestamp and signature per attempt, same event id). All attempts of a batch end by the
//    claim's deadline (claim + timeout), which ends before the lease does; an attempt after
//    the head that this shared deadline cuts short is given back uncounted (it did not have
//    its full time), as is the rest of the batch. A delivery that is not delivered ends the
//    batch when it will be retried (the endpoint's queue waits for it) and not when it failed
//    for good (the endpoint's next delivery goes). Then the whole batch is recorded in one
//    transaction (delivery-records.ts applyLane): the attempts, the outcomes (delivered /
//    retried on the schedule, retry-schedule.ts / failed), the release of what was not
//    attempted. An endpoint that has failed continuously for `disableAfterMs` is disabled,
//    with its reason. The head's attempt is counted when it is claimed, the others' with
//    their outcome: a worker that dies mid-batch leaves the head counted and the rest as they
//    were (sent perhaps, which at-least-once allows: same event ids). The sending itself
//    (send-batch.ts: signing, address checks, HTTP) runs on the delivery worker's thread by
//    default (delivery-worker.ts, SIGIL_WEBHOOK_WORKER), so lanes advance while the API keeps
//    this thread busy; the database work stays here.
//
// Idle polls only read: the outbox and the due heads are read before any transaction is
// opened. While no endpoint is active a poll reads nothing at all when the dispatcher will
// hear of a new one anyway — on SQLite (one node) every event is written by this process,
// which wakes it; on PostgreSQL a LISTEN connection hears every endpoint change from any
// server (change-listener.ts) — and reads only the webhook version otherwise.
import { sql } from "kysely";
import type { Db, Executor } from "../store/schema.ts";
import { dialectOf } from "../store/engines.ts";
import type { MasterKey } from "../crypto/envelope.ts";
import type { ServiceState } from "../service-state.ts";
import { organizationChain } from "../store/organizations.ts";
import { newOrderedId } from "../store/util.ts";
import { subscribes, webhookVersion } from "../store/webhooks.ts";
import { activeSigningKey, type SigningKey } from "./signing-keys.ts";
import { DEFAULT_DISABLE_AFTER_MS, DEFAULT_RETRY_SCHEDULE_MS } from "./retry-schedule.ts";
import { applyLane, type LaneDelivery, type Outcome } from "./delivery-records.ts";
import { listenForChanges, type ChangeListener } from "./change-listener.ts";
import type { Batch } from "./send-batch.ts";
import { laneSender } from "./delivery-worker.ts";
import { STRICT_WEBHOOK_URLS, type WebhookUrlPolicy } from "./url-policy.ts";

export interface DispatcherOptions {
  db: Db;
  /** The store's caches (Service.state): organization chains, the opened signing key. */
  state: ServiceState;
  masterKey: MasterKey;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** Idle poll period; commits that write events wake the dispatcher at once. */
  pollMs?: number;
  /**
   * Lanes: endpoints delivered to at once (one delivery in flight per endpoint). Receivers'
   * latency, not this process's CPU, bounds a backlog over many endpoints: lanes ÷ latency.
   */
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
  /**
   * Send on a worker thread (SIGIL_WEBHOOK_WORKER, default true): lanes advance on its own
   * event loop while the API keeps the main one busy. False: sent on the main thread.
   */
  worker?: boolean;
  /** Where deliveries may go (SIGIL_WEBHOOKS_ALLOW_LOOPBACK); default: public https only. */
  webhookUrls?: WebhookUrlPolicy;
}

export const DISPATCH_DEFAULTS = {
  pollMs: 500,
  concurrency: 64,
  timeoutMs: 10_000,
  retrySchedule: DEFAULT_RETRY_SCHEDULE_MS,
  disableAfterMs: DEFAULT_DISABLE_AFTER_MS,
  worker: true,
  webhookUrls: STRICT_WEBHOOK_URLS,
};

/**
 * What the lease adds to the attempt's deadline: time for the outcome's bookkeeping. The
 * attempt is over by the deadline, so another worker can only claim the delivery once this
 * worker has stopped sending it.
 */
export const LEASE_GRACE_MS = 5_000;

/**
 * Deliveries of one endpoint a lane claims at once and sends one after another: the claim's
 * and the outcomes' writes are shared by the batch instead of paid per delivery. An attempt
 * after the head starts only while half the claim's deadline is left.
 */
export const LANE_BATCH = 64;

export interface Dispatcher {
  /** Something was written: look now instead of at the next poll. */
  wake(): void;
  stop(): Promise<void>;
  /** Tests: ends the delivery worker as a crash would (false: none runs). */
  killWorker(): Promise<boolean>;
}

/** The schedule with exactly `maxAttempts` entries, when given. */
export function effectiveSchedule(schedule: readonly number[], maxAttempts?: number): readonly number[] {
  if (maxAttempts === undefined) return schedule;
  const last = schedule[schedule.length - 1] ?? 0;
  return Array.from({ length: maxAttempts }, (_, i) => schedule[i] ?? last);
}

export interface Claimed extends LaneDelivery {
  event_id: string;
  schedule_offset: number;
}

/** One endpoint's batch: its head and what was due right behind it, in event order. */
export interface Lane {
  endpointId: string;
  claimedAt: number;
  /** The lease_until the claim wrote: it identifies this claim in the outcomes' writes. */
  lease: number;
  deliveries: Claimed[];
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

/** The first `n` pending deliveries of each endpoint's queue, in one statement (an index range each). */
async function queueFronts(db: Executor, endpointIds: readonly string[], n: number): Promise<Head[]> {
  const parts = endpointIds.map(
    (id, i) => sql`SELECT * FROM (
      SELECT id, event_id, endpoint_id, attempts, schedule_offset, next_attempt_at, lease_until FROM webhook_deliveries
      WHERE endpoint_id = ${id} AND status = 'pending' ORDER BY id LIMIT ${n}) ${sql.ref(`q${i}`)}`,
  );
  const { rows } = await sql<Head>`${sql.join(parts, sql` UNION ALL `)}`.execute(db);
  return rows;
}

export function startDispatcher(opts: DispatcherOptions): Dispatcher {
  const o = { ...DISPATCH_DEFAULTS, ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) } as Required<DispatcherOptions>;
  const { db } = o;
  const dialect = dialectOf(db);
  const schedule = effectiveSchedule(o.retrySchedule, opts.maxAttempts);
  const leaseMs = o.timeoutMs + LEASE_GRACE_MS;
  // Sends the lanes (on the delivery worker, or here), over kept-alive connections of its own.
  const sender = laneSender({ worker: o.worker, maxSocketsPerOrigin: Math.max(o.concurrency, 1), log: o.log, urls: o.webhookUrls });
  const inFlight = new Set<string>(); // endpoint ids
  const running = new Set<Promise<void>>();
  let stopped = false;
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

  /**
   * Leases the due heads of up to `limit` idle endpoints' queues, longest-waiting first, each
   * with the due deliveries queued right behind it (up to LANE_BATCH): one lane per endpoint.
   */
  async function claim(limit: number): Promise<Lane[]> {
    const now = Date.now();
    // Read first: a poll with nothing due opens no transaction.
    const candidates = (await dueHeads(db, now, limit + inFlight.size)).filter((h) => !inFlight.has(h.endpoint_id)).slice(0, limit);
    if (candidates.length === 0) return [];
    const lease = now + leaseMs;
    return db.transaction().execute(async (tx) => {
      let endpointIds = candidates.map((c) => c.endpoint_id);
      // Another worker claiming for an endpoint holds its row: skip the endpoint rather than
      // its head delivery (SKIP LOCKED on deliveries would hand us its next one, out of order).
      if (dialect.locksRows) {
        const mine = new Set(
          (await dialect.forUpdateSkipLocked(tx.selectFrom("webhook_endpoints").select("id").where("id", "in", endpointIds).where("is_active", "=", 1)).execute()).map((r) => r.id),
        );
        endpointIds = endpointIds.filter((id) => mine.has(id));
        if (endpointIds.length === 0) return [];
      }
      // The queues again, under the locks (a statement that starts after they are taken):
      // another worker may have moved them on. Per endpoint, the head and what follows it,
      // as long as each is due and not leased.
      const byEndpoint = new Map<string, Head[]>(endpointIds.map((id) => [id, []]));
      for (const r of await queueFronts(tx, endpointIds, LANE_BATCH)) byEndpoint.get(r.endpoint_id)?.push(r);
      const wanted: Head[][] = [];
      for (const rows of byEndpoint.values()) {
        rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        const end = rows.findIndex((r) => r.next_attempt_at > now || r.lease_until > now);
        const run = end < 0 ? rows : rows.slice(0, end);
        if (run.length) wanted.push(run);
      }
      if (wanted.length === 0) return [];
      const heads = wanted.map((run) => run[0]!.id);
      const updated = await tx
        .updateTable("webhook_deliveries")
        .set((eb) => ({
          lease_until: lease,
          updated_at: now,
          // Only the head's attempt is counted now; the others' with their outcome.
          attempts: eb("attempts", "+", eb.case().when("id", "in", heads).then(eb.lit(1)).else(eb.lit(0)).end()),
        }))
        .where("id", "in", wanted.flat().map((r) => r.id))
        .where("status", "=", "pending")
        .where("lease_until", "<=", now)
        .where("next_attempt_at", "<=", now)
        .returning("id")
        .execute();
      const got = new Set(updated.map((r) => r.id));
      const lanes: Lane[] = [];
      const release: string[] = [];
      for (const run of wanted) {
        // The unbroken run from the head: a delivery after a gap would overtake the gap.
        let k = 0;
        while (k < run.length && got.has(run[k]!.id)) k++;
        for (const r of run.slice(k)) if (got.has(r.id)) release.push(r.id);
        if (k === 0) continue;
        lanes.push({
          endpointId: run[0]!.endpoint_id,
          claimedAt: now,
          lease,
          deliveries: run.slice(0, k).map((r, i) => ({
            id: r.id,
            event_id: r.event_id,
            endpoint_id: r.endpoint_id,
            attempts: r.attempts + 1,
            schedule_offset: r.schedule_offset ?? 0,
            counted: i === 0,
          })),
        });
      }
      if (release.length) {
        // Only leased by this claim (never counted: a head not claimed releases its whole run).
        await tx.updateTable("webhook_deliveries").set({ lease_until: 0 }).where("id", "in", release).where("lease_until", "=", lease).execute();
      }
      return lanes;
    });
  }

  interface LaneInput {
    endpoint: { url: string; is_active: number; failing_since?: number | null } | undefined;
    events: Map<string, { id: string; event_type: string; organization_id: string; payload: string }>;
  }

  /** What the lanes of a claim need: their endpoints and events, read once for all of them. */
  async function laneInputs(lanes: Lane[]): Promise<Map<string, LaneInput>> {
    const eventIds = lanes.flatMap((l) => l.deliveries.map((d) => d.event_id));
    const [endpoints, events] = await Promise.all([
      db.selectFrom("webhook_endpoints").select(["id", "url", "is_active", "failing_since"]).where("id", "in", lanes.map((l) => l.endpointId)).execute(),
      db.selectFrom("webhook_events").select(["id", "event_type", "organization_id", "payload"]).where("id", "in", eventIds).execute(),
    ]);
    const ep = new Map(endpoints.map((e) => [e.id, e]));
    const ev = new Map(events.map((e) => [e.id, e]));
    return new Map(lanes.map((l) => [l.endpointId, { endpoint: ep.get(l.endpointId), events: ev }]));
  }

  /** Sends a lane's batch in order (send-batch.ts), then records it all at once. */
  async function runLane(lane: Lane, input: LaneInput, key: SigningKey): Promise<void> {
    const { endpoint, events } = input;
    const ids = lane.deliveries.map((d) => d.id);
    if (!endpoint || endpoint.is_active !== 1) {
      await db.updateTable("webhook_deliveries").set({ status: "cancelled", updated_at: Date.now() }).where("id", "in", ids).where("status", "=", "pending").execute();
      return;
    }
    const batch: Batch = {
      url: endpoint.url,
      deliveries: lane.deliveries.map((d) => {
        const e = events.get(d.event_id);
        return {
          id: d.id,
          eventId: d.event_id,
          attempts: d.attempts,
          scheduleOffset: d.schedule_offset,
          ...(e ? { event: { eventType: e.event_type, organizationId: e.organization_id, payload: e.payload } } : {}),
        };
      }),
      deadlineAt: lane.claimedAt + o.timeoutMs,
      timeoutMs: o.timeoutMs,
      schedule,
      disableAfterMs: o.disableAfterMs,
      failingSince: endpoint.failing_since ?? null,
    };
    const sent = await sender.send(batch, key);
    const byId = new Map(lane.deliveries.map((d) => [d.id, d]));
    const outcomes: (Outcome & { delay?: number })[] = sent.outcomes.map(({ deliveryId, ...x }) => ({ ...x, delivery: byId.get(deliveryId)! }));
    const givenBack = sent.givenBack.map((id) => byId.get(id)!);
    const disable = sent.disable;
    const applied = await db.transaction().execute((tx) =>
      applyLane(tx, { endpointId: lane.endpointId, lease: lane.lease, outcomes, givenBack, failingSince: endpoint.failing_since ?? null, disable }, Date.now()),
    );
    for (const x of outcomes) {
      const d = x.delivery as Claimed;
      const fields = { deliveryId: d.id, eventId: d.event_id, endpointId: d.endpoint_id, attempt: d.attempts, status: x.attempt.status, error: x.attempt.error };
      const recorded = applied.has(d.id);
      if (!recorded) o.log.warn(fields, "webhook delivery changed while it was attempted (cancelled, or its lease lapsed); outcome not applied");
      else if (x.status === "failed") o.log.warn(fields, "webhook delivery failed for good; the endpoint's next delivery goes");
      else if (x.status === "pending") o.log.info({ ...fields, retryInMs: x.delay }, "webhook delivery will be retried");
      // A retry due before the next poll is looked at when it is due, not at the poll.
      if (recorded && x.status === "pending" && x.delay !== undefined && x.delay < o.pollMs) wakeIn(x.delay);
    }
    if (disable && applied.has(outcomes[disable.index]!.delivery.id)) {
      o.log.warn({ endpointId: lane.endpointId, failingSince: disable.since }, "webhook endpoint disabled: failing for too long");
    }
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
      const lanes = await claim(free);
      if (lanes.length === 0) continue;
      for (const lane of lanes) inFlight.add(lane.endpointId);
      // One key per cycle: opened from its sealed form once, not per delivery; a rotation
      // (possibly by another process) is picked up by the next cycle.
      const started = Promise.all([laneInputs(lanes), activeSigningKey(o.state.signingKey, db, o.masterKey)]);
      for (const lane of lanes) {
        const p = started
          .then(([inputs, key]) => runLane(lane, inputs.get(lane.endpointId)!, key))
          .catch((err: unknown) => o.log.warn({ err, endpointId: lane.endpointId, deliveries: lane.deliveries.length }, "webhook delivery bookkeeping failed; its lease will lapse"))
          .finally(() => {
            inFlight.delete(lane.endpointId);
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
      // Stopping cuts attempts in flight: a shutdown must not wait out a slow receiver.
      const closing = sender.stop();
      if (timer) clearTimeout(timer);
      if (retryTimer) clearTimeout(retryTimer.timer);
      await listener?.close();
      await cycle;
      await Promise.allSettled([...running]);
      await closing;
    },
    killWorker: () => sender.killWorker(),
  };
}

/** For tests and operators: deliveries of an event. */
export async function deliveriesOf(db: Executor, eventId: string) {
  return db.selectFrom("webhook_deliveries").selectAll().where("event_id", "=", eventId).execute();
}
