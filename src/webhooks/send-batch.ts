// The sending half of a lane (lane-runner.ts): one endpoint's claimed batch, sent one delivery
// after another in event order. Plain data in, plain data out, and no database: the same
// function runs on the main thread or in the delivery worker (delivery-worker.ts), whose own
// event loop keeps lanes moving while the API keeps the main one busy. The dispatcher records
// what it returns (delivery-records.ts applyLane).
import { attemptDelivery, classify, type Attempt, type DeliveryAgents } from "./deliver.ts";
import { retryDelayMs } from "./retry-schedule.ts";
import type { SigningKey } from "./signing-keys.ts";
import { dialAddress, type WebhookUrlPolicy } from "./url-policy.ts";

export interface BatchDelivery {
  id: string;
  eventId: string;
  /** This attempt's number. */
  attempts: number;
  scheduleOffset: number;
  /** Absent when the event row was not found (the attempt fails, retried). */
  event?: { eventType: string; organizationId: string; payload: string };
}

export interface Batch {
  url: string;
  /** In event order. */
  deliveries: BatchDelivery[];
  /** The claim's deadline (claim + timeout): every attempt is over by then. */
  deadlineAt: number;
  timeoutMs: number;
  schedule: readonly number[];
  disableAfterMs: number;
  /** The endpoint's failing_since when the lane began. */
  failingSince: number | null;
}

export interface BatchOutcome {
  deliveryId: string;
  attempt: Attempt;
  startedAt: number;
  done: number;
  status: "delivered" | "pending" | "failed";
  nextAttemptAt: number;
  /** The retry delay, when retried. */
  delay?: number;
}

export interface BatchResult {
  /** In the order attempted. */
  outcomes: BatchOutcome[];
  /** Claimed but not attempted (or cut short): released uncounted, to go again. */
  givenBack: string[];
  failingSince: number | null;
  /** Disable the endpoint after outcomes[index], failing continuously since `since`. */
  disable?: { index: number; since: number };
}

/** Nothing attempted: the whole batch goes again (a stop, or a worker that died). */
export function givenBackWhole(batch: Batch): BatchResult {
  return { outcomes: [], givenBack: batch.deliveries.map((d) => d.id), failingSince: batch.failingSince };
}

export async function sendBatch(
  batch: Batch,
  key: SigningKey,
  ctx: { signal: AbortSignal; agents: DeliveryAgents; urls: WebhookUrlPolicy },
): Promise<BatchResult> {
  const { deliveries, deadlineAt, timeoutMs } = batch;
  const outcomes: BatchOutcome[] = [];
  let givenBack: string[] = [];
  let failingSince = batch.failingSince;
  let disable: BatchResult["disable"];
  const rest = (from: number) => deliveries.slice(from).map((d) => d.id);
  // The endpoint's address is resolved and checked once per batch, not per attempt.
  let target: Promise<{ address: string; family: 4 | 6 }> | undefined;
  for (let i = 0; i < deliveries.length; i++) {
    const d = deliveries[i]!;
    // Stopping, or too little of the claim's deadline left for a fair attempt: the rest go
    // again, uncounted (at once, from this or another worker).
    if (ctx.signal.aborted || (i > 0 && deadlineAt - Date.now() < timeoutMs / 2)) {
      givenBack = rest(i);
      break;
    }
    const startedAt = Date.now();
    let attempt: Attempt;
    try {
      if (!d.event) throw new Error(`event ${d.eventId} not found`);
      if (!target) {
        target = dialAddress(new URL(batch.url), ctx.urls);
        target.catch(() => {}); // each attempt that awaits it sees the failure
      }
      attempt = await attemptDelivery({
        url: batch.url,
        eventId: d.eventId,
        eventType: d.event.eventType,
        organizationId: d.event.organizationId,
        body: Buffer.from(d.event.payload, "utf8"),
        key,
        // From the claim, not from now: the lease was taken then.
        deadlineAt,
        now: startedAt,
        signal: ctx.signal,
        agents: ctx.agents,
        target,
        urls: ctx.urls,
      });
    } catch (err) {
      attempt = { error: (err as Error).message };
    }
    const verdict = classify(attempt);
    // Cut by a stop (not the receiver's fault), or — after the head — by the deadline the
    // batch shares, before the attempt had its full time: given back, costing no attempt of
    // the schedule; the same event id goes out again.
    if (verdict !== "delivered" && (ctx.signal.aborted || (i > 0 && attempt.deadline))) {
      givenBack = rest(i);
      break;
    }
    const done = Date.now();
    const delay = verdict === "retry" ? retryDelayMs(batch.schedule, d.attempts - d.scheduleOffset) : undefined;
    const status = verdict === "delivered" ? "delivered" : delay !== undefined ? "pending" : "failed";
    outcomes.push({
      deliveryId: d.id,
      attempt,
      startedAt,
      done,
      status,
      nextAttemptAt: done + (delay ?? 0),
      ...(delay === undefined ? {} : { delay }),
    });
    failingSince = verdict === "delivered" ? null : (failingSince ?? startedAt);
    if (failingSince !== null && done - failingSince >= batch.disableAfterMs) {
      disable = { index: outcomes.length - 1, since: failingSince };
      givenBack = rest(i + 1);
      break;
    }
    // A retry holds the endpoint's queue: what follows waits for it.
    if (status === "pending") {
      givenBack = rest(i + 1);
      break;
    }
  }
  return { outcomes, givenBack, failingSince, ...(disable ? { disable } : {}) };
}
