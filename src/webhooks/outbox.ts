// The write side of webhooks: every activity status change in an organization that (or
// whose ancestor) has an endpoint writes its event, in the same transaction as the change.
// Whether anyone listens is answered from memory: the set of organizations owning active
// endpoints is cached per webhook version, which each request reads with its credential
// (ListenerCache: the cache never goes back to an older version).
import type { Executor } from "../store/schema.ts";
import { organizationChain } from "../store/organizations.ts";
import { EVENT_ACTIVITY_UPDATES, insertEvent, organizationsWithEndpoints, webhookVersion } from "../store/webhooks.ts";
import { newOrderedId } from "../store/util.ts";
import type { ActivityView } from "../schemas/views.ts";

interface Snapshot {
  version: number;
  organizations: ReadonlySet<string>;
}

/**
 * Who listens, per webhook version. Lookups overlap (each awaits the database), so a lookup
 * that read an older version may finish after one that read a newer version: the cache only
 * ever moves forward, and each lookup decides from the snapshot it holds, never from whatever
 * the shared field holds after an await. A snapshot newer than the caller's version is as
 * good as an exact one (it reflects every change the caller knows of, and later ones).
 * One instance per store, on the service state (src/service-state.ts).
 */
export class ListenerCache {
  #current: Snapshot | undefined;

  constructor(
    private readonly load: (db: Executor) => Promise<Set<string>> = organizationsWithEndpoints,
    private readonly chainOf: (db: Executor, organizationId: string) => Promise<readonly string[]> = (db, id) => organizationChain(db, id),
  ) {}

  async snapshot(db: Executor, knownVersion?: number): Promise<Snapshot> {
    const version = knownVersion ?? (await webhookVersion(db));
    const cached = this.#current;
    if (cached && cached.version >= version) return cached;
    const fresh: Snapshot = { version, organizations: await this.load(db) };
    // Another lookup may have stored a newer version meanwhile: never replace it.
    if (!this.#current || this.#current.version < fresh.version) this.#current = fresh;
    return fresh;
  }

  async hasListeners(db: Executor, organizationId: string, knownVersion?: number): Promise<boolean> {
    const snap = await this.snapshot(db, knownVersion);
    if (snap.organizations.size === 0) return false;
    const chain = await this.chainOf(db, organizationId);
    return chain.some((id) => snap.organizations.has(id));
  }
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
