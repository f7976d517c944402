// The dispatcher's parts that need no database (docs/webhooks.md §5.5): the scheduler's wake,
// poll, retry-timer and stop rules, and how a claim's rows become lanes (fan-out.ts).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DispatchScheduler } from "../../src/webhooks/scheduler.ts";
import { dueRuns, lanesOf } from "../../src/webhooks/fan-out.ts";
import type { QueuedDelivery } from "../../src/store/webhook-deliveries.ts";

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A scheduler whose cycles are recorded; `gate` (when set) holds the running cycle open. */
function recorder(pollMs = 60_000, minGapMs = 0) {
  const cycles: boolean[] = [];
  /** performance.now() at each cycle's start. */
  const starts: number[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let gate: Promise<void> | undefined;
  const s = new DispatchScheduler({
    pollMs,
    minGapMs,
    async cycle(full) {
      cycles.push(full);
      starts.push(performance.now());
      for (const w of waiters.filter((w) => cycles.length >= w.n)) w.resolve();
      if (gate) await gate;
    },
    onCycleError: (err) => assert.fail(err as Error),
  });
  return {
    s,
    cycles,
    starts,
    hold(p: Promise<void> | undefined) {
      gate = p;
    },
    /** Resolves once `n` cycles have started. */
    after(n: number): Promise<void> {
      if (cycles.length >= n) return Promise.resolve();
      const d = deferred();
      waiters.push({ n, resolve: d.resolve });
      return d.promise;
    },
  };
}

describe("webhook dispatcher scheduler", () => {
  it("a wake runs a full cycle at once; a wake during a cycle makes it go round once more", async () => {
    const r = recorder();
    const open = deferred();
    r.hold(open.promise);
    r.s.wake();
    await r.after(1);
    r.s.wake();
    r.s.wake();
    r.hold(undefined);
    open.resolve();
    await r.after(2);
    await r.s.stop();
    assert.deepEqual(r.cycles, [true, true]);
  });

  it("cycles start minGapMs apart: wakes within the gap are answered together by one full cycle after it", async () => {
    const gap = 40;
    const r = recorder(60_000, gap);
    r.s.wake();
    await r.after(1);
    // Three wakes right after the first cycle (a busy API's commits): one more cycle, not three.
    r.s.wake();
    r.s.wake();
    r.s.wake();
    await r.after(2);
    assert.ok(r.starts[1]! - r.starts[0]! >= gap - 1, `second cycle ${r.starts[1]! - r.starts[0]!} ms after the first`);
    // A wake long after the last cycle runs at once (the second cycle started a gap ago).
    const late = deferred();
    setTimeout(late.resolve, gap + 10);
    await late.promise;
    const woke = performance.now();
    r.s.wake();
    assert.equal(r.cycles.length, 3, "a wake after the gap runs its cycle at once");
    assert.ok(r.starts[2]! - woke < gap);
    await r.s.stop();
    assert.deepEqual(r.cycles, [true, true, true]);
  });

  it("stop cancels a wake waiting out the gap", async () => {
    const r = recorder(60_000, 60_000);
    r.s.wake();
    await r.after(1);
    r.s.wake();
    await r.s.stop();
    assert.deepEqual(r.cycles, [true]);
  });

  it("after a cycle the next look is a poll (not full), pollMs later", async () => {
    const r = recorder(5);
    r.s.wake();
    await r.after(2);
    await r.s.stop();
    assert.deepEqual(r.cycles.slice(0, 2), [true, false]);
  });

  it("a lane keeps its endpoint in flight until it ends, then wakes; stop waits for it", async () => {
    const r = recorder();
    const lane = deferred();
    r.s.startLane("ep-1", lane.promise);
    assert.ok(r.s.inFlight.has("ep-1"));
    assert.equal(r.s.running, 1);
    lane.resolve();
    await r.after(1);
    assert.equal(r.s.inFlight.has("ep-1"), false);
    assert.equal(r.s.running, 0);

    const slow = deferred();
    r.s.startLane("ep-2", slow.promise);
    let stopped = false;
    const stopping = r.s.stop().then(() => (stopped = true));
    await Promise.resolve();
    assert.equal(stopped, false, "stop resolves only once the lane has ended");
    slow.resolve();
    await stopping;
    const n = r.cycles.length;
    r.s.wake();
    assert.equal(r.cycles.length, n, "no cycle after stop");
  });

  it("wakeIn keeps only the earliest retry timer", async () => {
    const r = recorder();
    r.s.wakeIn(60_000);
    r.s.wakeIn(1);
    r.s.wakeIn(30_000);
    await r.after(1);
    assert.deepEqual(r.cycles, [true]);
    await r.s.stop();
  });
});

const row = (id: string, endpoint: string, o: Partial<QueuedDelivery> = {}): QueuedDelivery => ({
  id,
  event_id: `ev-${id}`,
  endpoint_id: endpoint,
  attempts: 0,
  schedule_offset: 0,
  next_attempt_at: 0,
  lease_until: 0,
  ...o,
});

describe("claims become lanes", () => {
  it("per endpoint, the run from the head that is due and not leased, in id order", () => {
    const now = 100;
    const runs = dueRuns(
      [
        row("a2", "A"),
        row("a1", "A"),
        row("a3", "A", { next_attempt_at: 200 }),
        row("a4", "A"),
        row("b1", "B", { lease_until: 150 }),
        row("c1", "C"),
      ],
      ["A", "B", "C"],
      now,
    );
    assert.deepEqual(
      runs.map((r) => r.map((d) => d.id)),
      [["a1", "a2"], ["c1"]],
    );
  });

  it("a lane is the unbroken leased stretch from the head; what was leased after a gap is released", () => {
    const runs = [
      [row("a1", "A"), row("a2", "A"), row("a3", "A")],
      [row("b1", "B"), row("b2", "B")],
    ];
    const { lanes, release } = lanesOf(runs, new Set(["a1", "a3", "b2"]), 10, 99);
    assert.deepEqual(release, ["a3", "b2"]);
    assert.equal(lanes.length, 1);
    assert.deepEqual(lanes[0], {
      endpointId: "A",
      claimedAt: 10,
      lease: 99,
      deliveries: [{ id: "a1", event_id: "ev-a1", endpoint_id: "A", attempts: 1, schedule_offset: 0, counted: true }],
    });
  });
});
