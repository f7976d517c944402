// @ts-check
// Verifying one delivery against a key the caller already has. A delivery is accepted when:
//   - all six signed headers are present and well formed, version is exactly "v1" and
//     algorithm exactly "ed25519";
//   - |now - X-Service-Timestamp| <= maxTimestampAgeMs (both directions);
//   - the key named by X-Service-Signature-Key-Id is a usable Ed25519 key (x = 32 bytes);
//   - the hex signature (64 bytes) verifies over
//       "v1.ed25519.<keyId>.<timestampMs>.<eventId>." || <raw body bytes>
//     built from the header values exactly as delivered.

import { Buffer } from "node:buffer";
import { verify as cryptoVerify } from "node:crypto";
import { keyFromMapValue } from "./key-set.mjs";
import {
  EVENT_ID_HEADER,
  EVENT_ID_RE,
  EVENT_TYPE_HEADER,
  KEY_ID_RE,
  ORGANIZATION_ID_HEADER,
  SIGNATURE_ALGORITHM,
  SIGNATURE_ALGORITHM_HEADER,
  SIGNATURE_HEADER,
  SIGNATURE_HEX_RE,
  SIGNATURE_KEY_ID_HEADER,
  SIGNATURE_VERSION,
  SIGNATURE_VERSION_HEADER,
  SIGNED_HEADERS,
  TIMESTAMP_HEADER,
  TIMESTAMP_RE,
  TOKEN_RE,
  bodyBytes,
  signedMessage,
} from "./protocol.mjs";

export const DEFAULT_MAX_TIMESTAMP_AGE_MS = 300_000;

/**
 * @typedef {import("../webhooks.d.mts").WebhookFailureReason} Reason
 * @typedef {import("../webhooks.d.mts").VerifyResult} VerifyResult
 * @typedef {import("../webhooks.d.mts").VerifySuccess} VerifySuccess
 * @typedef {import("../webhooks.d.mts").VerifyFailure} VerifyFailure
 * @typedef {import("../webhooks.d.mts").WebhookHeadersInput} HeadersInput
 * @typedef {import("./key-set.mjs").KeyEntry} KeyEntry
 * @typedef {{ keyId: string, eventId: string, timestampText: string, timestampMs: number,
 *   signature: Buffer, body: Buffer, organizationId?: string, eventType?: string }} Delivery
 * @typedef {{ kind: "missing" } | { kind: "value", value: string } | { kind: "ambiguous" }} HeaderRead
 */

/**
 * @param {Reason} reason
 * @param {string} message
 * @returns {VerifyFailure}
 */
export function fail(reason, message) {
  return { ok: false, reason, message };
}

/**
 * @param {unknown} value
 * @param {string} name
 * @returns {number}
 */
export function checkWindow(value, name) {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new TypeError(`${name} must be a finite number >= 0`);
  }
  return value;
}

/**
 * Case-insensitive header reader over a Headers-like object (anything with get()), a Map, or a
 * plain record such as node's IncomingHttpHeaders.
 * @param {HeadersInput} headers
 * @returns {(name: string) => HeaderRead}
 */
function headerReader(headers) {
  if (headers === null || typeof headers !== "object") {
    throw new TypeError("webhook verification: headers must be an object or a Headers instance");
  }
  if (!(headers instanceof Map) && typeof headers.get === "function") {
    const withGet = /** @type {import("../webhooks.d.mts").HeadersLike} */ (headers);
    return (name) => {
      const v = withGet.get(name);
      return typeof v === "string" && v !== "" ? { kind: "value", value: v } : { kind: "missing" };
    };
  }
  /** @type {Map<string, unknown[]>} */
  const byName = new Map();
  /** @type {Iterable<[unknown, unknown]>} */
  const entries = headers instanceof Map ? headers.entries() : Object.entries(headers);
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
    const values = found.flatMap((v) => (Array.isArray(v) ? v : [v])).filter((v) => v !== "" && v != null);
    if (values.length === 0) return { kind: "missing" };
    const first = values[0];
    if (values.length > 1 || typeof first !== "string") return { kind: "ambiguous" };
    return { kind: "value", value: first };
  };
}

/**
 * Header checks, encodings and freshness: everything that needs no key.
 * @param {HeadersInput} headers
 * @param {unknown} rawBody
 * @param {number} nowMs
 * @param {number} maxTimestampAgeMs
 * @returns {{ ok: true, delivery: Delivery } | VerifyFailure}
 */
export function parseDelivery(headers, rawBody, nowMs, maxTimestampAgeMs) {
  const read = headerReader(headers);
  const body = bodyBytes(rawBody);

  /** @type {Map<string, string>} */
  const v = new Map();
  /** @type {string[]} */
  const missing = [];
  for (const name of SIGNED_HEADERS) {
    const r = read(name);
    if (r.kind === "missing") missing.push(name);
    else if (r.kind === "ambiguous") return fail("bad_header", `${name} is present more than once`);
    else v.set(name, r.value);
  }
  if (missing.length > 0) {
    return fail("missing_header", `missing required header${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}`);
  }
  // Every signed header was read above, so none of these is the "" fallback.
  const version = v.get(SIGNATURE_VERSION_HEADER) ?? "";
  const algorithm = v.get(SIGNATURE_ALGORITHM_HEADER) ?? "";
  const timestampText = v.get(TIMESTAMP_HEADER) ?? "";
  const keyId = v.get(SIGNATURE_KEY_ID_HEADER) ?? "";
  const eventId = v.get(EVENT_ID_HEADER) ?? "";
  const signatureHex = v.get(SIGNATURE_HEADER) ?? "";

  if (!TOKEN_RE.test(version)) return fail("bad_header", `${SIGNATURE_VERSION_HEADER} is malformed`);
  if (version !== SIGNATURE_VERSION) {
    return fail(
      "unsupported_version",
      `${SIGNATURE_VERSION_HEADER} ${JSON.stringify(version)} is not supported (expected "${SIGNATURE_VERSION}")`,
    );
  }
  if (!TOKEN_RE.test(algorithm)) return fail("bad_header", `${SIGNATURE_ALGORITHM_HEADER} is malformed`);
  if (algorithm !== SIGNATURE_ALGORITHM) {
    return fail(
      "unsupported_algorithm",
      `${SIGNATURE_ALGORITHM_HEADER} ${JSON.stringify(algorithm)} is not supported (expected "${SIGNATURE_ALGORITHM}")`,
    );
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

/**
 * The signature check, once the key named by the delivery has been looked up.
 * @param {Delivery} d
 * @param {KeyEntry | undefined} entry
 * @returns {VerifyResult}
 */
export function verifyWithEntry(d, entry) {
  if (entry === undefined) return fail("missing_key", `no signing key with kid ${JSON.stringify(d.keyId)}`);
  if (!entry.ok) return fail("bad_key", `signing key ${JSON.stringify(d.keyId)}: ${entry.message}`);
  let good;
  try {
    good = cryptoVerify(null, signedMessage(d.keyId, d.timestampText, d.eventId, d.body), entry.key, d.signature);
  } catch {
    good = false;
  }
  if (!good) return fail("bad_signature", "signature does not verify over the signed message (raw body, key id, timestamp, event id)");
  /** @type {VerifySuccess} */
  const ok = { ok: true, eventId: d.eventId, keyId: d.keyId, timestampMs: d.timestampMs };
  if (d.organizationId !== undefined) ok.organizationId = d.organizationId;
  if (d.eventType !== undefined) ok.eventType = d.eventType;
  return ok;
}

/**
 * Synchronous core: verification against keys the caller already has.
 * @param {import("../webhooks.d.mts").VerifyWebhookSignatureInput} input
 * @returns {VerifyResult}
 */
export function verifyWebhookSignature(input) {
  if (input === null || typeof input !== "object") throw new TypeError("verifyWebhookSignature: input must be an object");
  const { headers, rawBody, publicKeys } = input;
  const nowMs = input.nowMs ?? Date.now();
  if (typeof nowMs !== "number" || !Number.isFinite(nowMs)) throw new TypeError("verifyWebhookSignature: nowMs must be a finite number");
  const window = checkWindow(input.maxTimestampAgeMs ?? DEFAULT_MAX_TIMESTAMP_AGE_MS, "verifyWebhookSignature: maxTimestampAgeMs");
  if (!(publicKeys instanceof Map))
    throw new TypeError("verifyWebhookSignature: publicKeys must be a Map of kid to KeyObject or base64url x");
  const parsed = parseDelivery(headers, rawBody, nowMs, window);
  if (!parsed.ok) return parsed;
  const d = parsed.delivery;
  return verifyWithEntry(d, publicKeys.has(d.keyId) ? keyFromMapValue(publicKeys.get(d.keyId)) : undefined);
}
