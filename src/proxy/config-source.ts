// The auth proxy's view of its configurations (docs/auth-proxy-service.md §2): fetched from
// the API's channel routes and kept at most `ttlMs` (SIGIL_AUTH_PROXY_CONFIG_TTL_MS, default
// DEFAULT_CONFIG_TTL_MS), so a change (disabled, new origins, new settings) applies within that
// time. Unknown ids are remembered MISS_TTL_MS whatever the TTL, so a flood of made-up ids
// costs the API one request per id per MISS_TTL_MS at most; concurrent
// requests for one id share one fetch. Only the sealed key is kept (src/auth-proxy/channel.ts).
import { DEFAULT_CONFIG_TTL_MS, type AuthProxyConfigView, type OriginsResponse, type OtpChannel } from "../auth-proxy/channel.ts";
import type { ApiClient } from "./api-client.ts";

export const MISS_TTL_MS = 2_000;
export const MAX_CACHED_CONFIGS = 10_000;

export interface ConfigEntry {
  config: AuthProxyConfigView;
  sealedKey: string;
  /** The organization's name, when the API sends it (the app name of OTP messages). */
  organizationName?: string;
  /** The OTP channels the API can deliver for this config (docs/auth-proxy-service.md §5.1); none when it names none. */
  otpChannels: OtpChannel[];
}

const OTP_CHANNELS: readonly OtpChannel[] = ["email", "sms"];

/** The known channels the API named, each once; anything else is dropped. */
function channelsOf(v: unknown): OtpChannel[] {
  return Array.isArray(v) ? OTP_CHANNELS.filter((c) => v.includes(c)) : [];
}

interface Cached {
  at: number;
  entry: ConfigEntry | undefined;
}

export class ConfigSource {
  readonly #cache = new Map<string, Cached>();
  readonly #inflight = new Map<string, Promise<ConfigEntry | undefined>>();
  #origins: { at: number; value: OriginsResponse } | undefined;
  #originsInflight: Promise<OriginsResponse> | undefined;

  constructor(
    private readonly api: ApiClient,
    private readonly ttlMs: number = DEFAULT_CONFIG_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The config with this id (undefined: the API knows none). Throws 503 when the API cannot answer. */
  async get(configId: string): Promise<ConfigEntry | undefined> {
    const c = this.#cache.get(configId);
    const now = this.now();
    if (c && now - c.at < (c.entry ? this.ttlMs : MISS_TTL_MS)) return c.entry;
    const running = this.#inflight.get(configId);
    if (running) return running;
    const p = (async () => {
      try {
        const r = await this.api.config(configId);
        const entry = r
          ? {
              config: r.config,
              sealedKey: r.sealedKey,
              ...(typeof r.organizationName === "string" ? { organizationName: r.organizationName } : {}),
              otpChannels: channelsOf(r.otpChannels),
            }
          : undefined;
        this.#remember(configId, { at: this.now(), entry });
        return entry;
      } finally {
        this.#inflight.delete(configId);
      }
    })();
    this.#inflight.set(configId, p);
    return p;
  }

  #remember(configId: string, c: Cached): void {
    this.#cache.delete(configId);
    if (this.#cache.size >= MAX_CACHED_CONFIGS) {
      // Oldest first (insertion order): entries past their time go, then the oldest.
      const now = this.now();
      for (const [k, v] of this.#cache) if (now - v.at >= this.ttlMs) this.#cache.delete(k);
      for (const k of this.#cache.keys()) {
        if (this.#cache.size < MAX_CACHED_CONFIGS) break;
        this.#cache.delete(k);
      }
    }
    this.#cache.set(configId, c);
  }

  /** Every origin some enabled config allows (for preflights), kept at most the TTL. */
  async origins(): Promise<OriginsResponse> {
    const now = this.now();
    if (this.#origins && now - this.#origins.at < this.ttlMs) return this.#origins.value;
    if (this.#originsInflight) return this.#originsInflight;
    this.#originsInflight = (async () => {
      try {
        const value = await this.api.origins();
        this.#origins = { at: this.now(), value };
        return value;
      } finally {
        this.#originsInflight = undefined;
      }
    })();
    return this.#originsInflight;
  }
}
