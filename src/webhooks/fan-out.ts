// Which deliveries go where (docs/webhooks.md §5.2): outbox events become one delivery per
// listening endpoint (fan-out), and due deliveries become lanes, one endpoint each (claim).
// The queries are in src/store/webhook-deliveries.ts; the sending is lane-runner.ts's.
//
// Claim: per endpoint only its oldest pending delivery is eligible (deliveries to one endpoint
// go out in event order), when due and not leased. The due heads of all endpoints are read in
// one query, oldest due first, so every endpoint gets its turn however many there are. A claim
// takes, for each of up to `limit` endpoints (a lane each), its head and the deliveries queued
// right behind it that are due too (up to LANE_BATCH), in one transaction for all endpoints.
// A claim is a lease: a worker that dies mid-delivery simply lets it lapse and the deliveries
// are attempted again. On PostgreSQL a claim locks the endpoints' rows FOR UPDATE SKIP LOCKED,
// so several workers share the outbox without two of them taking the same attempt (or one
// taking an endpoint's next deliveries while another holds its head). The head's attempt is
// counted when it is claimed, the others' with their outcome: a worker that dies mid-batch
// leaves the head counted and the rest as they were (sent perhaps, which at-least-once allows:
// same event ids).
import type { Db } from "../store/schema.ts";
import { dialectOf } from "../store/engines.ts";
import type { ServiceState } from "../service-state.ts";
import { organizationChain } from "../store/organizations.ts";
import { newOrderedId } from "../store/util.ts";
import {
  anyEventToFanOut,
  dueHeads,
  eventsToFanOut,
  insertDeliveries,
  leaseDeliveries,
  activeEndpoints,
  lockFreeEndpoints,
  markFannedOut,
  queueFronts,
  releaseLeases,
  type QueuedDelivery,
} from "../store/webhook-deliveries.ts";
import { subscribes } from "../store/webhooks.ts";
import type { LaneDelivery } from "./delivery-records.ts";

/** Events fanned out per transaction; a full batch means more may be waiting. */
export const FAN_OUT_BATCH = 500;

/**
 * Deliveries of one endpoint a lane claims at once and sends one after another: the claim's
 * and the outcomes' writes are shared by the batch instead of paid per delivery. An attempt
 * after the head starts only while half the claim's deadline is left.
 */
export const LANE_BATCH = 64;

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

/** What a fan-out did. */
export interface FanOut {
  /** Events taken (up to FAN_OUT_BATCH; a full batch means more may be waiting). */
  taken: number;
  /** The ids of the endpoints active as the fan-out read them (absent: it read none). */
  active?: string[];
}

/**
 * New events → one delivery per listening endpoint. The active endpoints are read once per batch and matched against each
 * event's (cached) organization chain: an endpoint hears its organization and those below it.
 * Events are taken in id order: ids are UUIDv7 minted at insert, inside the writing
 * transaction, so on SQLite (one writer) id order is commit order. On PostgreSQL concurrent
 * transactions may commit out of id order; delivery order is then best effort.
 */
export async function fanOut(db: Db, chains: ServiceState["chains"]): Promise<FanOut> {
  // Read first: a poll that finds nothing opens no transaction.
  if (!(await anyEventToFanOut(db))) return { taken: 0 };
  const now = Date.now();
  return db.transaction().execute(async (tx) => {
    const events = await eventsToFanOut(tx, FAN_OUT_BATCH);
    if (events.length === 0) return { taken: 0 };
    const active = await activeEndpoints(tx);
    const listening = active.filter((ep) => subscribes(ep.subscriptions));
    const rows = [];
    for (const e of events) {
      const chain = await organizationChain(tx, e.organization_id, chains);
      for (const ep of listening) {
        if (chain.includes(ep.organization_id)) rows.push({ id: newOrderedId(now), event_id: e.id, endpoint_id: ep.id });
      }
    }
    await insertDeliveries(tx, rows, now);
    await markFannedOut(
      tx,
      events.map((e) => e.id),
    );
    return { taken: events.length, active: active.map((ep) => ep.id) };
  });
}

/**
 * Leases the due heads of up to `limit` endpoints not in `busy`, longest-waiting first, each
 * with the due deliveries queued right behind it (up to LANE_BATCH): one lane per endpoint.
 * The lease runs `leaseMs` from now.
 */
export async function claimLanes(db: Db, limit: number, busy: ReadonlySet<string>, leaseMs: number): Promise<Lane[]> {
  const now = Date.now();
  // Read first: a poll with nothing due opens no transaction.
  const candidates = (await dueHeads(db, now, limit + busy.size)).filter((h) => !busy.has(h.endpoint_id)).slice(0, limit);
  if (candidates.length === 0) return [];
  const lease = now + leaseMs;
  return db.transaction().execute(async (tx) => {
    let endpointIds = candidates.map((c) => c.endpoint_id);
    // Another worker claiming for an endpoint holds its row: skip the endpoint rather than
    // its head delivery (SKIP LOCKED on deliveries would hand us its next one, out of order).
    if (dialectOf(tx).locksRows) {
      const mine = await lockFreeEndpoints(tx, endpointIds);
      endpointIds = endpointIds.filter((id) => mine.has(id));
      if (endpointIds.length === 0) return [];
    }
    // The queues again, under the locks (a statement that starts after they are taken):
    // another worker may have moved them on.
    const wanted = dueRuns(await queueFronts(tx, endpointIds, LANE_BATCH), endpointIds, now);
    if (wanted.length === 0) return [];
    // Only the head's attempt is counted now; the others' with their outcome.
    const got = await leaseDeliveries(
      tx,
      wanted.flat().map((r) => r.id),
      wanted.map((run) => run[0]!.id),
      lease,
      now,
    );
    const { lanes, release } = lanesOf(wanted, got, now, lease);
    // Only leased by this claim (never counted: a head not claimed releases its whole run).
    if (release.length) await releaseLeases(tx, release, lease);
    return lanes;
  });
}

/**
 * Per endpoint (in `endpointIds` order), the run from the head of its queue of deliveries that
 * are each due and not leased at `now`; endpoints without one are left out.
 */
export function dueRuns(fronts: readonly QueuedDelivery[], endpointIds: readonly string[], now: number): QueuedDelivery[][] {
  const byEndpoint = new Map<string, QueuedDelivery[]>(endpointIds.map((id) => [id, []]));
  for (const r of fronts) byEndpoint.get(r.endpoint_id)?.push(r);
  const runs: QueuedDelivery[][] = [];
  for (const rows of byEndpoint.values()) {
    rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const end = rows.findIndex((r) => r.next_attempt_at > now || r.lease_until > now);
    const run = end < 0 ? rows : rows.slice(0, end);
    if (run.length) runs.push(run);
  }
  return runs;
}

/**
 * The lanes a claim got: per run, the unbroken stretch from the head that was leased (`got`)
 * — a delivery after a gap would overtake the gap; what was leased after a gap is released.
 */
export function lanesOf(
  runs: readonly QueuedDelivery[][],
  got: ReadonlySet<string>,
  claimedAt: number,
  lease: number,
): { lanes: Lane[]; release: string[] } {
  const lanes: Lane[] = [];
  const release: string[] = [];
  for (const run of runs) {
    let k = 0;
    while (k < run.length && got.has(run[k]!.id)) k++;
    for (const r of run.slice(k)) if (got.has(r.id)) release.push(r.id);
    if (k === 0) continue;
    lanes.push({
      endpointId: run[0]!.endpoint_id,
      claimedAt,
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
  return { lanes, release };
}
