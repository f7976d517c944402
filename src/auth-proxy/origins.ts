// The origins of the enabled auth proxy configurations (docs/auth-proxy.md §5): what the
// public API's CORS admits besides SIGIL_CORS_ORIGINS, and what the proxy's preflights need
// (the ORIGINS_ROUTE of the channel, server/auth-proxy-channel.ts).
import type { Executor } from "../store/schema.ts";
import { enabledSettings } from "../store/auth-proxy-configs.ts";
import { DEFAULT_CONFIG_TTL_MS, type OriginsResponse } from "./channel.ts";

/** Every origin some enabled configuration lists; anyOrigin when one allows all (an empty list). */
export async function enabledOrigins(db: Executor): Promise<OriginsResponse> {
  const origins = new Set<string>();
  let anyOrigin = false;
  for (const s of await enabledSettings(db)) {
    const list = s.allowedOrigins ?? [];
    if (list.length === 0) anyOrigin = true;
    for (const o of list) origins.add(o);
  }
  return { origins: [...origins].sort(), anyOrigin };
}

/**
 * The public API's view: the explicit origins only. A configuration that allows every origin
 * opens its proxy to every page, not the public API (docs/auth-proxy.md §5). Read at most once
 * per `refreshMs` (SIGIL_AUTH_PROXY_CONFIG_TTL_MS; one read at a time); a failed read keeps the previous snapshot.
 */
export class ProxyOriginsCache {
  #origins: ReadonlySet<string> = new Set();
  #loadedAt = Number.NEGATIVE_INFINITY;
  #loading: Promise<void> | undefined;

  constructor(
    private readonly db: Executor,
    private readonly refreshMs = DEFAULT_CONFIG_TTL_MS,
    private readonly clock: () => number = Date.now,
  ) {}

  async admits(origin: string): Promise<boolean> {
    if (this.clock() - this.#loadedAt >= this.refreshMs) await this.#refresh();
    return this.#origins.has(origin);
  }

  #refresh(): Promise<void> {
    this.#loading ??= enabledOrigins(this.db)
      .then(
        (r) => void (this.#origins = new Set(r.origins)),
        () => undefined,
      )
      .finally(() => {
        this.#loadedAt = this.clock();
        this.#loading = undefined;
      });
    return this.#loading;
  }
}

/** What registerCors (network/cors.ts) asks about an origin it was not configured with. */
export function proxyOriginsAdmitter(db: Executor, refreshMs = DEFAULT_CONFIG_TTL_MS): (origin: string) => Promise<boolean> {
  const cache = new ProxyOriginsCache(db, refreshMs);
  return (origin) => cache.admits(origin);
}
