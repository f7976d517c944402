// @ts-check
// The published key set (GET /public/v1/discovery/webhooks/jwks), fetched and cached for a
// verifier. Policy (see also the .d.mts):
//   - freshness from Cache-Control max-age minus Age; defaultTtlMs (5 minutes) when there is no
//     max-age; capped at maxTtlMs (24 hours) so a retired key cannot stay trusted for longer;
//     no-store / no-cache: fetched every time the cache is consulted (once per lookup);
//   - unknown kid in a cached set: one refetch, at most one per minRefetchIntervalMs (10 s);
//     concurrent fetches are coalesced into one request;
//   - stale-if-error: when a refresh fails, the last good set is served for up to staleIfErrorMs
//     (1 hour) past its expiry (or the response's own stale-if-error=N), never for no-store or
//     must-revalidate responses; after a failed fetch no new fetch is tried for
//     minRefetchIntervalMs;
//   - a kid that cannot be looked up because the key server is unreachable is reported as
//     jwks_unavailable, not missing_key (the delivery may be perfectly good).

import { Buffer } from "node:buffer";
import { errorText } from "./error-text.mjs";
import { fail } from "./delivery.mjs";
import { keysFromJwks } from "./key-set.mjs";

export const DEFAULT_MIN_REFETCH_INTERVAL_MS = 10_000;
export const DEFAULT_CACHE_TTL_MS = 300_000;
export const DEFAULT_MAX_CACHE_TTL_MS = 86_400_000;
export const DEFAULT_STALE_IF_ERROR_MS = 3_600_000;
export const DEFAULT_FETCH_TIMEOUT_MS = 5_000;
const MAX_JWKS_BYTES = 1 << 20;

/**
 * @typedef {import("./key-set.mjs").KeyEntry} KeyEntry
 * @typedef {import("../webhooks.d.mts").VerifyFailure} VerifyFailure
 * @typedef {import("../webhooks.d.mts").FetchLike} FetchLike
 * @typedef {{ keys: Map<string, KeyEntry>, fetchedAt: number, expiresAt: number,
 *   staleUntil: number, retain: boolean }} KeySet
 * @typedef {{ ok: true, set: KeySet } | { ok: false, message: string }} FetchOutcome
 * @typedef {{ defaultTtlMs: number, maxTtlMs: number, staleIfErrorMs: number }} CachePolicyOptions
 * @typedef {{ jwksUrl: string, fetch: FetchLike, clock: () => number, minRefetchIntervalMs: number,
 *   fetchTimeoutMs: number, cache: CachePolicyOptions }} RemoteKeySetOptions
 */

/**
 * Cache-Control → freshness lifetime and stale-if-error allowance, in ms.
 * @param {string | null} cacheControl
 * @param {string | null} ageHeader
 * @param {CachePolicyOptions} o
 * @returns {{ ttlMs: number, staleIfErrorMs: number, retain: boolean }}
 */
export function cachePolicyFrom(cacheControl, ageHeader, o) {
  /** @type {Map<string, string | true>} */
  const d = new Map();
  let invalidMaxAge = false;
  for (const part of (cacheControl ?? "").split(",")) {
    const m = /^\s*([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s*(?:=\s*("[^"]*"|[^\s,]*))?\s*$/.exec(part);
    if (!m || !m[1]) continue;
    const name = m[1].toLowerCase();
    const value = m[2] === undefined ? true : m[2].replace(/^"(.*)"$/, "$1");
    const prev = d.get(name);
    if (name === "max-age" && prev !== undefined && prev !== value) invalidMaxAge = true;
    if (prev === undefined) d.set(name, value);
  }
  /** @param {string | true | undefined} s */
  const seconds = (s) => (typeof s === "string" && /^[0-9]{1,10}$/.test(s) ? Number(s) * 1000 : undefined);
  const noStore = d.has("no-store");
  const noCache = d.get("no-cache") === true;
  const age = seconds(ageHeader?.trim()) ?? 0;
  let ttlMs;
  if (noStore || noCache) ttlMs = 0;
  else if (d.has("max-age")) ttlMs = invalidMaxAge ? 0 : Math.max(0, (seconds(d.get("max-age")) ?? 0) - age);
  else ttlMs = o.defaultTtlMs;
  ttlMs = Math.min(ttlMs, o.maxTtlMs);
  let staleIfErrorMs = seconds(d.get("stale-if-error")) ?? o.staleIfErrorMs;
  if (noStore || d.has("must-revalidate") || d.has("proxy-revalidate")) staleIfErrorMs = 0;
  return { ttlMs, staleIfErrorMs, retain: !noStore };
}

/**
 * A key set behind a URL. `lookup` resolves to the entry for a kid, or to the failure a
 * delivery naming that kid gets (missing_key / jwks_unavailable).
 * @param {RemoteKeySetOptions} o
 * @returns {{ lookup(kid: string, t: number): Promise<{ ok: true, entry: KeyEntry } | VerifyFailure> }}
 */
export function createRemoteKeySet(o) {
  const { jwksUrl, clock, minRefetchIntervalMs, fetchTimeoutMs } = o;
  const fetchImpl = o.fetch;

  /** @type {KeySet | null} */
  let cached = null;
  /** @type {Promise<FetchOutcome> | null} */
  let inflight = null;
  let lastAttemptAt = -Infinity;
  /** @type {{ at: number, message: string } | null} */
  let lastFailure = null;

  /**
   * @param {number} startedAt
   * @returns {Promise<FetchOutcome>}
   */
  async function fetchOnce(startedAt) {
    const controller = new AbortController();
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    /** @type {Promise<never>} */
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => {
        const err = new Error(`timed out after ${fetchTimeoutMs} ms`);
        controller.abort(err);
        reject(err);
      }, fetchTimeoutMs);
      timer.unref?.();
    });
    /** @type {Promise<KeySet>} */
    const work = (async () => {
      const res = await fetchImpl(jwksUrl, { headers: { accept: "application/json" }, signal: controller.signal });
      if (!res || typeof res.status !== "number") throw new Error("fetch returned no response");
      if (res.status < 200 || res.status > 299) {
        await res.body?.cancel?.().catch(() => {});
        throw new Error(`HTTP ${res.status}`);
      }
      const buf = Buffer.from(await res.arrayBuffer());
      if (buf.length > MAX_JWKS_BYTES) throw new Error(`response larger than ${MAX_JWKS_BYTES} bytes`);
      let json;
      try {
        json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(buf));
      } catch {
        throw new Error("response is not valid JSON");
      }
      const keys = keysFromJwks(json);
      if (typeof keys === "string") throw new Error(keys);
      const p = cachePolicyFrom(res.headers?.get?.("cache-control") ?? null, res.headers?.get?.("age") ?? null, o.cache);
      const expiresAt = startedAt + p.ttlMs;
      return { keys, fetchedAt: startedAt, expiresAt, staleUntil: expiresAt + p.staleIfErrorMs, retain: p.retain };
    })();
    try {
      const set = await Promise.race([work, timeout]);
      return { ok: true, set };
    } catch (e) {
      return { ok: false, message: `JWKS fetch from ${jwksUrl} failed: ${errorText(e)}` };
    } finally {
      clearTimeout(timer);
      work.catch(() => {});
    }
  }

  /**
   * One request at a time; every caller that arrives while it runs shares its outcome.
   * @returns {Promise<FetchOutcome>}
   */
  function startFetch() {
    if (inflight) return inflight;
    const startedAt = clock();
    lastAttemptAt = startedAt;
    inflight = fetchOnce(startedAt).then((outcome) => {
      inflight = null;
      if (outcome.ok) {
        lastFailure = null;
        cached = outcome.set.retain ? outcome.set : null;
      } else {
        lastFailure = { at: clock(), message: outcome.message };
      }
      return outcome;
    });
    return inflight;
  }

  /** @param {number} t */
  const failureBackoff = (t) => lastFailure !== null && t >= lastFailure.at && t - lastFailure.at < minRefetchIntervalMs;
  /** @param {number} t */
  const refetchAllowed = (t) => inflight !== null || !(t >= lastAttemptAt && t - lastAttemptAt < minRefetchIntervalMs);

  /**
   * @param {string} kid
   * @param {number} t the verifier's clock when the delivery was parsed
   * @returns {Promise<{ ok: true, entry: KeyEntry } | VerifyFailure>}
   */
  async function lookup(kid, t) {
    // 1. A key set: the cached one while fresh, else a (shared) fetch, else stale-if-error.
    /** @type {KeySet | null} */
    let set = cached !== null && t < cached.expiresAt ? cached : null;
    let fetched = false;
    let servedStale = false;
    if (set === null) {
      let why;
      if (inflight !== null || !failureBackoff(t)) {
        const outcome = await startFetch();
        fetched = true;
        if (outcome.ok) set = outcome.set;
        else why = outcome.message;
      } else {
        why = `${lastFailure?.message}; not retried for ${minRefetchIntervalMs} ms`;
      }
      if (set === null) {
        const now2 = clock();
        // `cached` is reassigned by the fetch awaited above; TypeScript's narrowing of it to
        // null from the first line does not survive that, hence the re-read through a cast.
        const last = /** @type {KeySet | null} */ (cached);
        if (last !== null && now2 < last.staleUntil) {
          set = last;
          servedStale = true;
        } else {
          return fail("jwks_unavailable", `no usable signing keys: ${why}`);
        }
      }
    }

    // 2. The key; an unknown kid gets one (rate-limited, coalesced) refetch.
    let entry = set.keys.get(kid);
    if (entry === undefined) {
      if (servedStale) {
        return fail(
          "jwks_unavailable",
          `kid ${JSON.stringify(kid)} is not in the cached key set and refreshing it failed: ${lastFailure?.message ?? "unknown error"}`,
        );
      }
      if (!fetched) {
        if (refetchAllowed(t)) {
          const outcome = await startFetch();
          if (!outcome.ok)
            return fail("jwks_unavailable", `kid ${JSON.stringify(kid)} is not cached and the key set refetch failed: ${outcome.message}`);
          entry = outcome.set.keys.get(kid);
        } else if (lastFailure !== null && failureBackoff(t)) {
          return fail(
            "jwks_unavailable",
            `kid ${JSON.stringify(kid)} is not cached and the last key set fetch failed: ${lastFailure.message}`,
          );
        } else {
          return fail(
            "missing_key",
            `no signing key with kid ${JSON.stringify(kid)} (key set fetched less than ${minRefetchIntervalMs} ms ago; not refetched)`,
          );
        }
      }
      if (entry === undefined) return fail("missing_key", `no signing key with kid ${JSON.stringify(kid)} in the published key set`);
    }
    return { ok: true, entry };
  }

  return { lookup };
}
