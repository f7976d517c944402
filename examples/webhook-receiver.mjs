#!/usr/bin/env node
// @ts-check
// A minimal Sigil webhook receiver built on @sigil/webhooks.
//
//   SIGIL_JWKS_URL=https://sigil.example.com/public/v1/discovery/webhooks/jwks PORT=3000 \
//     node examples/webhook-receiver.mjs
//
// Every POST is verified over its raw body bytes before anything parses it. A failed verification
// is answered 401 {"error": <reason>, "message": ...}; when the signing keys cannot be fetched at
// all (jwks_unavailable) the answer is 503 instead, so the sender retries rather than treating
// the delivery as permanently rejected. A verified delivery is answered 200 and logged as one
// JSON line on stdout. Event ids already accepted within the freshness window are acknowledged
// again without being processed twice (replay / retry deduplication).
import http from "node:http";
import { createWebhookVerifier, DEFAULT_MAX_TIMESTAMP_AGE_MS } from "@sigil/webhooks";

const jwksUrl = process.env.SIGIL_JWKS_URL;
if (!jwksUrl) {
  console.error("SIGIL_JWKS_URL is required (the service's /public/v1/discovery/webhooks/jwks URL)");
  process.exit(2);
}
const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? "0.0.0.0";
const MAX_BODY_BYTES = 1 << 20;

const verifier = createWebhookVerifier({ jwksUrl });
/** eventId → time until which a repeat is treated as a duplicate */
const seen = new Map();

/** @param {unknown} fields */
const log = (fields) => console.log(JSON.stringify({ time: new Date().toISOString(), .../** @type {object} */ (fields) }));

/**
 * @param {http.ServerResponse} res
 * @param {number} status
 * @param {unknown} body
 */
function reply(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/**
 * The body exactly as received, up to MAX_BODY_BYTES.
 * @param {http.IncomingMessage} req
 * @returns {Promise<Buffer | null>}
 */
async function readRawBody(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

// handle() answers every request itself, a 500 when anything throws.
const server = http.createServer((req, res) => void handle(req, res));

/**
 * @param {http.IncomingMessage} req
 * @param {http.ServerResponse} res
 */
async function handle(req, res) {
  try {
    if (req.method !== "POST") {
      res.setHeader("allow", "POST");
      return reply(res, 405, { error: "method_not_allowed" });
    }
    const rawBody = await readRawBody(req);
    if (rawBody === null) return reply(res, 413, { error: "payload_too_large" });

    const result = await verifier.verify({ headers: req.headers, rawBody });
    if (!result.ok) {
      log({ msg: "webhook rejected", reason: result.reason, detail: result.message });
      if (result.reason === "jwks_unavailable") {
        res.setHeader("retry-after", "30");
        return reply(res, 503, { error: result.reason, message: result.message });
      }
      return reply(res, 401, { error: result.reason, message: result.message });
    }

    const now = Date.now();
    for (const [id, until] of seen) if (until < now) seen.delete(id);
    if (seen.has(result.eventId)) {
      log({ msg: "webhook duplicate", eventId: result.eventId });
      return reply(res, 200, { ok: true, duplicate: true });
    }
    seen.set(result.eventId, now + 2 * DEFAULT_MAX_TIMESTAMP_AGE_MS);

    // Only now is the body parsed. Event type and organization id headers are not signed; the
    // payload's own fields are.
    let payload;
    try {
      payload = JSON.parse(rawBody.toString("utf8"));
    } catch {
      payload = undefined;
    }
    log({
      msg: "webhook accepted",
      eventId: result.eventId,
      eventType: result.eventType ?? null,
      organizationId: result.organizationId ?? null,
      keyId: result.keyId,
      timestampMs: result.timestampMs,
      payloadType: payload && typeof payload === "object" ? (payload.type ?? null) : null,
    });
    return reply(res, 200, { ok: true });
  } catch (e) {
    log({ msg: "webhook handler error", error: e instanceof Error ? e.message : String(e) });
    if (!res.headersSent) reply(res, 500, { error: "internal_error" });
  }
}

server.listen(port, host, () => {
  const addr = server.address();
  log({ msg: "listening", port: addr && typeof addr === "object" ? addr.port : port, jwksUrl });
});

for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"])) {
  process.once(signal, () => server.close(() => process.exit(0)));
}
