// @ts-check
// Sigil webhook receiver verification (interface spec "Events", WIRE-NOTES §12.2-12.4).
//
// Plain JavaScript on purpose: receivers import it without any TypeScript tooling. Types live in
// the hand-written ./webhooks.d.mts next to this file. Node built-ins and global fetch only.
//
// A delivery is accepted when:
//   - all six signed headers are present and well formed, version is exactly "v1" and
//     algorithm exactly "ed25519";
//   - |now - X-Service-Timestamp| <= maxTimestampAgeMs (both directions);
//   - the key named by X-Service-Signature-Key-Id is a published Ed25519 key (x = 32 bytes);
//   - the hex signature (64 bytes) verifies over
//       "v1.ed25519.<keyId>.<timestampMs>.<eventId>." || <raw body bytes>
//     built from the header values exactly as delivered.
//
// Key-set caching policy of createWebhookVerifier (decisions, see also the .d.mts):
//   - freshness from Cache-Control max-age minus Age; 5 minutes when there is no max-age;
//     capped at 24 hours so a retired key cannot stay trusted for longer than that;
//     no-store / no-cache: fetched every time the cache is consulted (once per verify);
//   - unknown kid in a cached set: one refetch, at most one per minRefetchIntervalMs (10 s)
//     per verifier; concurrent fetches are coalesced into one request;
//   - stale-if-error: when a refresh fails, the last good set is served for up to 1 hour past
//     its expiry (or the response's own stale-if-error=N), never for no-store or
//     must-revalidate responses; after a failed fetch no new fetch is tried for
//     minRefetchIntervalMs;
//   - a kid that cannot be looked up because the key server is unreachable is reported as
//     jwks_unavailable, not missing_key (the delivery may be perfectly good).

import { Buffer } from "node:buffer";
import { KeyObject, createPublicKey, verify as cryptoVerify } from "node:crypto";

export const EVENT_ID_HEADER = "X-Service-Event-Id";
export const SIGNATURE_KEY_ID_HEADER = "X-Service-Signature-Key-Id";
export const SIGNATURE_ALGORITHM_HEADER = "X-Service-Signature-Algorithm";
export const SIGNATURE_VERSION_HEADER = "X-Service-Signature-Version";
export const SIGNATURE_HEADER = "X-Service-Signature";
export const TIMESTAMP_HEADER = "X-Service-Timestamp";
/** Not signed: informational only, never trust it for authorization. */
export const ORGANIZATION_ID_HEADER = "X-Service-Organization-Id";
/** Not signed: informational only, never trust it for authorization. */
export const EVENT_TYPE_HEADER = "X-Service-Event-Type";

export const WEBHOOK_HEADERS = Object.freeze({
  eventId: EVENT_ID_HEADER,
  signatureKeyId: SIGNATURE_KEY_ID_HEADER,
  signatureAlgorithm: SIGNATURE_ALGORITHM_HEADER,
  signatureVersion: SIGNATURE_VERSION_HEADER,
  signature: SIGNATURE_HEADER,
  timestamp: TIMESTAMP_HEADER,
  organizationId: ORGANIZATION_ID_HEADER,
  eventType: EVENT_TYPE_HEADER,
});

/** The six headers every delivery must carry (in the order they are checked). */
export const SIGNED_HEADERS = Object.freeze([
  EVENT_ID_HEADER,
  SIGNATURE_KEY_ID_HEADER,
  SIGNATURE_ALGORITHM_HEADER,
  SIGNATURE_VERSION_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
]);

export const SIGNATURE_VERSION = "v1";
export const SIGNATURE_ALGORITHM = "ed25519";
export const DEFAULT_MAX_TIMESTAMP_AGE_MS = 300_000;
export const DEFAULT_MIN_REFETCH_INTERVAL_MS = 10_000;
export const DEFAULT_CACHE_TTL_MS = 300_000;
export const DEFAULT_MAX_CACHE_TTL_MS = 86_400_000;
export const DEFAULT_STALE_IF_ERROR_MS = 3_600_000;
export const DEFAULT_FETCH_TIMEOUT_MS = 5_000;
const MAX_JWKS_BYTES = 1 << 20;

export const WEBHOOK_FAILURE_REASONS = Object.freeze([
  "missing_header",
  "bad_header",
  "unsupported_version",
  "unsupported_algorithm",
  "missing_key",
  "bad_key",
  "bad_signature_encoding",
  "bad_signature",
  "stale_timestamp",
  "jwks_unavailable",
]);

// Header value grammars. Version and algorithm: a token (no dots, no spaces); anything else in
// that shape is "unsupported", anything not in that shape is "bad". Key id: visible ASCII.
// Event id: visible ASCII without "." - it is the last field before the raw body in the signed
// message, so a dot in it would let bytes move between event id and body under one signature.
const TOKEN_RE = /^[A-Za-z0-9_-]{1,32}$/;
const KEY_ID_RE = /^[\x21-\x7e]{1,256}$/;
const EVENT_ID_RE = /^[\x21-\x2d\x2f-\x7e]{1,256}$/;
const TIMESTAMP_RE = /^[0-9]{1,20}$/;
const SIGNATURE_HEX_RE = /^[0-9A-Fa-f]{128}$/;
const B64URL_RE = /^[A-Za-z0-9_-]*$/;

/**
 * @typedef {import("./webhooks.d.mts").WebhookFailureReason} Reason
 * @typedef {import("./webhooks.d.mts").VerifyResult} VerifyResult
 * @typedef {import("./webhooks.d.mts").VerifyFailure} VerifyFailure
 * @typedef {import("./webhooks.d.mts").WebhookHeadersInput} HeadersInput
 * @typedef {{ keyId: string, eventId: string, timestampText: string, timestampMs: number,
 *   signature: Buffer, body: Buffer, organizationId?: string, eventType?: string }} Delivery
 * @typedef {{ ok: true, key: KeyObject } | { ok: false, message: string }} KeyEntry
 * @typedef {{ keys: Map<string, KeyEntry>, fetchedAt: number, expiresAt: number,
 *   staleUntil: number, retain: boolean }} KeySet
 * @typedef {{ ok: true, set: KeySet } | { ok: false, message: string }} FetchOutcome
 */

/**
 * @param {Reason} reason
 * @param {string} message
 * @returns {VerifyFailure}
 */
function fail(reason, message) {
  return { ok: false, reason, message };
}

// ---------------------------------------------------------------------------------------------
// Headers and body

/**
 * Case-insensitive header reader over a Headers-like object (anything with get()), a Map, or a
 * plain record such as node's IncomingHttpHeaders.
 * @param {HeadersInput} headers
 * @returns {(name: string) => { kind: "missing" } | { kind: "value", value: string } | { kind: "ambiguous" }}
 */
function headerReader(headers) {
  if (headers === null || typeof headers !== "object") {
    throw new TypeError("webhook verification: headers must be an object or a Headers instance");
  }
  const h = /** @type {any} */ (headers);
  if (!(h instanceof Map) && typeof h.get === "function") {
    return (name) => {
      const v = h.get(name);
      return typeof v === "string" && v !== "" ? { kind: "value", value: v } : { kind: "missing" };
    };
  }
  /** @type {Map<string, unknown[]>} */
  const byName = new Map();
  const entries = h instanceof Map ? [...h.entries()] : Object.entries(h);
  for (const [k, v] of entries) {
    if (typeof k !== "string" || v === undefined || v === null) continue;
    const lower = k.toLowerCase();
    const list = byName.get(lower);
    if (list) list.push(v);
    else byName.set(lower, [v]);
  }
  return (name) => {
    const found = byName.get(name.toLowerCase());
    if (!found) return { kind: "missing" };
    /** @type {unknown[]} */
    const values = found.flatMap((v) => (Array.isArray(v) ? v : [v])).filter((v) => v !== "" && v != null);
    if (values.length === 0) return { kind: "missing" };
    const first = values[0];
    if (values.length > 1 || typeof first !== "string") return { kind: "ambiguous" };
    return { kind: "value", value: first };
  };
}

/**
 * @param {unknown} rawBody
 * @returns {Buffer}
 */
function bodyBytes(rawBody) {
  if (typeof rawBody === "string") return Buffer.from(rawBody, "utf8");
  if (rawBody instanceof Uint8Array) {
    return Buffer.isBuffer(rawBody) ? rawBody : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  }
  throw new TypeError("webhook verification: rawBody must be a Uint8Array/Buffer (preferred) or a string");
}

/**
 * @param {string} keyId
 * @param {string} timestampText
 * @param {string} eventId
 * @param {Buffer} body
 */
function signedMessage(keyId, timestampText, eventId, body) {
  const prefix = Buffer.from(`${SIGNATURE_VERSION}.${SIGNATURE_ALGORITHM}.${keyId}.${timestampText}.${eventId}.`, "utf8");
  return Buffer.concat([prefix, body]);
}

/**
 * The exact bytes that are signed:
 * `v1.ed25519.<keyId>.<timestampMs>.<eventId>.` followed by the raw body bytes.
 * @param {string} keyId
 * @param {number | string} timestampMs
 * @param {string} eventId
 * @param {Uint8Array | string} rawBody
 * @returns {Buffer}
 */
export function webhookSignedMessage(keyId, timestampMs, eventId, rawBody) {
  if (typeof keyId !== "string" || !KEY_ID_RE.test(keyId)) {
    throw new TypeError("webhookSignedMessage: keyId must be 1-256 visible ASCII characters");
  }
  if (typeof eventId !== "string" || !EVENT_ID_RE.test(eventId)) {
    throw new TypeError("webhookSignedMessage: eventId must be 1-256 visible ASCII characters other than '.'");
  }
  /** @type {string} */
  let ts;
  if (typeof timestampMs === "number") {
    if (!Number.isSafeInteger(timestampMs) || timestampMs < 0) {
      throw new TypeError("webhookSignedMessage: timestampMs must be a non-negative safe integer");
    }
    ts = String(timestampMs);
  } else if (typeof timestampMs === "string" && TIMESTAMP_RE.test(timestampMs) && Number.isSafeInteger(Number(timestampMs))) {
    ts = timestampMs;
  } else {
    throw new TypeError("webhookSignedMessage: timestampMs must be a non-negative safe integer or its decimal string");
  }
  return signedMessage(keyId, ts, eventId, bodyBytes(rawBody));
}

/**
 * Header checks, encodings and freshness: everything that needs no key.
 * @param {HeadersInput} headers
 * @param {unknown} rawBody
 * @param {number} nowMs
 * @param {number} maxTimestampAgeMs
 * @returns {{ ok: true, delivery: Delivery } | VerifyFailure}
 */
function parseDelivery(headers, rawBody, nowMs, maxTimestampAgeMs) {
  const read = headerReader(headers);
  const body = bodyBytes(rawBody);

  /** @type {Record<string, string>} */
  const v = {};
  /** @type {string[]} */
  const missing = [];
  for (const name of SIGNED_HEADERS) {
    const r = read(name);
    if (r.kind === "missing") missing.push(name);
    else if (r.kind === "ambiguous") return fail("bad_header", `${name} is present more than once`);
    else v[name] = r.value;
  }
  if (missing.length > 0) {
    return fail("missing_header", `missing required header${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}`);
  }
  const version = /** @type {string} */ (v[SIGNATURE_VERSION_HEADER]);
  const algorithm = /** @type {string} */ (v[SIGNATURE_ALGORITHM_HEADER]);
  const timestampText = /** @type {string} */ (v[TIMESTAMP_HEADER]);
  const keyId = /** @type {string} */ (v[SIGNATURE_KEY_ID_HEADER]);
  const eventId = /** @type {string} */ (v[EVENT_ID_HEADER]);
  const signatureHex = /** @type {string} */ (v[SIGNATURE_HEADER]);

  if (!TOKEN_RE.test(version)) return fail("bad_header", `${SIGNATURE_VERSION_HEADER} is malformed`);
  if (version !== SIGNATURE_VERSION) {
    return fail("unsupported_version", `${SIGNATURE_VERSION_HEADER} ${JSON.stringify(version)} is not supported (expected "${SIGNATURE_VERSION}")`);
  }
  if (!TOKEN_RE.test(algorithm)) return fail("bad_header", `${SIGNATURE_ALGORITHM_HEADER} is malformed`);
  if (algorithm !== SIGNATURE_ALGORITHM) {
    return fail("unsupported_algorithm", `${SIGNATURE_ALGORITHM_HEADER} ${JSON.stringify(algorithm)} is not supported (expected "${SIGNATURE_ALGORITHM}")`);
  }
  const timestampMs = Number(timestampText);
  if (!TIMESTAMP_RE.test(timestampText) || !Number.isSafeInteger(timestampMs)) {
    return fail("bad_header", `${TIMESTAMP_HEADER} must be a non-negative integer number of milliseconds`);
  }
  if (!KEY_ID_RE.test(keyId)) return fail("bad_header", `${SIGNATURE_KEY_ID_HEADER} must be 1-256 visible ASCII characters`);
  if (!EVENT_ID_RE.test(eventId)) {
    return fail("bad_header", `${EVENT_ID_HEADER} must be 1-256 visible ASCII characters other than '.'`);
  }
  if (!SIGNATURE_HEX_RE.test(signatureHex)) {
    return fail("bad_signature_encoding", `${SIGNATURE_HEADER} must be 128 hex characters (a 64-byte Ed25519 signature)`);
  }
  const skew = nowMs - timestampMs;
  if (Math.abs(skew) > maxTimestampAgeMs) {
    return fail(
      "stale_timestamp",
      `${TIMESTAMP_HEADER} is ${Math.abs(skew)} ms ${skew > 0 ? "in the past" : "in the future"} (window ${maxTimestampAgeMs} ms)`,
    );
  }

  /** @type {Delivery} */
  const delivery = { keyId, eventId, timestampText, timestampMs, signature: Buffer.from(signatureHex, "hex"), body };
  const org = read(ORGANIZATION_ID_HEADER);
  if (org.kind === "value") delivery.organizationId = org.value;
  const type = read(EVENT_TYPE_HEADER);
  if (type.kind === "value") delivery.eventType = type.value;
  return { ok: true, delivery };
}

// ---------------------------------------------------------------------------------------------
// Keys

/**
 * @param {unknown} x
 * @returns {KeyEntry}
 */
function keyFromX(x) {
  if (typeof x !== "string") return { ok: false, message: "public key x is missing or not a string" };
  if (!B64URL_RE.test(x)) return { ok: false, message: "public key x is not base64url (no padding)" };
  const raw = Buffer.from(x, "base64url");
  if (raw.length !== 32) return { ok: false, message: `public key x decodes to ${raw.length} bytes, expected 32` };
  if (raw.toString("base64url") !== x) return { ok: false, message: "public key x is not canonical base64url" };
  try {
    return { ok: true, key: createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" }) };
  } catch (e) {
    return { ok: false, message: `public key x is not a usable Ed25519 key: ${errorText(e)}` };
  }
}

/**
 * @param {unknown} value
 * @returns {KeyEntry}
 */
function keyFromMapValue(value) {
  if (value instanceof KeyObject) {
    if (value.type !== "public" || value.asymmetricKeyType !== "ed25519") {
      return { ok: false, message: `key is a ${value.type} ${value.asymmetricKeyType ?? "symmetric"} key, expected a public ed25519 key` };
    }
    return { ok: true, key: value };
  }
  if (typeof value === "string") return keyFromX(value);
  return { ok: false, message: "key must be a public Ed25519 KeyObject or a base64url x string" };
}

/**
 * One published JWK, checked against "Published signing keys".
 * @param {Record<string, unknown>} jwk
 * @returns {KeyEntry}
 */
function keyFromJwk(jwk) {
  if (jwk.kty !== "OKP") return { ok: false, message: `published key has kty ${JSON.stringify(jwk.kty)}, expected "OKP"` };
  if (jwk.crv !== "Ed25519") return { ok: false, message: `published key has crv ${JSON.stringify(jwk.crv)}, expected "Ed25519"` };
  if (jwk.alg !== undefined && jwk.alg !== "EdDSA" && jwk.alg !== "Ed25519") {
    return { ok: false, message: `published key has alg ${JSON.stringify(jwk.alg)}, expected "EdDSA"` };
  }
  if (jwk.use !== undefined && jwk.use !== "sig") return { ok: false, message: `published key has use ${JSON.stringify(jwk.use)}, expected "sig"` };
  if (jwk.service_signature_algorithm !== undefined && jwk.service_signature_algorithm !== SIGNATURE_ALGORITHM) {
    return { ok: false, message: `published key has service_signature_algorithm ${JSON.stringify(jwk.service_signature_algorithm)}, expected "${SIGNATURE_ALGORITHM}"` };
  }
  if (jwk.service_signature_version !== undefined && jwk.service_signature_version !== SIGNATURE_VERSION) {
    return { ok: false, message: `published key has service_signature_version ${JSON.stringify(jwk.service_signature_version)}, expected "${SIGNATURE_VERSION}"` };
  }
  return keyFromX(jwk.x);
}

/**
 * @param {Delivery} d
 * @param {KeyEntry | undefined} entry
 * @returns {VerifyResult}
 */
function verifyWithEntry(d, entry) {
  if (entry === undefined) return fail("missing_key", `no signing key with kid ${JSON.stringify(d.keyId)}`);
  if (!entry.ok) return fail("bad_key", `signing key ${JSON.stringify(d.keyId)}: ${entry.message}`);
  let good = false;
  try {
    good = cryptoVerify(null, signedMessage(d.keyId, d.timestampText, d.eventId, d.body), entry.key, d.signature);
  } catch {
    good = false;
  }
  if (!good) return fail("bad_signature", "signature does not verify over the signed message (raw body, key id, timestamp, event id)");
  /** @type {VerifyResult} */
  const ok = { ok: true, eventId: d.eventId, keyId: d.keyId, timestampMs: d.timestampMs };
  if (d.organizationId !== undefined) ok.organizationId = d.organizationId;
  if (d.eventType !== undefined) ok.eventType = d.eventType;
  return ok;
}

/**
 * @param {unknown} value
 * @param {string} name
 */
function checkWindow(value, name) {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new TypeError(`${name} must be a finite number >= 0`);
  }
  return value;
}

/**
 * Synchronous core: verification against keys the caller already has.
 * @param {import("./webhooks.d.mts").VerifyWebhookSignatureInput} input
 * @returns {VerifyResult}
 */
export function verifyWebhookSignature(input) {
  if (input === null || typeof input !== "object") throw new TypeError("verifyWebhookSignature: input must be an object");
  const { headers, rawBody, publicKeys } = input;
  const nowMs = input.nowMs ?? Date.now();
  if (typeof nowMs !== "number" || !Number.isFinite(nowMs)) throw new TypeError("verifyWebhookSignature: nowMs must be a finite number");
  const window = checkWindow(input.maxTimestampAgeMs ?? DEFAULT_MAX_TIMESTAMP_AGE_MS, "verifyWebhookSignature: maxTimestampAgeMs");
  if (!(publicKeys instanceof Map)) throw new TypeError("verifyWebhookSignature: publicKeys must be a Map of kid to KeyObject or base64url x");
  const parsed = parseDelivery(headers, rawBody, nowMs, window);
  if (!parsed.ok) return parsed;
  const d = parsed.delivery;
  return verifyWithEntry(d, publicKeys.has(d.keyId) ? keyFromMapValue(publicKeys.get(d.keyId)) : undefined);
}

// ---------------------------------------------------------------------------------------------
// JWKS fetching and caching

/**
 * @param {unknown} e
 * @returns {string}
 */
function errorText(e) {
  if (e instanceof Error) {
    const cause = /** @type {any} */ (e).cause;
    const code = cause && typeof cause === "object" ? cause.code ?? cause.message : undefined;
    return code ? `${e.message} (${code})` : e.message;
  }
  return String(e);
}

/**
 * Cache-Control → freshness lifetime and stale-if-error allowance, in ms.
 * @param {string | null} cacheControl
 * @param {string | null} ageHeader
 * @param {{ defaultTtlMs: number, maxTtlMs: number, staleIfErrorMs: number }} o
 */
function cachePolicyFrom(cacheControl, ageHeader, o) {
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
 * @param {unknown} json
 * @returns {Map<string, KeyEntry> | string}
 */
function keysFromJwks(json) {
  if (json === null || typeof json !== "object" || !Array.isArray(/** @type {any} */ (json).keys)) {
    return "JWKS response has no \"keys\" array";
  }
  /** @type {Map<string, KeyEntry>} */
  const keys = new Map();
  for (const item of /** @type {unknown[]} */ (/** @type {any} */ (json).keys)) {
    if (item === null || typeof item !== "object" || Array.isArray(item)) continue;
    const jwk = /** @type {Record<string, unknown>} */ (item);
    if (typeof jwk.kid !== "string" || jwk.kid === "") continue;
    keys.set(jwk.kid, keys.has(jwk.kid) ? { ok: false, message: "the key set publishes this kid more than once" } : keyFromJwk(jwk));
  }
  return keys;
}

/**
 * @param {import("./webhooks.d.mts").CreateWebhookVerifierOptions} options
 * @returns {import("./webhooks.d.mts").WebhookVerifier}
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
  const jwksUrl = url.href;
  const maxTimestampAgeMs = checkWindow(options.maxTimestampAgeMs ?? DEFAULT_MAX_TIMESTAMP_AGE_MS, "createWebhookVerifier: maxTimestampAgeMs");
  const minRefetchIntervalMs = checkWindow(options.minRefetchIntervalMs ?? DEFAULT_MIN_REFETCH_INTERVAL_MS, "createWebhookVerifier: minRefetchIntervalMs");
  const policyOptions = {
    defaultTtlMs: checkWindow(options.defaultCacheTtlMs ?? DEFAULT_CACHE_TTL_MS, "createWebhookVerifier: defaultCacheTtlMs"),
    maxTtlMs: checkWindow(options.maxCacheTtlMs ?? DEFAULT_MAX_CACHE_TTL_MS, "createWebhookVerifier: maxCacheTtlMs"),
    staleIfErrorMs: checkWindow(options.staleIfErrorMs ?? DEFAULT_STALE_IF_ERROR_MS, "createWebhookVerifier: staleIfErrorMs"),
  };
  const fetchTimeoutMs = checkWindow(options.fetchTimeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS, "createWebhookVerifier: fetchTimeoutMs");
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== "function") throw new TypeError("createWebhookVerifier: no fetch implementation (pass options.fetch)");
  const nowFn = options.now ?? Date.now;
  if (typeof nowFn !== "function") throw new TypeError("createWebhookVerifier: now must be a function");

  const clock = () => {
    const t = nowFn();
    if (typeof t !== "number" || !Number.isFinite(t)) throw new TypeError("createWebhookVerifier: now() must return a finite number");
    return t;
  };

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
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => {
        const err = new Error(`timed out after ${fetchTimeoutMs} ms`);
        controller.abort(err);
        reject(err);
      }, fetchTimeoutMs);
      timer.unref?.();
    });
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
      const p = cachePolicyFrom(res.headers?.get?.("cache-control") ?? null, res.headers?.get?.("age") ?? null, policyOptions);
      const expiresAt = startedAt + p.ttlMs;
      return { keys, fetchedAt: startedAt, expiresAt, staleUntil: expiresAt + p.staleIfErrorMs, retain: p.retain };
    })();
    try {
      const set = /** @type {KeySet} */ (await Promise.race([work, timeout]));
      return { ok: true, set };
    } catch (e) {
      return { ok: false, message: `JWKS fetch from ${jwksUrl} failed: ${errorText(e)}` };
    } finally {
      clearTimeout(timer);
      work.catch(() => {});
    }
  }

  /** One request at a time; every caller that arrives while it runs shares its outcome. */
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
   * @param {import("./webhooks.d.mts").VerifyInput} input
   * @returns {Promise<VerifyResult>}
   */
  async function verify(input) {
    if (input === null || typeof input !== "object") throw new TypeError("verify: input must be { headers, rawBody }");
    const t = clock();
    const parsed = parseDelivery(input.headers, input.rawBody, t, maxTimestampAgeMs);
    if (!parsed.ok) return parsed;
    const d = parsed.delivery;

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
        if (cached !== null && now2 < cached.staleUntil) {
          set = cached;
          servedStale = true;
        } else {
          return fail("jwks_unavailable", `no usable signing keys: ${why}`);
        }
      }
    }

    // 2. The key; an unknown kid gets one (rate-limited, coalesced) refetch.
    let entry = set.keys.get(d.keyId);
    if (entry === undefined) {
      if (servedStale) {
        return fail("jwks_unavailable", `kid ${JSON.stringify(d.keyId)} is not in the cached key set and refreshing it failed: ${lastFailure?.message ?? "unknown error"}`);
      }
      if (!fetched) {
        if (refetchAllowed(t)) {
          const outcome = await startFetch();
          if (!outcome.ok) return fail("jwks_unavailable", `kid ${JSON.stringify(d.keyId)} is not cached and the key set refetch failed: ${outcome.message}`);
          entry = outcome.set.keys.get(d.keyId);
        } else if (lastFailure !== null && failureBackoff(t)) {
          return fail("jwks_unavailable", `kid ${JSON.stringify(d.keyId)} is not cached and the last key set fetch failed: ${lastFailure.message}`);
        } else {
          return fail("missing_key", `no signing key with kid ${JSON.stringify(d.keyId)} (key set fetched less than ${minRefetchIntervalMs} ms ago; not refetched)`);
        }
      }
      if (entry === undefined) return fail("missing_key", `no signing key with kid ${JSON.stringify(d.keyId)} in the published key set`);
    }
    return verifyWithEntry(d, entry);
  }

  return Object.freeze({ verify });
}

// ---------------------------------------------------------------------------------------
// App proofs (activity.appProofs when a submission sets generateAppProofs: true).
// These are signatures by the service's own P-256 key, published at
// GET <base>/public/v1/discovery/app-proofs/keys — not hardware enclave attestations.

export const APP_PROOF_SCHEME = "SIGNATURE_SCHEME_EPHEMERAL_KEY_P256";

/**
 * Verifies an app proof: its scheme, that its key is one you trust (the 130-byte hex
 * `publicKey` values from the discovery route), and the ECDSA P-256 signature (r‖s hex)
 * over SHA-256 of the exact `proofPayload` text.
 * @param {{ scheme: string, publicKey: string, proofPayload: string, signature: string }} appProof
 * @param {{ trustedPublicKeys: Iterable<string> }} options
 * @returns {{ ok: true, payload: unknown } | { ok: false, reason: string, message: string }}
 */
export function verifyAppProof(appProof, options) {
  const bad = (reason, message) => ({ ok: false, reason, message });
  if (!appProof || typeof appProof !== "object") return bad("bad_proof", "an app proof must be an object");
  if (appProof.scheme !== APP_PROOF_SCHEME) return bad("unsupported_scheme", `scheme must be ${APP_PROOF_SCHEME}`);
  const pub = typeof appProof.publicKey === "string" ? appProof.publicKey.toLowerCase() : "";
  if (!/^[0-9a-f]{260}$/.test(pub)) return bad("bad_key", "publicKey must be 130 bytes of hex (encryption key ‖ signing key)");
  const trusted = new Set([...options.trustedPublicKeys].map((k) => String(k).toLowerCase()));
  if (!trusted.has(pub)) return bad("untrusted_key", "the proof is not signed by a trusted service key");
  const signing = Buffer.from(pub.slice(130), "hex");
  if (signing[0] !== 0x04) return bad("bad_key", "the signing key must be an uncompressed P-256 point");
  if (typeof appProof.signature !== "string" || !/^[0-9a-fA-F]{128}$/.test(appProof.signature)) {
    return bad("bad_signature_encoding", "signature must be 64 bytes (r‖s) of hex");
  }
  if (typeof appProof.proofPayload !== "string") return bad("bad_proof", "proofPayload must be a string");
  let key;
  try {
    key = createPublicKey({
      key: { kty: "EC", crv: "P-256", x: signing.subarray(1, 33).toString("base64url"), y: signing.subarray(33).toString("base64url") },
      format: "jwk",
    });
  } catch {
    return bad("bad_key", "the signing key is not a P-256 point");
  }
  const ok = cryptoVerify("sha256", Buffer.from(appProof.proofPayload, "utf8"), { key, dsaEncoding: "ieee-p1363" }, Buffer.from(appProof.signature, "hex"));
  if (!ok) return bad("bad_signature", "the signature does not match the payload");
  try {
    return { ok: true, payload: JSON.parse(appProof.proofPayload) };
  } catch {
    return bad("bad_proof", "proofPayload is not JSON");
  }
}
