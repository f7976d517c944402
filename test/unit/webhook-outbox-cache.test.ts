// The outbox's "who listens" cache under overlapping lookups: a lookup that read an older
// webhook version and finishes last must neither replace the newer snapshot nor make a
// concurrent lookup decide from it (an activity would then commit without its event).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ListenerCache } from "../../src/webhooks/outbox.ts";
import type { Executor } from "../../src/store/schema.ts";

const db = {} as Executor;

/** A promise the test settles by hand, to order the awaits of overlapping lookups. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe("outbox listener cache", () => {
  it("an older version finishing last neither overwrites the newer snapshot nor misleads a lookup in flight", async () => {
    const loads: { resolve: (s: Set<string>) => void }[] = [];
    const chains: { resolve: (c: string[]) => void }[] = [];
    const cache = new ListenerCache(
      () => {
        const d = deferred<Set<string>>();
        loads.push(d);
        return d.promise;
      },
      () => {
        const d = deferred<string[]>();
        chains.push(d);
        return d.promise;
      },
    );
    const tick = () => new Promise((r) => setImmediate(r));

    // A knows version 5 (no endpoint yet); B knows version 6 (org-1 has just got one).
    const a = cache.hasListeners(db, "org-1", 5);
    const b = cache.hasListeners(db, "org-1", 6);
    await tick();
    assert.equal(loads.length, 2, "both versions are loaded");
    loads[1]!.resolve(new Set(["org-1"])); // B's load (version 6) finishes first
    await tick();
    assert.equal(chains.length, 1, "B goes on to read the organization chain");
    loads[0]!.resolve(new Set()); // A's older load finishes last
    await tick();
    chains[0]!.resolve(["org-1"]);
    assert.equal(await b, true, "B decides from the version-6 snapshot it loaded");
    assert.equal(await a, false, "A decides from its own snapshot (no listener at version 5)");

    // The cache kept version 6: a lookup at 6 (or an older one) loads nothing and sees the listener.
    const c = cache.hasListeners(db, "org-1", 6);
    const older = cache.hasListeners(db, "org-1", 5);
    await tick();
    assert.equal(loads.length, 2, "no load: version 6 is cached");
    for (const d of chains.slice(1)) d.resolve(["org-1"]);
    assert.equal(await c, true);
    assert.equal(await older, true, "a newer snapshot answers an older version (it reflects every change the caller knows of)");

    // A newer version is loaded again.
    const d7 = cache.hasListeners(db, "org-1", 7);
    await tick();
    assert.equal(loads.length, 3);
    loads[2]!.resolve(new Set());
    assert.equal(await d7, false, "version 7: the endpoint is gone (no chain read needed)");
  });
});
