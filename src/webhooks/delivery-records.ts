// What attempts leave behind: their records (operators list them with list_webhook_deliveries),
// the delivery's new state, the endpoint's health, and — after failing for too long — the
// endpoint disabled with its reason.
import type { Executor } from "../store/schema.ts";
import { newOrderedId } from "../store/util.ts";
import { bumpWebhookVersion } from "../store/webhooks.ts";
import type { Attempt } from "./deliver.ts";

/** Longest error text kept per attempt. */
const MAX_ERROR = 1000;

/** One delivery of a lane's batch, as the claim left it (fan-out.ts). */
export interface LaneDelivery {
  id: string;
  endpoint_id: string;
  /** This attempt's number. */
  attempts: number;
  /** Whether the claim already counted this attempt (the batch's head); the others are counted with their outcome. */
  counted: boolean;
}

export interface Outcome {
  delivery: LaneDelivery;
  attempt: Attempt;
  startedAt: number;
  done: number;
  status: "delivered" | "pending" | "failed";
  nextAttemptAt: number;
}

export interface LaneRecord {
  endpointId: string;
  /** The claim's lease_until: it identifies the claim (see applyLane). */
  lease: number;
  /** In the order they were attempted. */
  outcomes: Outcome[];
  /** Claimed but not attempted, or cut by a stop: released uncounted, to go again. */
  givenBack: LaneDelivery[];
  /** The endpoint's failing_since when the lane began. */
  failingSince: number | null;
  /** Disable the endpoint after this outcome (index into outcomes), failing continuously since `since`. */
  disable?: { index: number; since: number };
}

/**
 * Everything a lane's batch leaves behind, in one transaction: the attempts' records, the
 * deliveries' new states, the endpoint's health, the release of what was not attempted, and
 * the endpoint disabled if it has failed for too long. A delivery changes only if it is still
 * held by this claim (pending, its lease the claim's: a lapsed lease is taken over with a later
 * one, and a stop or the pause of an endpoint changes it meanwhile): a delivery cancelled meanwhile
 * stays cancelled, and one whose lease lapsed belongs to whoever claimed it next. Returns the
 * ids whose outcome was applied.
 */
export async function applyLane(tx: Executor, r: LaneRecord, now: number): Promise<Set<string>> {
  const errorOf = (a: Attempt) => (a.error === undefined ? null : a.error.slice(0, MAX_ERROR));
  if (r.outcomes.length > 0) {
    await tx
      .insertInto("webhook_delivery_attempts")
      .values(
        r.outcomes.map((o) => ({
          id: newOrderedId(o.startedAt),
          delivery_id: o.delivery.id,
          attempt: o.delivery.attempts,
          started_at: o.startedAt,
          duration_ms: Math.max(0, o.done - o.startedAt),
          status: o.attempt.status ?? null,
          error: errorOf(o.attempt),
        })),
      )
      .onConflict((oc) => oc.columns(["delivery_id", "attempt"]).doNothing())
      .execute();
  }
  // Outcomes alike (usually: all delivered with the same status) are applied by one statement.
  const groups = new Map<string, Outcome[]>();
  for (const o of r.outcomes) {
    const k = JSON.stringify([
      o.status,
      o.attempt.status ?? null,
      errorOf(o.attempt),
      o.status === "pending" ? o.nextAttemptAt : 0,
      o.delivery.attempts,
      o.delivery.counted,
    ]);
    const g = groups.get(k);
    if (g) g.push(o);
    else groups.set(k, [o]);
  }
  const applied = new Set<string>();
  for (const g of groups.values()) {
    const first = g[0]!;
    const rows = await tx
      .updateTable("webhook_deliveries")
      .set((eb) => ({
        status: first.status,
        next_attempt_at: first.status === "pending" ? first.nextAttemptAt : Math.max(...g.map((o) => o.done)),
        lease_until: 0,
        last_status: first.attempt.status ?? null,
        last_error: errorOf(first.attempt),
        updated_at: now,
        // The head's attempt was counted by the claim; the others' are counted now.
        ...(first.delivery.counted ? {} : { attempts: eb("attempts", "+", 1) }),
      }))
      .where(
        "id",
        "in",
        g.map((o) => o.delivery.id),
      )
      .where("status", "=", "pending")
      .where("lease_until", "=", r.lease)
      .where("attempts", "=", first.delivery.counted ? first.delivery.attempts : first.delivery.attempts - 1)
      .returning("id")
      .execute();
    for (const x of rows) applied.add(x.id);
  }
  if (r.givenBack.length > 0) {
    const counted = r.givenBack.filter((d) => d.counted).map((d) => d.id);
    await tx
      .updateTable("webhook_deliveries")
      .set((eb) => ({
        lease_until: 0,
        ...(counted.length
          ? { attempts: eb("attempts", "-", eb.case().when("id", "in", counted).then(eb.lit(1)).else(eb.lit(0)).end()) }
          : {}),
      }))
      .where(
        "id",
        "in",
        r.givenBack.map((d) => d.id),
      )
      .where("status", "=", "pending")
      .where("lease_until", "=", r.lease)
      .execute();
  }
  // The endpoint's health after the outcomes that counted; written only on a transition, so a
  // healthy endpoint costs no write.
  let failingSince = r.failingSince;
  for (const o of r.outcomes)
    if (applied.has(o.delivery.id)) failingSince = o.status === "delivered" ? null : (failingSince ?? o.startedAt);
  if (failingSince === null && r.failingSince !== null) {
    await tx.updateTable("webhook_endpoints").set({ failing_since: null }).where("id", "=", r.endpointId).execute();
  } else if (failingSince !== null && r.failingSince === null) {
    await tx
      .updateTable("webhook_endpoints")
      .set({ failing_since: failingSince })
      .where("id", "=", r.endpointId)
      .where("failing_since", "is", null)
      .execute();
  }
  // Only on an outcome that counted (not one whose lease another worker took over).
  const d = r.disable;
  if (d && applied.has(r.outcomes[d.index]!.delivery.id)) {
    const o = r.outcomes[d.index]!;
    await disableFailingEndpoint(tx, r.endpointId, d.since, o.attempt, o.done);
  }
  return applied;
}

/** "HTTP 503", "connect ECONNREFUSED …", or both. */
export function describeAttempt(a: Attempt): string {
  return [a.status === undefined ? undefined : `HTTP ${a.status}`, a.error].filter(Boolean).join(", ") || "no answer";
}

/**
 * Disables an endpoint that has failed continuously since `since`: no new deliveries are
 * made for it, and what it still had pending is failed (operators can redeliver it once the
 * endpoint is re-enabled). The reason is shown in the endpoint's view.
 */
export async function disableFailingEndpoint(tx: Executor, endpointId: string, since: number, last: Attempt, now: number): Promise<void> {
  const hours = Math.floor((now - since) / 3_600_000);
  const span = hours >= 1 ? `${hours} h` : `${Math.round((now - since) / 1000)} s`;
  const reason =
    `disabled automatically: every delivery attempt failed since ${new Date(since).toISOString()} (${span}); last attempt: ${describeAttempt(last)}`.slice(
      0,
      MAX_ERROR,
    );
  const res = await tx
    .updateTable("webhook_endpoints")
    .set({ is_active: 0, disabled_reason: reason, disabled_at: now, updated_at: now })
    .where("id", "=", endpointId)
    .where("is_active", "=", 1)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) return;
  await tx
    .updateTable("webhook_deliveries")
    .set({
      status: "failed",
      last_error: "endpoint disabled after failing continuously; redeliver once it is re-enabled",
      lease_until: 0,
      updated_at: now,
    })
    .where("endpoint_id", "=", endpointId)
    .where("status", "=", "pending")
    .execute();
  // Writers stop writing events for it (their cache of who listens is per version).
  await bumpWebhookVersion(tx);
}
