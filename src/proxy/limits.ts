// The auth proxy's abuse limits (docs/auth-proxy-service.md §4.1): requests per config and
// origin per minute, OTP initiations per contact per hour, sign-ups per client address and per
// config per hour. Past one: 429 RESOURCE_EXHAUSTED with Retry-After. A limit of 0 is off.
import { exhausted } from "../errors.ts";
import { addressBucket } from "../network/rate-limit.ts";
import type { ProxyLimits } from "./settings.ts";
import { MemoryCounters, RedisCounters, type WindowCounters } from "./window-counters.ts";

const MINUTE = 60_000;
const HOUR = 3_600_000;

export class ProxyLimiter {
  constructor(
    readonly limits: ProxyLimits,
    private readonly counters: WindowCounters,
  ) {}

  async #hit(key: string, max: number, windowMs: number, what: string): Promise<void> {
    if (max <= 0) return;
    const h = await this.counters.hit(key, max, windowMs);
    if (!h.ok) throw exhausted(`auth proxy rate limit exceeded for ${what}; retry after ${Math.max(1, Math.ceil(h.retryAfterMs / 1000))} s`, h.retryAfterMs);
  }

  /** Every request: per config and origin (absent Origin counts as "none"). */
  origin(configId: string, origin: string | undefined): Promise<void> {
    return this.#hit(`o:${configId}:${origin ?? "none"}`, this.limits.requestsPerOriginPerMinute, MINUTE, "this origin");
  }

  /** otp_init / otp_init_v2: per contact, whatever the config (emails in any case). */
  otpInit(otpType: string, contact: string): Promise<void> {
    const c = otpType === "OTP_TYPE_EMAIL" ? contact.trim().toLowerCase() : contact.trim();
    return this.#hit(`c:${otpType}:${c}`, this.limits.otpInitsPerContactPerHour, HOUR, "this contact");
  }

  /** signup / signup_v2: per client address (IPv6 per /64), then per config. */
  async signup(configId: string, address: string | undefined): Promise<void> {
    if (address) await this.#hit(`a:${addressBucket(address)}`, this.limits.signupsPerAddressPerHour, HOUR, "this client address");
    await this.#hit(`s:${configId}`, this.limits.signupsPerConfigPerHour, HOUR, "sign-ups of this configuration");
  }

  close(): Promise<void> {
    return this.counters.close();
  }
}

export function proxyLimiter(limits: ProxyLimits, redisUrl: string | undefined, log?: { warn(obj: object, msg: string): void }): ProxyLimiter {
  return new ProxyLimiter(limits, redisUrl ? new RedisCounters(redisUrl, log) : new MemoryCounters());
}
