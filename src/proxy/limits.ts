// The auth proxy's abuse limits (docs/auth-proxy-service.md §4.1): requests per client address
// per minute, requests per config and origin per minute, OTP initiations per contact per hour,
// sign-ups per client address and per config per hour. Past one: 429 RESOURCE_EXHAUSTED with
// Retry-After. A limit of 0 is off.
import { exhausted } from "../errors.ts";
import { addressBucket } from "../network/rate-limit.ts";
import { canonicalOrigin, originAllowed } from "./origins.ts";
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
    if (!h.ok)
      throw exhausted(
        `auth proxy rate limit exceeded for ${what}; retry after ${Math.max(1, Math.ceil(h.retryAfterMs / 1000))} s`,
        h.retryAfterMs,
      );
  }

  /**
   * Every request, first: per client address (IPv6 per /64), whatever config or Origin it
   * names — the one thing a script cannot invent afresh for each request.
   */
  address(address: string | undefined): Promise<void> {
    if (!address) return Promise.resolve();
    return this.#hit(`r:${addressBucket(address)}`, this.limits.requestsPerAddressPerMinute, MINUTE, "this client address");
  }

  /**
   * Every request the config's origin check admitted: per config and listed origin. An origin
   * the config does not list (a config with no list admits every one, absent included) is
   * whatever the caller chose to send, so all of them share the config's one bucket
   * (docs/auth-proxy-service.md §4.1).
   */
  origin(configId: string, allowedOrigins: readonly string[], origin: string | undefined): Promise<void> {
    const listed = allowedOrigins.length > 0 && originAllowed(allowedOrigins, origin) ? canonicalOrigin(origin) : undefined;
    const what = listed ? "this origin" : "this configuration's unlisted origins";
    return this.#hit(`o:${configId}:${listed ?? "*"}`, this.limits.requestsPerOriginPerMinute, MINUTE, what);
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

export function proxyLimiter(
  limits: ProxyLimits,
  redisUrl: string | undefined,
  log?: { warn(obj: object, msg: string): void },
): ProxyLimiter {
  return new ProxyLimiter(limits, redisUrl ? new RedisCounters(redisUrl, log) : new MemoryCounters());
}
