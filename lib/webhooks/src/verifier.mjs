// @ts-check
// createWebhookVerifier: delivery verification (./delivery.mjs) against the service's
// published key set, fetched and cached by ./remote-key-set.mjs.

import { DEFAULT_MAX_TIMESTAMP_AGE_MS, checkWindow, parseDelivery, verifyWithEntry } from "./delivery.mjs";
import {
  DEFAULT_CACHE_TTL_MS,
  DEFAULT_FETCH_TIMEOUT_MS,
  DEFAULT_MAX_CACHE_TTL_MS,
  DEFAULT_MIN_REFETCH_INTERVAL_MS,
  DEFAULT_STALE_IF_ERROR_MS,
  createRemoteKeySet,
} from "./remote-key-set.mjs";

/**
 * @param {import("../webhooks.d.mts").CreateWebhookVerifierOptions} options
 * @returns {import("../webhooks.d.mts").WebhookVerifier}
 */
export function createWebhookVerifier(options) {
  if (options === null || typeof options !== "object") throw new TypeError("createWebhookVerifier: options must be an object");
  let url;
  try {
    url = new URL(String(options.jwksUrl));
  } catch {
    throw new TypeError("createWebhookVerifier: jwksUrl must be an absolute http(s) URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new TypeError("createWebhookVerifier: jwksUrl must be an http(s) URL");
  const maxTimestampAgeMs = checkWindow(
    options.maxTimestampAgeMs ?? DEFAULT_MAX_TIMESTAMP_AGE_MS,
    "createWebhookVerifier: maxTimestampAgeMs",
  );
  const minRefetchIntervalMs = checkWindow(
    options.minRefetchIntervalMs ?? DEFAULT_MIN_REFETCH_INTERVAL_MS,
    "createWebhookVerifier: minRefetchIntervalMs",
  );
  const cache = {
    defaultTtlMs: checkWindow(options.defaultCacheTtlMs ?? DEFAULT_CACHE_TTL_MS, "createWebhookVerifier: defaultCacheTtlMs"),
    maxTtlMs: checkWindow(options.maxCacheTtlMs ?? DEFAULT_MAX_CACHE_TTL_MS, "createWebhookVerifier: maxCacheTtlMs"),
    staleIfErrorMs: checkWindow(options.staleIfErrorMs ?? DEFAULT_STALE_IF_ERROR_MS, "createWebhookVerifier: staleIfErrorMs"),
  };
  const fetchTimeoutMs = checkWindow(options.fetchTimeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS, "createWebhookVerifier: fetchTimeoutMs");
  // The global fetch accepts everything FetchLike passes and answers a Response, which has
  // every member FetchResponseLike reads.
  const fetchImpl = options.fetch ?? /** @type {import("../webhooks.d.mts").FetchLike} */ (globalThis.fetch);
  if (typeof fetchImpl !== "function") throw new TypeError("createWebhookVerifier: no fetch implementation (pass options.fetch)");
  const nowFn = options.now ?? Date.now;
  if (typeof nowFn !== "function") throw new TypeError("createWebhookVerifier: now must be a function");

  const clock = () => {
    const t = nowFn();
    if (typeof t !== "number" || !Number.isFinite(t)) throw new TypeError("createWebhookVerifier: now() must return a finite number");
    return t;
  };
  const keySet = createRemoteKeySet({ jwksUrl: url.href, fetch: fetchImpl, clock, minRefetchIntervalMs, fetchTimeoutMs, cache });

  /**
   * @param {import("../webhooks.d.mts").VerifyInput} input
   * @returns {Promise<import("../webhooks.d.mts").VerifyResult>}
   */
  async function verify(input) {
    if (input === null || typeof input !== "object") throw new TypeError("verify: input must be { headers, rawBody }");
    const t = clock();
    const parsed = parseDelivery(input.headers, input.rawBody, t, maxTimestampAgeMs);
    if (!parsed.ok) return parsed;
    const found = await keySet.lookup(parsed.delivery.keyId, t);
    if (!found.ok) return found;
    return verifyWithEntry(parsed.delivery, found.entry);
  }

  return Object.freeze({ verify });
}
