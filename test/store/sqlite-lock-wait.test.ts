// SQLite lock waits off the event loop, and group commit when BEGIN fails.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import Database from "better-sqlite3";
import { sql } from "kysely";
import { scratchStore, type ScratchStore } from "../helpers/store.ts";
import { isStoreUnavailable, StoreUnavailableError, type Store } from "../../src/store/db.ts";
import { groupCommit } from "../../src/store/transactions.ts";
import { newId } from "../../src/store/util.ts";
import type { Db } from "../../src/store/schema.ts";

/** The longest gap between 5 ms interval ticks while `p` is pending: how long the event loop froze. */
async function maxLoopStall<T>(p: Promise<T>): Promise<{ value: PromiseSettledResult<T>; stallMs: number; ticks: number }> {
  let last = performance.now();
  let stallMs = 0;
  let ticks = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
    ticks++;
  }, 5);
  const [value] = await Promise.allSettled([p]);
  clearInterval(timer);
  stallMs = Math.max(stallMs, performance.now() - last);
  return { value, stallMs, ticks };
}

/** Resolves once `cond()` holds, checking every few ms; fails after `ms`. */
async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("SQLite lock waits (another connection holds the write lock)", () => {
  let scratch: ScratchStore;
  let store: Store;
  let orgId: string;
  let other: Database.Database;
  const LOCK_TIMEOUT_MS = 1_500;

  before(async () => {
    scratch = await scratchStore("sqlite", { lockTimeoutMs: LOCK_TIMEOUT_MS });
    ({ store, orgId } = scratch);
    // A second connection, as `sigil init` or an operator's shell would have.
    other = new Database(path.join(scratch.dataDir, "sigil.db"));
  });
  after(async () => {
    if (other?.inTransaction) other.exec("ROLLBACK");
    other?.close();
    await scratch?.cleanup();
  });

  const tag = (name: string) => ({ id: newId(), organization_id: orgId, name, created_at: 1, updated_at: 1 });

  it("an activity waits for the lock without freezing the event loop, reads go on, and it commits after release", async () => {
    other.exec("BEGIN IMMEDIATE");
    let settled = false;
    const job = store.transact((tx) => tx.insertInto("user_tags").values(tag("waited")).execute()).finally(() => (settled = true));
    const measured = maxLoopStall(
      (async () => {
        // Held for a while (40 ticks ≈ 200 ms) with the activity still waiting.
        let ticks = 0;
        const t = setInterval(() => ticks++, 5);
        await until(() => ticks >= 40, 5_000, "ticks");
        clearInterval(t);
        assert.equal(settled, false, "the activity must wait for the lock");
        // Reads are not blocked by the writer (WAL), nor by our waiting writer.
        const started = performance.now();
        await sql`select count(*) as n from user_tags`.execute(store.db);
        assert.ok(performance.now() - started < 100, "a read while the lock is held must be prompt");
        other.exec("COMMIT");
        await job;
      })(),
    );
    const { value, stallMs } = await measured;
    assert.equal(value.status, "fulfilled", String((value as PromiseRejectedResult).reason));
    assert.ok(stallMs < 100, `event loop stalled ${stallMs.toFixed(0)} ms while waiting for the lock`);
    const row = await store.db.selectFrom("user_tags").select("name").where("name", "=", "waited").executeTakeFirst();
    assert.equal(row?.name, "waited");
  });

  it("a lock held past the deadline answers StoreUnavailableError (503), near the deadline, without freezing", async () => {
    other.exec("BEGIN IMMEDIATE");
    try {
      const started = Date.now();
      const { value, stallMs } = await maxLoopStall(store.transact((tx) => tx.insertInto("user_tags").values(tag("late")).execute()));
      const elapsed = Date.now() - started;
      assert.equal(value.status, "rejected");
      const reason = (value as PromiseRejectedResult).reason;
      assert.ok(reason instanceof StoreUnavailableError, String(reason));
      assert.ok(isStoreUnavailable(reason));
      assert.ok(elapsed >= LOCK_TIMEOUT_MS - 50 && elapsed < LOCK_TIMEOUT_MS + 1_000, `answered after ${elapsed} ms`);
      assert.ok(stallMs < 100, `event loop stalled ${stallMs.toFixed(0)} ms`);
      // Autocommit writes outside group commit (the webhook dispatcher's) wait the same way.
      const direct = await Promise.allSettled([store.db.insertInto("user_tags").values(tag("direct")).execute()]);
      assert.equal(direct[0]!.status, "rejected");
      assert.ok(isStoreUnavailable((direct[0] as PromiseRejectedResult).reason));
    } finally {
      other.exec("ROLLBACK");
    }
    // And the store works as soon as the lock is free.
    await store.transact((tx) => tx.insertInto("user_tags").values(tag("after")).execute());
  });

  it("a queued activity is answered at its own deadline, not a full lock wait after its group started", async () => {
    // A waits for the lock from t=0; B arrives at t≈700 and its group starts when A's ends
    // (t≈1,500). B's deadline is its arrival + 1,500 (t≈2,200): the driver must stop there, not
    // 1,500 ms after the group's first statement (t≈3,000).
    other.exec("BEGIN IMMEDIATE");
    try {
      const a = Promise.allSettled([store.transact((tx) => tx.insertInto("user_tags").values(tag("queued-a")).execute())]);
      await new Promise((r) => setTimeout(r, 700));
      const bStarted = Date.now();
      const [b] = await Promise.allSettled([store.transact((tx) => tx.insertInto("user_tags").values(tag("queued-b")).execute())]);
      const bElapsed = Date.now() - bStarted;
      const [aResult] = await a;
      assert.equal(aResult!.status, "rejected");
      assert.equal(b!.status, "rejected");
      assert.ok(isStoreUnavailable((b as PromiseRejectedResult).reason));
      assert.ok(bElapsed >= LOCK_TIMEOUT_MS - 100 && bElapsed < LOCK_TIMEOUT_MS + 500, `B answered ${bElapsed} ms after it arrived`);
    } finally {
      other.exec("ROLLBACK");
    }
    await store.transact((tx) => tx.insertInto("user_tags").values(tag("after-queued")).execute());
  });
});

describe("group commit when BEGIN fails", () => {
  let scratch: ScratchStore;
  let store: Store;
  let orgId: string;

  before(async () => {
    scratch = await scratchStore("sqlite");
    ({ store, orgId } = scratch);
  });
  after(async () => {
    await scratch?.cleanup();
  });

  const tag = (name: string) => ({ id: newId(), organization_id: orgId, name, created_at: 1, updated_at: 1 });

  /** The real database, whose BEGIN fails with `fail()`'s error while it returns one. */
  function flaky(fail: () => Error | undefined): { db: Db; attempts: () => number } {
    let attempts = 0;
    const db = {
      transaction: () => {
        attempts++;
        const err = fail();
        if (!err) return store.db.transaction();
        return { execute: async () => Promise.reject(err) };
      },
    } as unknown as Db;
    return { db, attempts: () => attempts };
  }

  it("retries a transiently failing BEGIN with backoff, then runs the queued activities", async () => {
    let failures = 3;
    const { db, attempts } = flaky(() => (failures-- > 0 ? new StoreUnavailableError("locked") : undefined));
    const transact = groupCommit(db, { deadlineMs: 2_000 });
    const values = await Promise.all(
      [1, 2, 3].map((i) =>
        transact(
          async (tx) => (
            await tx
              .insertInto("user_tags")
              .values(tag(`retry${i}`))
              .execute(),
            i
          ),
        ),
      ),
    );
    assert.deepEqual(values, [1, 2, 3]);
    assert.equal(attempts(), 4, "three failed BEGINs and one that worked");
  });

  it("answers every queued activity with the failure at its deadline — no hang, no hot loop", async () => {
    const { db, attempts } = flaky(() => new StoreUnavailableError("locked"));
    const transact = groupCommit(db, { deadlineMs: 300 });
    const started = Date.now();
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => transact(async () => "never")));
    const elapsed = Date.now() - started;
    for (const r of results) {
      assert.equal(r.status, "rejected");
      assert.ok((r as PromiseRejectedResult).reason instanceof StoreUnavailableError);
    }
    assert.ok(elapsed >= 290 && elapsed < 1_000, `rejected after ${elapsed} ms`);
    // Backoff: 5, 10, 20, … ms. A hot loop would have made thousands of attempts.
    assert.ok(attempts() <= 12, `${attempts()} BEGIN attempts in ${elapsed} ms`);
    // Nothing is left queued: the next activity gets its own attempts and deadline.
    const again = await Promise.allSettled([transact(async () => "x")]);
    assert.equal(again[0]!.status, "rejected");
  });

  it("answers at once when BEGIN fails for a reason retrying cannot fix, and keeps working afterwards", async () => {
    let broken = true;
    const { db, attempts } = flaky(() => (broken ? new Error("SQLITE_CORRUPT: database disk image is malformed") : undefined));
    const transact = groupCommit(db, { deadlineMs: 5_000 });
    const started = Date.now();
    const results = await Promise.allSettled([transact(async () => 1), transact(async () => 2)]);
    assert.deepEqual(
      results.map((r) => r.status),
      ["rejected", "rejected"],
    );
    assert.match(String((results[0] as PromiseRejectedResult).reason), /malformed/);
    assert.equal(isStoreUnavailable((results[0] as PromiseRejectedResult).reason), false, "a broken file is not an outage: 500, logged");
    assert.ok(Date.now() - started < 500);
    assert.equal(attempts(), 1);
    broken = false;
    assert.equal(await transact(async (tx) => (await tx.insertInto("user_tags").values(tag("recovered")).execute(), "ok")), "ok");
  });
});
