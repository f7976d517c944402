// Fixed-window counters for the auth proxy's limits (docs/auth-proxy-service.md §4): "at most
// N per key per window". The token buckets of network/rate-limit.ts hold a burst of twice a
// per-second rate, which cannot say "10 per hour"; these count hits in the current window and
// say when it ends (Retry-After).
//
// In one process the counters are a bounded Map. With REDIS_URL every proxy process counts in
// the same keys (one Lua script per hit: INCR, expiry on the first); should Redis be
// unreachable, each process falls back to its own counters (logged at most every 10 s).
import { Redis } from "ioredis";

export type Hit = { ok: true } | { ok: false; retryAfterMs: number };

export interface WindowCounters {
  /** Counts one hit on `key` in its current window of `windowMs`; refused past `max`. */
  hit(key: string, max: number, windowMs: number): Promise<Hit>;
  close(): Promise<void>;
}

interface Window {
  count: number;
  endsAt: number;
}

/** Default bound on in-memory counters. */
export const MAX_COUNTERS = 100_000;

/**
 * In-memory counters. When the bound is reached, ended windows go first (an ended window and
 * a missing one admit the same), then the least recently used — never all at once, so a
 * flood of fresh keys cannot reset the counter of a key that is being limited right now
 * unless it has been idle longer than every key of the flood.
 */
export class MemoryCounters implements WindowCounters {
  readonly #windows = new Map<string, Window>();
  constructor(
    private readonly now: () => number = Date.now,
    private readonly max: number = MAX_COUNTERS,
  ) {}

  get size(): number {
    return this.#windows.size;
  }

  hitNow(key: string, max: number, windowMs: number): Hit {
    const now = this.now();
    let w = this.#windows.get(key);
    if (w) this.#windows.delete(key);
    if (!w || w.endsAt <= now) {
      if (!w && this.#windows.size >= this.max) this.#evict(now);
      w = { count: 0, endsAt: now + windowMs };
    }
    this.#windows.set(key, w);
    if (w.count >= max) return { ok: false, retryAfterMs: Math.max(1, w.endsAt - now) };
    w.count += 1;
    return { ok: true };
  }

  async hit(key: string, max: number, windowMs: number): Promise<Hit> {
    return this.hitNow(key, max, windowMs);
  }

  #evict(now: number): void {
    const room = Math.max(1, this.max >> 4);
    for (const [k, w] of this.#windows) if (w.endsAt <= now) this.#windows.delete(k);
    const target = this.max - room;
    for (const k of this.#windows.keys()) {
      if (this.#windows.size <= target) break;
      this.#windows.delete(k);
    }
  }

  async close(): Promise<void> {}
}

// KEYS[1]; ARGV max, windowMs. Returns {admitted 0/1, ms until the window ends}.
const HIT_SCRIPT = `
local max = tonumber(ARGV[1])
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= max then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]); ttl = tonumber(ARGV[2]) end
  return {0, ttl}
end
n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {1, 0}
`;

export class RedisCounters implements WindowCounters {
  readonly #redis: Redis;
  readonly #fallback = new MemoryCounters();
  #warnedAt = 0;

  constructor(
    url: string,
    private readonly log?: { warn(obj: object, msg: string): void },
    private readonly prefix = "sigil:proxy:",
  ) {
    this.#redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 500 });
    this.#redis.defineCommand("sigilHit", { numberOfKeys: 1, lua: HIT_SCRIPT });
    this.#redis.on("error", () => {});
  }

  async hit(key: string, max: number, windowMs: number): Promise<Hit> {
    try {
      const r = await (
        this.#redis as unknown as { sigilHit(k: string, max: number, windowMs: number): Promise<[number, number]> }
      ).sigilHit(this.prefix + key, max, windowMs);
      return Number(r[0]) === 1 ? { ok: true } : { ok: false, retryAfterMs: Math.max(1, Number(r[1])) };
    } catch (err) {
      const now = Date.now();
      if (now - this.#warnedAt > 10_000) {
        this.#warnedAt = now;
        this.log?.warn({ reason: (err as Error).message }, "auth proxy limits: Redis unavailable, counting in this process only");
      }
      return this.#fallback.hitNow(key, max, windowMs);
    }
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}
