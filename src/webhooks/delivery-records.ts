// What an attempt leaves behind: its record (operators list them with list_webhook_deliveries),
// the delivery's new state, the endpoint's health, and — after failing for too long — the
// endpoint disabled with its reason.
import type { Executor } from "../store/schema.ts";
import { newOrderedId } from "../store/util.ts";
import { bumpWebhookVersion } from "../store/webhooks.ts";
import type { Attempt } from "./deliver.ts";

/** Longest error text kept per attempt. */
const MAX_ERROR = 1000;

export interface Outcome {
  delivery: { id: string; endpoint_id: string; attempts: number };
  attempt: Attempt;
  startedAt: number;
  done: number;
  status: "delivered" | "pending" | "failed";
  nextAttemptAt: number;
  /** The endpoint's failing_since after this attempt (null: it just succeeded). */
  failingSince: number | null;
  endpointWasFailing: boolean;
}

/**
 * Records the attempt and applies its outcome. The delivery changes only if it is still the
 * attempt this worker claimed (pending, same attempt count): a delivery cancelled meanwhile
 * stays cancelled, and one whose lease lapsed belongs to whoever claimed it next. Returns
 * whether the outcome was applied.
 */
export async function recordOutcome(tx: Executor, o: Outcome): Promise<boolean> {
  const error = o.attempt.error === undefined ? null : o.attempt.error.slice(0, MAX_ERROR);
  await tx
    .insertInto("webhook_delivery_attempts")
    .values({
      id: newOrderedId(o.startedAt),
      delivery_id: o.delivery.id,
      attempt: o.delivery.attempts,
      started_at: o.startedAt,
      duration_ms: Math.max(0, o.done - o.startedAt),
      status: o.attempt.status ?? null,
      error,
    })
    .onConflict((oc) => oc.columns(["delivery_id", "attempt"]).doNothing())
    .execute();
  const res = await tx
    .updateTable("webhook_deliveries")
    .set({
      status: o.status,
      next_attempt_at: o.nextAttemptAt,
      lease_until: 0,
      last_status: o.attempt.status ?? null,
      last_error: error,
      updated_at: o.done,
    })
    .where("id", "=", o.delivery.id)
    .where("status", "=", "pending")
    .where("attempts", "=", o.delivery.attempts)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) return false;
  // The endpoint's health changes only on a transition, so a healthy endpoint costs no write.
  const endpointId = o.delivery.endpoint_id;
  if (o.failingSince === null && o.endpointWasFailing) {
    await tx.updateTable("webhook_endpoints").set({ failing_since: null }).where("id", "=", endpointId).execute();
  } else if (o.failingSince !== null && !o.endpointWasFailing) {
    await tx.updateTable("webhook_endpoints").set({ failing_since: o.failingSince }).where("id", "=", endpointId).where("failing_since", "is", null).execute();
  }
  return true;
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
  const reason = `disabled automatically: every delivery attempt failed since ${new Date(since).toISOString()} (${span}); last attempt: ${describeAttempt(last)}`.slice(0, MAX_ERROR);
  const res = await tx
    .updateTable("webhook_endpoints")
    .set({ is_active: 0, disabled_reason: reason, disabled_at: now, updated_at: now })
    .where("id", "=", endpointId)
    .where("is_active", "=", 1)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) return;
  await tx
    .updateTable("webhook_deliveries")
    .set({ status: "failed", last_error: "endpoint disabled after failing continuously; redeliver once it is re-enabled", lease_until: 0, updated_at: now })
    .where("endpoint_id", "=", endpointId)
    .where("status", "=", "pending")
    .execute();
  // Writers stop writing events for it (their cache of who listens is per version).
  await bumpWebhookVersion(tx);
}
