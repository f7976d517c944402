// Delivering a claimed lane (steps 3 and 4 of docs/webhooks.md §5.2; docs/webhooks.md §5.3):
// what its batch needs is read, the batch is sent through the LaneSender (the delivery worker
// thread, or this thread; send-batch.ts signs and does the HTTP), and the result is recorded
// in one transaction (delivery-records.ts applyLane) and logged.
//
// A lane sends its batch one delivery after another, in event order (one in flight per
// endpoint), over a kept-alive connection; each attempt is signed (fresh timestamp and
// signature per attempt, same event id). All attempts of a batch end by the claim's deadline
// (claim + timeout), which ends before the lease does; an attempt after the head that this
// shared deadline cuts short is given back uncounted (it did not have its full time), as is the
// rest of the batch. A delivery that is not delivered ends the batch when it will be retried
// (the endpoint's queue waits for it) and not when it failed for good (the endpoint's next
// delivery goes). The record holds the attempts, the outcomes (delivered / retried on the
// schedule, retry-schedule.ts / failed), the release of what was not attempted, and an
// endpoint that has failed continuously for `disableAfterMs` disabled with its reason.
import type { Db } from "../store/schema.ts";
import { cancelPending, laneEndpoints, laneEvents } from "../store/webhook-deliveries.ts";
import type { SigningKey } from "./signing-keys.ts";
import { applyLane, type Outcome } from "./delivery-records.ts";
import type { Batch } from "./send-batch.ts";
import type { LaneSender } from "./delivery-worker.ts";
import type { Claimed, Lane } from "./fan-out.ts";

export interface LaneInput {
  endpoint: { url: string; is_active: number; failing_since?: number | null } | undefined;
  events: Map<string, { id: string; event_type: string; organization_id: string; payload: string }>;
}

/** What the lanes of a claim need: their endpoints and events, read once for all of them. */
export async function laneInputs(db: Db, lanes: readonly Lane[]): Promise<Map<string, LaneInput>> {
  const eventIds = lanes.flatMap((l) => l.deliveries.map((d) => d.event_id));
  const [endpoints, events] = await Promise.all([
    laneEndpoints(
      db,
      lanes.map((l) => l.endpointId),
    ),
    laneEvents(db, eventIds),
  ]);
  const ep = new Map(endpoints.map((e) => [e.id, e]));
  const ev = new Map(events.map((e) => [e.id, e]));
  return new Map(lanes.map((l) => [l.endpointId, { endpoint: ep.get(l.endpointId), events: ev }]));
}

export interface LaneSettings {
  db: Db;
  sender: LaneSender;
  /** Total deadline of one attempt; the batch's shared deadline is the claim's time plus this. */
  timeoutMs: number;
  /** The effective retry schedule (dispatcher.ts effectiveSchedule). */
  schedule: readonly number[];
  disableAfterMs: number;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/**
 * Sends a lane's batch in order, then records it all at once. Returns the delays of the retries
 * it recorded (the caller wakes for those due before its next poll).
 */
export async function runLane(s: LaneSettings, lane: Lane, input: LaneInput, key: SigningKey): Promise<number[]> {
  const { endpoint, events } = input;
  if (!endpoint || endpoint.is_active !== 1) {
    await cancelPending(
      s.db,
      lane.deliveries.map((d) => d.id),
      Date.now(),
    );
    return [];
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
    deadlineAt: lane.claimedAt + s.timeoutMs,
    timeoutMs: s.timeoutMs,
    schedule: s.schedule,
    disableAfterMs: s.disableAfterMs,
    failingSince: endpoint.failing_since ?? null,
  };
  const sent = await s.sender.send(batch, key);
  const byId = new Map(lane.deliveries.map((d) => [d.id, d]));
  const outcomes: (Outcome & { delay?: number })[] = sent.outcomes.map(({ deliveryId, ...x }) => ({
    ...x,
    delivery: byId.get(deliveryId)!,
  }));
  const givenBack = sent.givenBack.map((id) => byId.get(id)!);
  const disable = sent.disable;
  const applied = await s.db
    .transaction()
    .execute((tx) =>
      applyLane(
        tx,
        { endpointId: lane.endpointId, lease: lane.lease, outcomes, givenBack, failingSince: endpoint.failing_since ?? null, disable },
        Date.now(),
      ),
    );
  const retries: number[] = [];
  for (const x of outcomes) {
    const d = x.delivery as Claimed;
    const fields = {
      deliveryId: d.id,
      eventId: d.event_id,
      endpointId: d.endpoint_id,
      attempt: d.attempts,
      status: x.attempt.status,
      error: x.attempt.error,
    };
    const recorded = applied.has(d.id);
    if (!recorded)
      s.log.warn(fields, "webhook delivery changed while it was attempted (cancelled, or its lease lapsed); outcome not applied");
    else if (x.status === "failed") s.log.warn(fields, "webhook delivery failed for good; the endpoint's next delivery goes");
    else if (x.status === "pending") s.log.info({ ...fields, retryInMs: x.delay }, "webhook delivery will be retried");
    if (recorded && x.status === "pending" && x.delay !== undefined) retries.push(x.delay);
  }
  if (disable && applied.has(outcomes[disable.index]!.delivery.id)) {
    s.log.warn({ endpointId: lane.endpointId, failingSince: disable.since }, "webhook endpoint disabled: failing for too long");
  }
  return retries;
}
