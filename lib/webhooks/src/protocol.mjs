// @ts-check
// The wire format of a signed delivery (docs/webhooks.md §2.2): header
// names, the version and algorithm this library speaks, the shapes header values must have,
// and the exact bytes that are signed. No I/O and no keys here.

import { Buffer } from "node:buffer";

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
export const SIGNED_HEADERS = Object.freeze(
  /** @type {const} */ ([
    EVENT_ID_HEADER,
    SIGNATURE_KEY_ID_HEADER,
    SIGNATURE_ALGORITHM_HEADER,
    SIGNATURE_VERSION_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
  ]),
);

export const SIGNATURE_VERSION = "v1";
export const SIGNATURE_ALGORITHM = "ed25519";

/** @type {readonly import("../webhooks.d.mts").WebhookFailureReason[]} */
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
export const TOKEN_RE = /^[A-Za-z0-9_-]{1,32}$/;
export const KEY_ID_RE = /^[\x21-\x7e]{1,256}$/;
export const EVENT_ID_RE = /^[\x21-\x2d\x2f-\x7e]{1,256}$/;
export const TIMESTAMP_RE = /^[0-9]{1,20}$/;
export const SIGNATURE_HEX_RE = /^[0-9A-Fa-f]{128}$/;

/**
 * The raw body as bytes; a string is taken as UTF-8.
 * @param {unknown} rawBody
 * @returns {Buffer}
 */
export function bodyBytes(rawBody) {
  if (typeof rawBody === "string") return Buffer.from(rawBody, "utf8");
  if (rawBody instanceof Uint8Array) {
    return Buffer.isBuffer(rawBody) ? rawBody : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  }
  throw new TypeError("webhook verification: rawBody must be a Uint8Array/Buffer (preferred) or a string");
}

/**
 * The signed bytes from header values already checked against the grammars above.
 * @param {string} keyId
 * @param {string} timestampText
 * @param {string} eventId
 * @param {Buffer} body
 * @returns {Buffer}
 */
export function signedMessage(keyId, timestampText, eventId, body) {
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
