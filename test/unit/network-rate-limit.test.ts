// Token buckets (src/network/rate-limit.ts): in memory with a controlled clock, and through
// Redis (127.0.0.1:6379, as in CI) with two limiters standing for two processes.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { MemoryBuckets, RateLimited, RateLimiter, RedisBuckets } from "../../src/network/rate-limit.ts";

describe("memory buckets", () => {
  it("a burst of twice the rate, then one token per 1/rate s; Retry-After is the wait", () => {
    let now = 1_000_000;
    const b = new MemoryBuckets(() => now);
    const takes = () => b.takeNow("k", 5);
    for (let i = 0; i < 10; i++) assert.deepEqual(takes(), { ok: true }, `take ${i}`);
    const refused = takes();
    assert.equal(refused.ok, false);
    assert.ok(!refused.ok && refused.retryAfterMs > 0 && refused.retryAfterMs <= 200, JSON.stringify(refused));
    now += 200;
    assert.deepEqual(takes(), { ok: true });
    assert.equal(takes().ok, false);
    now += 10_000;
    for (let i = 0; i < 10; i++) assert.ok(takes().ok);
    assert.equal(takes().ok, false);
    // Other keys have their own buckets.
    assert.ok(b.takeNow("other", 5).ok);
  });

  it("the limiter: 0 is off; a refusal is 429 RATE_LIMIT_EXCEEDED with whole seconds to wait", async () => {
    const l = new RateLimiter({ credential: 1, organization: 0, address: 0 }, new MemoryBuckets());
    await l.caller("c", "o");
    await l.caller("c", "o");
    // In memory: taken synchronously, refused by a throw.
    let err: unknown;
    try {
      // eslint-disable-next-line @typescript-eslint/no-floating-promises -- in memory it returns nothing: a refusal is a throw
      l.caller("c", "o");
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof RateLimited);
    assert.equal(err.httpStatus, 429);
    assert.equal(err.retryAfterSeconds, 1);
    assert.deepEqual(err.toBody().details[0], {
      "@type": "type.googleapis.com/errors.v1.TurnkeyErrorDetail",
      turnkeyErrorCode: "RATE_LIMIT_EXCEEDED",
    });
    assert.equal(err.toBody().code, 8);
    for (let i = 0; i < 100; i++) await l.address("1.2.3.4");
    for (let i = 0; i < 100; i++)
      await new RateLimiter({ credential: 0, organization: 0, address: 0 }, new MemoryBuckets()).caller("c", "o");
  });
});

describe("Redis buckets", () => {
  it("two limiters over one Redis share the buckets", async () => {
    const url = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
    const prefix = `sigil:test:${randomBytes(6).toString("hex")}:`;
    const a = new RedisBuckets(url, undefined, prefix);
    const b = new RedisBuckets(url, undefined, prefix);
    try {
      assert.equal(await a.ready(), true);
      assert.equal(await b.ready(), true);
      let admitted = 0;
      const started = Date.now();
      for (let i = 0; i < 40; i++) if ((await (i % 2 ? a : b).take("k", 5)).ok) admitted++;
      const seconds = (Date.now() - started) / 1000;
      // 10 from the burst, plus what refilled meanwhile; never the 20 two separate buckets would give in this time.
      assert.ok(admitted >= 10, `admitted ${admitted}`);
      assert.ok(admitted <= 10 + Math.ceil(seconds * 5) + 1, `admitted ${admitted} in ${seconds}s`);
      const refused = await a.take("k", 5);
      if (!refused.ok) assert.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= 200);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("an unreachable Redis falls back to this process's own buckets", async () => {
    const warnings: string[] = [];
    const r = new RedisBuckets("redis://127.0.0.1:1", { warn: (_o, msg) => void warnings.push(msg) });
    try {
      assert.equal(await r.ready(300), false);
      let admitted = 0;
      for (let i = 0; i < 6; i++) if ((await r.take("k", 2)).ok) admitted++;
      assert.equal(admitted, 4);
      assert.equal(warnings.length, 1);
      assert.match(warnings[0]!, /Redis unavailable/);
    } finally {
      await r.close();
    }
  });
});
