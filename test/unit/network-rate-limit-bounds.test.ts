// The in-memory buckets under a key spray, and what one client address is
// (docs/sessions-and-network.md §4 and §5):
// src/network/rate-limit.ts with a controlled clock, no Redis.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MemoryBuckets, RateLimited, RateLimiter } from "../../src/network/rate-limit.ts";

const MAX = 100_000;

function refusedBy(f: () => void | Promise<void>): boolean {
  try {
    const p = f();
    assert.equal(p, undefined, "in-memory buckets answer synchronously");
    return false;
  } catch (err) {
    assert.ok(err instanceof RateLimited, String(err));
    return true;
  }
}

describe("memory buckets under a key spray", () => {
  it("a caller being limited stays limited while an attacker sprays more fresh keys than the bound", () => {
    const now = 5_000_000;
    const b = new MemoryBuckets(() => now);
    const rate = 5;
    for (let i = 0; i < rate * 2; i++) assert.ok(b.takeNow("victim-limited", rate).ok);
    assert.equal(b.takeNow("victim-limited", rate).ok, false);
    // The clock does not move: nothing refills. The limited caller keeps knocking while the
    // sprayer creates 2.5 × the bound of fresh buckets.
    for (let i = 0; i < MAX * 2.5; i++) {
      b.takeNow(`spray-${i}`, rate);
      if (i % 1000 === 0) assert.equal(b.takeNow("victim-limited", rate).ok, false, `the limited caller was reset after ${i} sprayed keys`);
    }
    assert.equal(b.takeNow("victim-limited", rate).ok, false);
  });

  it("memory stays bounded; refilled buckets are the ones dropped first", () => {
    let now = 1_000_000;
    const b = new MemoryBuckets(() => now);
    const size = () => (b as unknown as { size: number }).size;
    for (let i = 0; i < MAX - 1; i++) b.takeNow(`k-${i}`, 1000);
    // A caller being limited (rate 2/s), used after them.
    for (let i = 0; i < 4; i++) b.takeNow("limited", 2);
    assert.equal(b.takeNow("limited", 2).ok, false);
    now += 10;
    let largest = 0;
    for (let i = 0; i < MAX / 2; i++) {
      b.takeNow(`again-${i}`, 1000);
      largest = Math.max(largest, size());
    }
    assert.equal(b.takeNow("limited", 2).ok, false, "the limited caller kept its bucket");
    assert.ok(largest > 0 && largest <= MAX, `at most ${MAX} buckets, had ${largest}`);
  });
});

describe("per-address limits", () => {
  it("IPv6 addresses count per /64; IPv4 per address (IPv4-mapped IPv6 is the IPv4 address)", () => {
    const l = new RateLimiter({ credential: 0, organization: 0, address: 1 }, new MemoryBuckets(() => 7_000_000));
    // Burst 2 per bucket. Two addresses of one /64 use up its bucket…
    assert.equal(
      refusedBy(() => l.address("2001:db8:1:2::1")),
      false,
    );
    assert.equal(
      refusedBy(() => l.address("2001:db8:1:2:ffff:ffff:ffff:ffff")),
      false,
    );
    // …so a third address of that /64 is refused, naming the /64…
    let message = "";
    try {
      // eslint-disable-next-line @typescript-eslint/no-floating-promises -- in memory it returns nothing: a refusal is a throw
      l.address("2001:db8:1:2:abcd::9");
    } catch (err) {
      message = (err as Error).message;
    }
    assert.match(message, /client address 2001:db8:1:2::\/64/);
    // …while the next /64 has its own.
    assert.equal(
      refusedBy(() => l.address("2001:db8:1:3::1")),
      false,
    );
    // IPv4: per address, and the mapped form is the same address.
    assert.equal(
      refusedBy(() => l.address("192.0.2.1")),
      false,
    );
    assert.equal(
      refusedBy(() => l.address("::ffff:192.0.2.1")),
      false,
    );
    assert.equal(
      refusedBy(() => l.address("192.0.2.1")),
      true,
    );
    assert.equal(
      refusedBy(() => l.address("192.0.2.2")),
      false,
    );
  });
});
