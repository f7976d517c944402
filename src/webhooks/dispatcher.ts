// The read side of webhooks: turns outbox events into deliveries and delivers them
// (docs/webhooks.md §5). This module puts the parts together, one dispatcher per `sigil serve`:
//
// - scheduler.ts: when to look — wakes, polls, the retry timer, lanes in flight, stop.
// - fan-out.ts: which deliveries go where — events to one delivery per listening endpoint,
//   due deliveries to lanes (one endpoint each, its head and what is due behind it, leased).
// - lane-runner.ts: a lane delivered — sent through the LaneSender (delivery-worker.ts: on a
//   worker thread by default, SIGIL_WEBHOOK_WORKER; send-batch.ts signs and does the HTTP) and
//   its result recorded in one transaction (delivery-records.ts).
// - src/store/webhook-deliveries.ts: the queries.
//
// Per endpoint one lane at a time, in event order (docs/webhooks.md §2.4); a claim is a lease
// that lapses if this process dies, so delivery is at least once (docs/webhooks.md §2.5).
// Idle polls only read: the outbox and the due heads are read before any transaction is
// opened. While no endpoint is active a poll reads nothing at all when the dispatcher will
// hear of a new one anyway — on SQLite (one node) every event is written by this process,
// which wakes it; on PostgreSQL a LISTEN connection hears every endpoint change from any
// server (change-listener.ts) — and reads only the webhook version otherwise
// (docs/webhooks.md §5.4).
import type { Db } from "../store/schema.ts";
import { dialectOf } from "../store/engines.ts";
import type { MasterKey } from "../crypto/envelope.ts";
import type { ServiceState } from "../service-state.ts";
import { webhookVersion } from "../store/webhooks.ts";
import { countActiveEndpoints, voidLeases } from "../store/webhook-deliveries.ts";
import { activeSigningKey } from "./signing-keys.ts";
import { DEFAULT_DISABLE_AFTER_MS, DEFAULT_RETRY_SCHEDULE_MS } from "./retry-schedule.ts";
import { listenForChanges, type ChangeListener } from "./change-listener.ts";
import { laneSender } from "./delivery-worker.ts";
import { STRICT_WEBHOOK_URLS, type WebhookUrlPolicy } from "./url-policy.ts";
import { DispatchScheduler } from "./scheduler.ts";
import { claimLanes, fanOut, FAN_OUT_BATCH, type FanOut } from "./fan-out.ts";
import { laneInputs, runLane, type LaneSettings } from "./lane-runner.ts";

export interface DispatcherOptions {
  db: Db;
  /** The store's caches (Service.state): organization chains, the opened signing key. */
  state: ServiceState;
  masterKey: MasterKey;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** Idle poll period; commits that write events wake the dispatcher at once. */
  pollMs?: number;
  /**
   * Least time between the starts of two cycles: wakes sooner than that after a cycle are
   * answered together by the next one (scheduler.ts), so a busy API pays one fan-out and one
   * claim per gap, not per commit.
   */
  cycleGapMs?: number;
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
  cycleGapMs: 20,
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

/**
 * Active endpoints as of a webhook version (a counter every endpoint change increments).
 * Nothing can be due while no endpoint is active: events are written only for active
 * endpoints, and every change to an endpoint bumps the version.
 */
class ActiveEndpoints {
  private known: { version: number; active: number } | undefined;

  /** An endpoint changed somewhere: count again. */
  forget(): void {
    this.known = undefined;
  }

  /**
   * Whether a cycle can skip its look. A full cycle (a wake) looks at everything; a poll
   * looks only when the endpoints may have changed. `lanes`: lanes in flight; `hears`: every
   * endpoint change would wake this dispatcher (SQLite, or PostgreSQL while listening).
   */
  async nothingToDo(db: Db, full: boolean, lanes: number, hears: boolean): Promise<boolean> {
    if (full) {
      // Woken while believing no endpoint is active: something changed; count again.
      if (this.known?.active === 0) this.known = undefined;
      return false;
    }
    if (this.known?.active === 0 && lanes === 0 && hears) return true;
    const version = await webhookVersion(db);
    if (this.known?.version !== version) {
      const active = await countActiveEndpoints(db);
      // Everything written before this version still gets its one full look below.
      const previous = this.known;
      this.known = { version, active };
      if (previous === undefined || previous.active > 0) return false;
    }
    return this.known.active === 0 && lanes === 0;
  }
}

export function startDispatcher(opts: DispatcherOptions): Dispatcher {
  const o = {
    ...DISPATCH_DEFAULTS,
    ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)),
  } as Required<DispatcherOptions>;
  const { db } = o;
  const dialect = dialectOf(db);
  const leaseMs = o.timeoutMs + LEASE_GRACE_MS;
  const lane: LaneSettings = {
    db,
    // Sends the lanes (on the delivery worker, or here), over kept-alive connections of its own.
    sender: laneSender({ worker: o.worker, maxSocketsPerOrigin: Math.max(o.concurrency, 1), log: o.log, urls: o.webhookUrls }),
    timeoutMs: o.timeoutMs,
    schedule: effectiveSchedule(o.retrySchedule, opts.maxAttempts),
    disableAfterMs: o.disableAfterMs,
    log: o.log,
  };
  const endpoints = new ActiveEndpoints();
  const scheduler: DispatchScheduler = new DispatchScheduler({
    pollMs: o.pollMs,
    minGapMs: o.cycleGapMs,
    cycle,
    onCycleError: (err) => o.log.warn({ err }, "webhook dispatcher cycle failed"),
  });
  const listener: ChangeListener | undefined =
    dialect.notifies && opts.databaseUrl
      ? listenForChanges(
          opts.databaseUrl,
          () => {
            endpoints.forget();
            scheduler.wake();
          },
          o.log,
        )
      : undefined;

  async function cycle(full: boolean): Promise<void> {
    const hears = dialect.singleProcess || listener?.listening === true;
    if (await endpoints.nothingToDo(db, full, scheduler.running, hears)) return;
    // Fan out everything new before claiming, in batches, so a burst does not make each
    // cycle re-read its whole backlog.
    let fanned: FanOut;
    do fanned = await fanOut(db, o.state.chains);
    while (fanned.taken === FAN_OUT_BATCH && !scheduler.isStopped);
    // Every endpoint that was active as the fan-out read them has a lane in flight: nothing
    // can be claimed; each is looked at again when its lane ends (docs/webhooks.md §5.4).
    if (fanned.active && fanned.active.every((id) => scheduler.inFlight.has(id))) return;
    const free = o.concurrency - scheduler.running;
    if (free <= 0) return;
    const lanes = await claimLanes(db, free, scheduler.inFlight, leaseMs);
    if (lanes.length === 0) return;
    // One key per cycle: opened from its sealed form once, not per delivery; a rotation
    // (possibly by another process) is picked up by the next cycle.
    const started = Promise.all([laneInputs(db, lanes), activeSigningKey(o.state.signingKey, db, o.masterKey)]);
    for (const l of lanes) {
      const work = started
        .then(([inputs, key]) => runLane(lane, l, inputs.get(l.endpointId)!, key))
        .then((retries) => {
          // A retry due before the next poll is looked at when it is due, not at the poll.
          for (const ms of retries) if (ms < o.pollMs) scheduler.wakeIn(ms);
        })
        .catch((err: unknown) =>
          o.log.warn(
            { err, endpointId: l.endpointId, deliveries: l.deliveries.length },
            "webhook delivery bookkeeping failed; its lease will lapse",
          ),
        );
      // In flight until it ends; then the endpoint's next delivery may be due (a wake).
      scheduler.startLane(l.endpointId, work);
    }
  }

  // SQLite has a single node: leases left by a previous run of this process are void.
  const start = dialect.singleProcess ? voidLeases(db) : Promise.resolve();
  void start.then(scheduler.wake, (err: unknown) => o.log.warn({ err }, "webhook dispatcher could not start"));

  return {
    wake: scheduler.wake,
    async stop() {
      const stopping = scheduler.stop();
      // Stopping cuts attempts in flight: a shutdown must not wait out a slow receiver.
      const closing = lane.sender.stop();
      await listener?.close();
      await stopping;
      await closing;
    },
    killWorker: () => lane.sender.killWorker(),
  };
}
