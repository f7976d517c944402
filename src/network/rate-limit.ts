// Token buckets: `rate` tokens per second, holding at most twice that (the burst); a request
// takes one token or is refused with the time until one is there (Retry-After). Three
// families of buckets: per client address (checked before anything else), per credential and
// per organization (checked once the stamp is verified and the credential found, which is
// cheap — so an unverifiable request never spends a caller's tokens).
//
// In one process the buckets are a Map. With REDIS_URL every process takes from the same
// buckets, through one Lua script per take (atomic; Redis's clock, so the processes' clocks
// do not matter). Should Redis be unreachable, each process falls back to its own buckets
// (logged) rather than refusing or admitting everything: the limit then holds per process.
import { Redis } from "ioredis";
import { ApiError, Grpc } from "../errors.ts";
import { formatAddress, parseAddress } from "./address.ts";

export const DEFAULT_RATE_LIMITS = { credential: 1000, organization: 5000, address: 2000 } as const;

export interface RateLimits {
  credential: number;
  organization: number;
  address: number;
}

export type Take = { ok: true } | { ok: false; retryAfterMs: number };

export interface Buckets {
  take(key: string, rate: number): Promise<Take>;
  /** Resolves once shared buckets can be used, or the wait is over (then: local buckets). */
  ready(timeoutMs?: number): Promise<boolean>;
  close(): Promise<void>;
}

/** 429 RESOURCE_EXHAUSTED, as the SDK knows it; app.ts adds Retry-After from retryAfterSeconds. */
export class RateLimited extends ApiError {
  declare retryAfterSeconds: number;
  constructor(what: string, retryAfterMs: number) {
    const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
    super(Grpc.RESOURCE_EXHAUSTED, "RATE_LIMIT_EXCEEDED", `rate limit exceeded for ${what}; retry after ${seconds} s`);
    this.retryAfterSeconds = seconds;
  }
}

/** Default bound on in-memory buckets (docs/sessions-and-network.md §4). */
export const MAX_BUCKETS = 100_000;

interface Bucket {
  tokens: number;
  /** Last refill (ms). */
  at: number;
  /** When the bucket is full again (ms): from then on it is the same as no bucket at all. */
  fullAt: number;
}

/**
 * In-memory buckets, bounded. When the bound is reached, buckets that have refilled are
 * dropped first — a full bucket and a missing one admit exactly the same — and only when too
 * few of those exist the least recently used ones go (the Map is kept in use order). Never
 * everything at once: a sprayer of fresh keys (docs/sessions-and-network.md §4)
 * can only evict buckets idle longer than every one it made, never reset the bucket
 * of a caller that is being limited right now.
 */
export class MemoryBuckets implements Buckets {
  readonly #buckets = new Map<string, Bucket>();
  constructor(
    private readonly now: () => number = Date.now,
    private readonly max: number = MAX_BUCKETS,
  ) {}

  get size(): number {
    return this.#buckets.size;
  }

  async take(key: string, rate: number): Promise<Take> {
    return this.takeNow(key, rate);
  }

  takeNow(key: string, rate: number): Take {
    const burst = rate * 2;
    const now = this.now();
    let b = this.#buckets.get(key);
    if (b) {
      // Most recently used last: eviction takes from the front.
      this.#buckets.delete(key);
    } else {
      if (this.#buckets.size >= this.max) this.#evict(now);
      b = { tokens: burst, at: now, fullAt: now };
    }
    this.#buckets.set(key, b);
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) * rate) / 1000);
    b.at = now;
    let out: Take;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      out = { ok: true };
    } else {
      out = { ok: false, retryAfterMs: Math.ceil(((1 - b.tokens) * 1000) / rate) };
    }
    b.fullAt = now + ((burst - b.tokens) * 1000) / rate;
    return out;
  }

  /**
   * Makes room for at least 1/16 of the bound (amortised: one sweep per that many new keys):
   * every refilled bucket, then the least recently used.
   */
  #evict(now: number): void {
    const room = Math.max(1, this.max >> 4);
    for (const [k, b] of this.#buckets) if (b.fullAt <= now) this.#buckets.delete(k);
    const target = this.max - room;
    if (this.#buckets.size <= target) return;
    for (const k of this.#buckets.keys()) {
      if (this.#buckets.size <= target) break;
      this.#buckets.delete(k);
    }
  }

  async ready(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}
}

// KEYS[1] bucket; ARGV rate, burst. Returns {admitted 0/1, ms until a token}.
const TAKE_SCRIPT = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local v = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(v[1])
local at = tonumber(v[2])
if tokens == nil or at == nil then tokens = burst; at = now end
if now > at then tokens = math.min(burst, tokens + (now - at) * rate / 1000) end
if now > at then at = now end
local ok = 0
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
  ok = 1
else
  wait = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(at))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return {ok, wait}
`;

export class RedisBuckets implements Buckets {
  readonly #redis: Redis;
  readonly #fallback = new MemoryBuckets();
  #warnedAt = 0;

  constructor(
    url: string,
    private readonly log?: { warn(obj: object, msg: string): void },
    private readonly prefix = "sigil:rl:",
  ) {
    this.#redis = new Redis(url, {
      // A request never waits for a reconnect: it is counted locally instead.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 500,
      lazyConnect: false,
    });
    this.#redis.defineCommand("sigilTake", { numberOfKeys: 1, lua: TAKE_SCRIPT });
    // Connection errors are reported per take (below); the client reconnects by itself.
    this.#redis.on("error", () => {});
  }

  async take(key: string, rate: number): Promise<Take> {
    try {
      const r = (await (
        this.#redis as unknown as { sigilTake(k: string, rate: number, burst: number): Promise<[number, number]> }
      ).sigilTake(this.prefix + key, rate, rate * 2)) as [number, number];
      return Number(r[0]) === 1 ? { ok: true } : { ok: false, retryAfterMs: Number(r[1]) };
    } catch (err) {
      const now = Date.now();
      if (now - this.#warnedAt > 10_000) {
        this.#warnedAt = now;
        this.log?.warn({ reason: (err as Error).message }, "rate limits: Redis unavailable, counting in this process only");
      }
      return this.#fallback.takeNow(key, rate);
    }
  }

  /** Startup waits for the first connection (commands are never queued while disconnected). */
  ready(timeoutMs = 2_000): Promise<boolean> {
    if (this.#redis.status === "ready") return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.#redis.off("ready", onReady);
        resolve(ok);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.#redis.once("ready", onReady);
    });
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}

/**
 * The three limits over one set of buckets; a limit of 0 is off. In-memory buckets are taken
 * synchronously (no promise per request: the hot path stays as cheap as it was); a refusal is
 * thrown, or the returned promise rejects, with RateLimited.
 */
export class RateLimiter {
  constructor(
    readonly limits: RateLimits,
    private readonly buckets: Buckets,
  ) {}

  get addressLimited(): boolean {
    return this.limits.address > 0;
  }

  /** Per client address: IPv4 per address, IPv6 per /64 (addressBucket). */
  address(address: string): void | Promise<void> {
    const bucket = addressBucket(address);
    return this.#take(`a:${bucket}`, this.limits.address, `client address ${bucket}`);
  }

  /** Per credential, then per organization (the credential's). */
  caller(credentialId: string, organizationId: string): void | Promise<void> {
    const first = this.#take(`c:${credentialId}`, this.limits.credential, "this credential");
    const second = () => this.#take(`o:${organizationId}`, this.limits.organization, `organization ${organizationId}`);
    return first ? first.then(second) : second();
  }

  #take(key: string, rate: number, what: string): void | Promise<void> {
    if (rate <= 0) return;
    const b = this.buckets;
    if (b instanceof MemoryBuckets) {
      const t = b.takeNow(key, rate);
      if (!t.ok) throw new RateLimited(what, t.retryAfterMs);
      return;
    }
    return b.take(key, rate).then((t) => {
      if (!t.ok) throw new RateLimited(what, t.retryAfterMs);
    });
  }

  ready(timeoutMs?: number): Promise<boolean> {
    return this.buckets.ready(timeoutMs);
  }

  close(): Promise<void> {
    return this.buckets.close();
  }
}

export function rateLimiter(limits: RateLimits, redisUrl: string | undefined, log?: { warn(obj: object, msg: string): void }): RateLimiter {
  return new RateLimiter(limits, redisUrl ? new RedisBuckets(redisUrl, log) : new MemoryBuckets());
}

/**
 * The bucket a client address counts in: an IPv4 address (IPv4-mapped IPv6 included) by
 * itself, an IPv6 address by its /64 — the smallest block a site is assigned (RFC 6177) and
 * the one SLAAC hosts pick addresses in, so one client holds 2^64 of them
 * (docs/sessions-and-network.md §5). Anything unreadable counts as written.
 */
export function addressBucket(address: string): string {
  if (!address.includes(":")) return address;
  const a = parseAddress(address);
  if (!a) return address;
  if (a.family === 4) return formatAddress(a);
  const net = a.bytes.slice();
  net.fill(0, 8);
  return `${formatAddress({ family: 6, bytes: net })}/64`;
}
