// The write side of webhooks: every activity status change in an organization that (or
// whose ancestor) has an endpoint writes its event, in the same transaction as the change.
// Whether anyone listens is answered from memory: the set of organizations owning active
// endpoints is cached per webhook version, which each request reads with its credential.
import type { Executor } from "../store/schema.ts";
import { organizationChain } from "../store/organizations.ts";
import { EVENT_ACTIVITY_UPDATES, insertEvent, organizationsWithEndpoints, webhookVersion } from "../store/webhooks.ts";
import { newOrderedId } from "../store/util.ts";
import type { ActivityView } from "../pipeline/activity-view.ts";

let listeners: { version: number; organizations: Set<string> } | undefined;

/** Does an event of this organization reach any endpoint? `knownVersion` saves a read. */
export async function hasListeners(db: Executor, organizationId: string, knownVersion?: number): Promise<boolean> {
  const version = knownVersion ?? (await webhookVersion(db));
  if (!listeners || listeners.version !== version) {
    listeners = { version, organizations: await organizationsWithEndpoints(db) };
  }
  if (listeners.organizations.size === 0) return false;
  const chain = await organizationChain(db, organizationId);
  return chain.some((id) => listeners!.organizations.has(id));
}

/** Writes the ACTIVITY_UPDATES event for the activity as it now stands. */
export async function recordActivityEvent(tx: Executor, view: ActivityView, now: number): Promise<void> {
  await insertEvent(tx, {
    id: newOrderedId(now),
    organization_id: view.organizationId,
    event_type: EVENT_ACTIVITY_UPDATES,
    activity_id: view.id,
    payload: JSON.stringify(view),
    fanned_out: 0,
    created_at: now,
  });
}
