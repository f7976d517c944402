// Webhook receiver verification library (lib/webhooks, imported through its workspace package
// "exports" as @sigil/webhooks): docs/webhooks.md §2.2, §3, §4.
// Deliveries are signed here with node:crypto Ed25519; the key set is served by a real local
// JWKS HTTP server whose hits are counted; the verifier's clock is injected.
import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from "node:crypto";
import fc from "fast-check";
import {
  EVENT_ID_HEADER,
  EVENT_TYPE_HEADER,
  ORGANIZATION_ID_HEADER,
  SIGNATURE_ALGORITHM_HEADER,
  SIGNATURE_HEADER,
  SIGNATURE_KEY_ID_HEADER,
  SIGNATURE_VERSION_HEADER,
  SIGNED_HEADERS,
  TIMESTAMP_HEADER,
  WEBHOOK_FAILURE_REASONS,
  WEBHOOK_HEADERS,
  createWebhookVerifier,
  verifyWebhookSignature,
  webhookSignedMessage,
  type CreateWebhookVerifierOptions,
  type VerifyResult,
  type VerifySuccess,
  type WebhookFailureReason,
  type WebhookVerifier,
} from "@sigil/webhooks";

const ROOT = path.resolve(import.meta.dirname, "../..");
const T0 = 1_760_000_000_000;
const WINDOW = 300_000;

// ---------------------------------------------------------------------------------------------
// Signing side (what the service does), written here with node:crypto only.

interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  x: string;
}

function newKey(kid: string): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const x = publicKey.export({ format: "jwk" }).x;
  assert.ok(typeof x === "string");
  return { kid, privateKey, publicKey, x };
}

type Jwk = Record<string, unknown>;

function jwkOf(k: SigningKey, overrides: Jwk = {}): Jwk {
  return {
    kid: k.kid,
    kty: "OKP",
    crv: "Ed25519",
    alg: "EdDSA",
    use: "sig",
    x: k.x,
    service_signature_algorithm: "ed25519",
    service_signature_version: "v1",
    ...overrides,
  };
}

interface Delivery {
  headers: Record<string, string>;
  rawBody: Buffer;
}

interface DeliverOptions {
  ts?: number;
  eventId?: string;
  organizationId?: string;
  eventType?: string;
  /** sign with this key while naming `key.kid` */
  signWith?: SigningKey;
}

let eventCounter = 0;
function deliver(key: SigningKey, body: string | Buffer, o: DeliverOptions = {}): Delivery {
  const rawBody = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  const ts = String(o.ts ?? T0);
  const eventId = o.eventId ?? `evt-${++eventCounter}`;
  const message = Buffer.concat([Buffer.from(`v1.ed25519.${key.kid}.${ts}.${eventId}.`, "utf8"), rawBody]);
  const signature = sign(null, message, (o.signWith ?? key).privateKey).toString("hex");
  const headers: Record<string, string> = {
    "X-Service-Event-Id": eventId,
    "X-Service-Signature-Key-Id": key.kid,
    "X-Service-Signature-Algorithm": "ed25519",
    "X-Service-Signature-Version": "v1",
    "X-Service-Signature": signature,
    "X-Service-Timestamp": ts,
    "X-Service-Organization-Id": o.organizationId ?? "org-1",
    "X-Service-Event-Type": o.eventType ?? "ACTIVITY_UPDATES",
  };
  return { headers, rawBody };
}

function withHeaders(d: Delivery, changes: Record<string, string | undefined>): Delivery {
  const headers = { ...d.headers };
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined) delete headers[k];
    else headers[k] = v;
  }
  return { headers, rawBody: d.rawBody };
}

const BODY = '{"id":"act-1","organizationId":"org-1","status":"ACTIVITY_STATUS_COMPLETED","intent":{"note":"café ✓"},"amount":1.5}';

// ---------------------------------------------------------------------------------------------
// A real JWKS server.

interface JwksServer {
  url: string;
  keys: Jwk[];
  cacheControl: string | null;
  age: string | null;
  mode: "ok" | "http500" | "badjson" | "nokeys" | "hang";
  delayMs: number;
  hits: number;
  close(): Promise<void>;
}

const servers: Array<{ close(): Promise<void> }> = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function startJwks(keys: Jwk[], cacheControl: string | null = "public, max-age=300"): Promise<JwksServer> {
  const state: Omit<JwksServer, "url" | "close"> = { keys, cacheControl, age: null, mode: "ok", delayMs: 0, hits: 0 };
  const server = http.createServer((req, res) => {
    state.hits++;
    if (req.url !== "/public/v1/discovery/webhooks/jwks" || req.method !== "GET") {
      res.writeHead(404).end();
      return;
    }
    if (state.mode === "hang") return;
    const respond = () => {
      if (state.mode === "http500") {
        res.writeHead(500, { "content-type": "application/json" }).end('{"error":"boom"}');
        return;
      }
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (state.cacheControl !== null) headers["cache-control"] = state.cacheControl;
      if (state.age !== null) headers["age"] = state.age;
      const body = state.mode === "badjson" ? '{"keys": [' : state.mode === "nokeys" ? '{"data":[]}' : JSON.stringify({ keys: state.keys });
      res.writeHead(200, headers).end(body);
    };
    if (state.delayMs > 0) setTimeout(respond, state.delayMs);
    else respond();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  servers.push({ close });
  return Object.assign(state, { url: `http://127.0.0.1:${port}/public/v1/discovery/webhooks/jwks`, close });
}

/** A URL nothing listens on. */
async function deadUrl(): Promise<string> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return `http://127.0.0.1:${port}/public/v1/discovery/webhooks/jwks`;
}

interface Clock {
  t: number;
}
function verifierFor(url: string, clock: Clock, extra: Partial<CreateWebhookVerifierOptions> = {}): WebhookVerifier {
  return createWebhookVerifier({ jwksUrl: url, now: () => clock.t, ...extra });
}

function expectOk(r: VerifyResult, context = ""): VerifySuccess {
  if (!r.ok) assert.fail(`${context}${context ? ": " : ""}expected ok, got ${r.reason}: ${r.message}`);
  return r;
}

function expectFail(r: VerifyResult, reason: WebhookFailureReason, messageIncludes?: string): void {
  if (r.ok) assert.fail(`expected ${reason}, got ok`);
  assert.equal(r.reason, reason, r.message);
  assert.ok(typeof r.message === "string" && r.message.length > 0);
  assert.ok(WEBHOOK_FAILURE_REASONS.includes(r.reason));
  if (messageIncludes !== undefined) assert.ok(r.message.includes(messageIncludes), r.message);
}

// ---------------------------------------------------------------------------------------------
// A second, independent verifier: spec rules with node:crypto only (SPKI DER import, not JWK).

const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

function independentVerify(headers: Record<string, string>, body: Buffer, jwks: { keys: Jwk[] }, nowMs: number): boolean {
  const get = (name: string): string | undefined => {
    const hit = Object.entries(headers).filter(([k]) => k.toLowerCase() === name.toLowerCase());
    return hit.length === 1 && hit[0]![1] !== "" ? hit[0]![1] : undefined;
  };
  const [eventId, kid, alg, version, sig, ts] = [
    "x-service-event-id",
    "x-service-signature-key-id",
    "x-service-signature-algorithm",
    "x-service-signature-version",
    "x-service-signature",
    "x-service-timestamp",
  ].map(get);
  if (!eventId || !kid || !alg || !version || !sig || !ts) return false;
  if (version !== "v1" || alg !== "ed25519") return false;
  if (!/^[0-9]+$/.test(ts) || !Number.isSafeInteger(Number(ts))) return false;
  if (Math.abs(nowMs - Number(ts)) > WINDOW) return false;
  const matches = jwks.keys.filter((k) => k.kid === kid);
  if (matches.length !== 1) return false;
  const jwk = matches[0]!;
  if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || typeof jwk.x !== "string") return false;
  const raw = Buffer.from(jwk.x, "base64url");
  if (raw.length !== 32) return false;
  if (!/^[0-9a-fA-F]{128}$/.test(sig)) return false;
  const pub = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: "der", type: "spki" });
  const message = Buffer.concat([Buffer.from(`v1.ed25519.${kid}.${ts}.${eventId}.`, "utf8"), body]);
  return verify(null, message, pub, Buffer.from(sig, "hex"));
}

// =============================================================================================

describe("webhook verification: headers, body and signature (sync core)", () => {
  const k1 = newKey("whk-1");
  const k2 = newKey("whk-2");
  const keys = new Map<string, KeyObject | string>([
    [k1.kid, k1.publicKey],
    [k2.kid, k2.x],
  ]);
  const check = (d: Delivery, nowMs = T0, maxTimestampAgeMs?: number) =>
    verifyWebhookSignature({
      headers: d.headers,
      rawBody: d.rawBody,
      publicKeys: keys,
      nowMs,
      ...(maxTimestampAgeMs === undefined ? {} : { maxTimestampAgeMs }),
    });

  it("exports the header names and reasons of docs/webhooks.md §2.2 and §4 as written", () => {
    assert.deepEqual(
      [EVENT_ID_HEADER, SIGNATURE_KEY_ID_HEADER, SIGNATURE_ALGORITHM_HEADER, SIGNATURE_VERSION_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER],
      [
        "X-Service-Event-Id",
        "X-Service-Signature-Key-Id",
        "X-Service-Signature-Algorithm",
        "X-Service-Signature-Version",
        "X-Service-Signature",
        "X-Service-Timestamp",
      ],
    );
    assert.deepEqual(
      [...SIGNED_HEADERS].sort(),
      [
        EVENT_ID_HEADER,
        SIGNATURE_KEY_ID_HEADER,
        SIGNATURE_ALGORITHM_HEADER,
        SIGNATURE_VERSION_HEADER,
        SIGNATURE_HEADER,
        TIMESTAMP_HEADER,
      ].sort(),
    );
    assert.equal(ORGANIZATION_ID_HEADER, "X-Service-Organization-Id");
    assert.equal(EVENT_TYPE_HEADER, "X-Service-Event-Type");
    assert.equal(WEBHOOK_HEADERS.signature, SIGNATURE_HEADER);
    assert.deepEqual([...WEBHOOK_FAILURE_REASONS].sort(), [
      "bad_header",
      "bad_key",
      "bad_signature",
      "bad_signature_encoding",
      "jwks_unavailable",
      "missing_header",
      "missing_key",
      "stale_timestamp",
      "unsupported_algorithm",
      "unsupported_version",
    ]);
  });

  it("builds the signed message byte for byte", () => {
    const body = Buffer.from([0x7b, 0x00, 0xff, 0x7d]);
    const m = webhookSignedMessage("whk-1", 1700000000123, "evt_1", body);
    assert.deepEqual(m, Buffer.concat([Buffer.from("v1.ed25519.whk-1.1700000000123.evt_1.", "ascii"), body]));
    assert.deepEqual(webhookSignedMessage("k", "42", "e", "é"), Buffer.from("v1.ed25519.k.42.e.\xc3\xa9", "latin1"));
    assert.throws(() => webhookSignedMessage("k", 1.5, "e", ""), TypeError);
    assert.throws(() => webhookSignedMessage("k", 1, "e.x", ""), TypeError);
    assert.throws(() => webhookSignedMessage("k y", 1, "e", ""), TypeError);
  });

  it("accepts a valid delivery and reports its ids (unsigned extras included only when present)", () => {
    const d = deliver(k1, BODY, { organizationId: "org-7", eventType: "ACTIVITY_UPDATES" });
    const r = expectOk(check(d));
    assert.deepEqual(r, {
      ok: true,
      eventId: d.headers[EVENT_ID_HEADER],
      keyId: "whk-1",
      timestampMs: T0,
      organizationId: "org-7",
      eventType: "ACTIVITY_UPDATES",
    });
    const bare = expectOk(check(withHeaders(d, { [ORGANIZATION_ID_HEADER]: undefined, [EVENT_TYPE_HEADER]: undefined })));
    assert.deepEqual(Object.keys(bare).sort(), ["eventId", "keyId", "ok", "timestampMs"]);
    // a key given as base64url x
    expectOk(check(deliver(k2, BODY)));
  });

  it("looks headers up case-insensitively: node's lowercase req.headers, Headers, arrays of one", () => {
    const d = deliver(k1, BODY);
    const lower = Object.fromEntries(Object.entries(d.headers).map(([k, v]) => [k.toLowerCase(), v]));
    expectOk(verifyWebhookSignature({ headers: lower, rawBody: d.rawBody, publicKeys: keys, nowMs: T0 }));
    const upper = Object.fromEntries(Object.entries(d.headers).map(([k, v]) => [k.toUpperCase(), v]));
    expectOk(verifyWebhookSignature({ headers: upper, rawBody: d.rawBody, publicKeys: keys, nowMs: T0 }));
    expectOk(verifyWebhookSignature({ headers: new Headers(d.headers), rawBody: d.rawBody, publicKeys: keys, nowMs: T0 }));
    const arrays: Record<string, string | string[] | undefined> = Object.fromEntries(Object.entries(d.headers).map(([k, v]) => [k, [v]]));
    arrays["x-unrelated"] = undefined;
    expectOk(verifyWebhookSignature({ headers: arrays, rawBody: d.rawBody, publicKeys: keys, nowMs: T0 }));
  });

  it("uses the raw body bytes exactly; a string body is taken as UTF-8", () => {
    const d = deliver(k1, BODY);
    expectOk(check({ headers: d.headers, rawBody: d.rawBody }));
    expectOk(verifyWebhookSignature({ headers: d.headers, rawBody: BODY, publicKeys: keys, nowMs: T0 }));
    expectOk(verifyWebhookSignature({ headers: d.headers, rawBody: new Uint8Array(d.rawBody), publicKeys: keys, nowMs: T0 }));
    // non-UTF-8 bytes are fine as long as they are the bytes that were signed
    const bin = Buffer.from([0xff, 0xfe, 0x00, 0x80]);
    expectOk(check(deliver(k1, bin)));
    // an empty body is a body too
    expectOk(check(deliver(k1, "")));
  });

  it("re-serialized JSON (same object, other whitespace or key order) → bad_signature", () => {
    const d = deliver(k1, BODY);
    const obj = JSON.parse(BODY) as Record<string, unknown>;
    const variants = [
      JSON.stringify(obj, null, 2),
      JSON.stringify(obj) + "\n",
      JSON.stringify(Object.fromEntries(Object.entries(obj).reverse())),
      JSON.stringify(obj).replace("café", "caf\\u00e9"),
    ];
    for (const v of variants) {
      assert.deepEqual(JSON.parse(v), obj);
      expectFail(check({ headers: d.headers, rawBody: Buffer.from(v) }), "bad_signature");
    }
    // one flipped bit anywhere in the body
    const flipped = Buffer.from(d.rawBody);
    flipped[10]! ^= 0x01;
    expectFail(check({ headers: d.headers, rawBody: flipped }), "bad_signature");
  });

  it("wrong key, tampered timestamp, event id or key id → bad_signature", () => {
    const d = deliver(k1, BODY, { ts: T0 });
    const stranger = newKey("whk-1");
    expectFail(check(deliver(k1, BODY, { signWith: stranger })), "bad_signature");
    expectFail(check(withHeaders(d, { [TIMESTAMP_HEADER]: String(T0 + 1) })), "bad_signature");
    expectFail(check(withHeaders(d, { [TIMESTAMP_HEADER]: "0" + String(T0) })), "bad_signature");
    expectFail(check(withHeaders(d, { [EVENT_ID_HEADER]: "evt-other" })), "bad_signature");
    expectFail(check(withHeaders(d, { [SIGNATURE_KEY_ID_HEADER]: k2.kid })), "bad_signature");
    // a signature over the body alone (no prefix) is not accepted
    const bodyOnly = sign(null, d.rawBody, k1.privateKey).toString("hex");
    expectFail(check(withHeaders(d, { [SIGNATURE_HEADER]: bodyOnly })), "bad_signature");
    // upper-case hex is the same signature
    expectOk(check(withHeaders(d, { [SIGNATURE_HEADER]: d.headers[SIGNATURE_HEADER]!.toUpperCase() })));
  });

  it("stale and future timestamps → stale_timestamp; the window is inclusive", () => {
    expectFail(check(deliver(k1, BODY, { ts: T0 - WINDOW - 1 })), "stale_timestamp", "in the past");
    expectFail(check(deliver(k1, BODY, { ts: T0 + WINDOW + 1 })), "stale_timestamp", "in the future");
    expectFail(check(deliver(k1, BODY, { ts: 0 })), "stale_timestamp");
    expectOk(check(deliver(k1, BODY, { ts: T0 - WINDOW })));
    expectOk(check(deliver(k1, BODY, { ts: T0 + WINDOW })));
    expectFail(check(deliver(k1, BODY, { ts: T0 - 61_000 }), T0, 60_000), "stale_timestamp");
    expectOk(check(deliver(k1, BODY, { ts: T0 - 59_000 }), T0, 60_000));
  });

  it("every missing (or empty) signed header → missing_header naming it; unsigned ones are optional", () => {
    const d = deliver(k1, BODY);
    for (const name of SIGNED_HEADERS) {
      expectFail(check(withHeaders(d, { [name]: undefined })), "missing_header", name);
      expectFail(check(withHeaders(d, { [name]: "" })), "missing_header", name);
      const asArray: Record<string, string | string[]> = { ...d.headers, [name]: [] };
      expectFail(verifyWebhookSignature({ headers: asArray, rawBody: d.rawBody, publicKeys: keys, nowMs: T0 }), "missing_header", name);
    }
    expectFail(
      verifyWebhookSignature({ headers: {}, rawBody: d.rawBody, publicKeys: keys, nowMs: T0 }),
      "missing_header",
      SIGNED_HEADERS.join(", "),
    );
    expectFail(verifyWebhookSignature({ headers: new Headers(), rawBody: d.rawBody, publicKeys: keys, nowMs: T0 }), "missing_header");
  });

  it("signature of the wrong length or not hex → bad_signature_encoding", () => {
    const d = deliver(k1, BODY);
    const sig = d.headers[SIGNATURE_HEADER]!;
    for (const bad of [
      sig.slice(0, 126),
      sig + "00",
      sig.slice(0, 127),
      "zz" + sig.slice(2),
      "0x" + sig.slice(2),
      Buffer.from(sig, "hex").toString("base64"),
      " " + sig.slice(1),
      sig.slice(0, 64),
    ]) {
      expectFail(check(withHeaders(d, { [SIGNATURE_HEADER]: bad })), "bad_signature_encoding");
    }
  });

  it("malformed header values → bad_header; well-formed but unknown version/algorithm → unsupported_*", () => {
    const d = deliver(k1, BODY);
    for (const ts of ["abc", "-5", "1.5", "1e12", " 1760000000000", "12345678901234567890", "0x10"]) {
      expectFail(check(withHeaders(d, { [TIMESTAMP_HEADER]: ts })), "bad_header", TIMESTAMP_HEADER);
    }
    for (const id of ["evt.1", "evt 1", "é", "x".repeat(257)]) {
      expectFail(check(withHeaders(d, { [EVENT_ID_HEADER]: id })), "bad_header", EVENT_ID_HEADER);
    }
    for (const kid of ["whk 1", "whk\t1", "x".repeat(257)]) {
      expectFail(check(withHeaders(d, { [SIGNATURE_KEY_ID_HEADER]: kid })), "bad_header", SIGNATURE_KEY_ID_HEADER);
    }
    expectFail(check(withHeaders(d, { [SIGNATURE_VERSION_HEADER]: "v1.0" })), "bad_header", SIGNATURE_VERSION_HEADER);
    expectFail(check(withHeaders(d, { [SIGNATURE_VERSION_HEADER]: "v1 " })), "bad_header", SIGNATURE_VERSION_HEADER);
    expectFail(check(withHeaders(d, { [SIGNATURE_VERSION_HEADER]: "v2" })), "unsupported_version");
    expectFail(check(withHeaders(d, { [SIGNATURE_VERSION_HEADER]: "V1" })), "unsupported_version");
    expectFail(check(withHeaders(d, { [SIGNATURE_ALGORITHM_HEADER]: "ed 25519" })), "bad_header", SIGNATURE_ALGORITHM_HEADER);
    expectFail(check(withHeaders(d, { [SIGNATURE_ALGORITHM_HEADER]: "ED25519" })), "unsupported_algorithm");
    expectFail(check(withHeaders(d, { [SIGNATURE_ALGORITHM_HEADER]: "ecdsa-p256" })), "unsupported_algorithm");
    // the same header twice (two spellings, or two values) is ambiguous
    expectFail(check(withHeaders(d, { "x-service-timestamp": d.headers[TIMESTAMP_HEADER]! })), "bad_header");
    const twice: Record<string, string | string[]> = {
      ...d.headers,
      [SIGNATURE_HEADER]: [d.headers[SIGNATURE_HEADER]!, d.headers[SIGNATURE_HEADER]!],
    };
    expectFail(verifyWebhookSignature({ headers: twice, rawBody: d.rawBody, publicKeys: keys, nowMs: T0 }), "bad_header");
    // node/fetch join repeated headers with ", ": that never passes either
    const joined = new Headers(d.headers);
    joined.append(TIMESTAMP_HEADER, String(T0));
    expectFail(verifyWebhookSignature({ headers: joined, rawBody: d.rawBody, publicKeys: keys, nowMs: T0 }), "bad_header");
  });

  it("unknown kid → missing_key; unusable keys → bad_key", () => {
    expectFail(check(deliver(newKey("whk-unknown"), BODY)), "missing_key", "whk-unknown");
    const k = newKey("k");
    const x31 = Buffer.from(k.x, "base64url").subarray(0, 31).toString("base64url");
    const priv = createPrivateKey(k.privateKey.export({ format: "pem", type: "pkcs8" }));
    const x25519 = generateKeyPairSync("x25519").publicKey;
    for (const bad of [x31, k.x + "AA", k.x + "=", "not base64!", Buffer.alloc(32).toString("base64"), priv, x25519]) {
      const r = verifyWebhookSignature({ ...deliver(k, BODY), publicKeys: new Map([["k", bad]]), nowMs: T0 });
      expectFail(r, "bad_key");
    }
    const r31 = verifyWebhookSignature({ ...deliver(k, BODY), publicKeys: new Map([["k", x31]]), nowMs: T0 });
    expectFail(r31, "bad_key", "31 bytes");
  });

  it("rejects programming errors by throwing, not by a result", () => {
    const d = deliver(k1, BODY);
    assert.throws(() => verifyWebhookSignature({ ...d, publicKeys: keys, nowMs: Number.NaN }), TypeError);
    assert.throws(() => verifyWebhookSignature({ ...d, publicKeys: keys, maxTimestampAgeMs: -1 }), TypeError);
    assert.throws(() => verifyWebhookSignature({ ...d, rawBody: 42 as unknown as string, publicKeys: keys }), TypeError);
    assert.throws(() => verifyWebhookSignature({ ...d, publicKeys: {} as unknown as Map<string, string> }), TypeError);
    assert.throws(() => createWebhookVerifier({ jwksUrl: "not a url" }), TypeError);
    assert.throws(() => createWebhookVerifier({ jwksUrl: "ftp://x/jwks" }), TypeError);
  });
});

describe("webhook verifier: key set fetching and caching (real JWKS server, injected clock)", () => {
  it("verifies against the served key set, fetching it once", async () => {
    const k1 = newKey("whk-1");
    const jwks = await startJwks([jwkOf(k1)]);
    const clock = { t: T0 };
    const v = verifierFor(jwks.url, clock);
    const d = deliver(k1, BODY, { eventType: "ACTIVITY_UPDATES", organizationId: "org-9" });
    const r = expectOk(await v.verify(d));
    assert.equal(r.eventType, "ACTIVITY_UPDATES");
    assert.equal(r.organizationId, "org-9");
    expectOk(await v.verify({ headers: new Headers(d.headers), rawBody: d.rawBody.toString("utf8") }));
    expectFail(await v.verify({ headers: d.headers, rawBody: JSON.stringify(JSON.parse(BODY), null, 1) }), "bad_signature");
    expectFail(await v.verify(deliver(k1, BODY, { ts: T0 - WINDOW - 1 })), "stale_timestamp");
    expectFail(await v.verify(withHeaders(d, { [SIGNATURE_HEADER]: "ab" })), "bad_signature_encoding");
    expectFail(await v.verify(withHeaders(d, { [TIMESTAMP_HEADER]: undefined })), "missing_header");
    assert.equal(jwks.hits, 1);
  });

  it("rejections that need no key never touch the key server", async () => {
    const k1 = newKey("whk-1");
    const jwks = await startJwks([jwkOf(k1)]);
    const v = verifierFor(jwks.url, { t: T0 });
    const unknown = newKey("whk-nope");
    expectFail(await v.verify(deliver(unknown, BODY, { ts: T0 - 10 * WINDOW })), "stale_timestamp");
    expectFail(await v.verify(withHeaders(deliver(unknown, BODY), { [SIGNATURE_VERSION_HEADER]: "v9" })), "unsupported_version");
    expectFail(await v.verify(withHeaders(deliver(unknown, BODY), { [EVENT_ID_HEADER]: undefined })), "missing_header");
    assert.equal(jwks.hits, 0);
  });

  it("published keys must be OKP/Ed25519 (v1, ed25519 when stated) with a 32-byte x → else bad_key", async () => {
    const good = newKey("good");
    const cases: Array<[string, Jwk]> = [
      ["x31", jwkOf(newKey("x31"), { x: Buffer.alloc(31, 7).toString("base64url") })],
      ["x33", jwkOf(newKey("x33"), { x: Buffer.alloc(33, 7).toString("base64url") })],
      ["nox", jwkOf(newKey("nox"), { x: undefined })],
      ["rsa", jwkOf(newKey("rsa"), { kty: "RSA" })],
      ["x25519", jwkOf(newKey("x25519"), { crv: "X25519" })],
      ["es256", jwkOf(newKey("es256"), { alg: "ES256" })],
      ["enc", jwkOf(newKey("enc"), { use: "enc" })],
      ["v2", jwkOf(newKey("v2"), { service_signature_version: "v2" })],
      ["p256", jwkOf(newKey("p256"), { service_signature_algorithm: "p256" })],
    ];
    const signers = new Map(cases.map(([kid]) => [kid, newKey(kid)]));
    const dup = newKey("dup");
    const jwks = await startJwks([
      jwkOf(good, { alg: undefined, use: undefined, service_signature_algorithm: undefined, service_signature_version: undefined }),
      ...cases.map(([, j]) => j),
      jwkOf(dup),
      jwkOf(newKey("dup")),
      { kty: "OKP" },
      "junk",
    ] as Jwk[]);
    const v = verifierFor(jwks.url, { t: T0 });
    expectOk(await v.verify(deliver(good, BODY)));
    for (const [kid] of cases) {
      expectFail(await v.verify(deliver(signers.get(kid)!, BODY)), "bad_key", kid);
    }
    expectFail(await v.verify(deliver(newKey("x31"), BODY)), "bad_key", "31 bytes");
    expectFail(await v.verify(deliver(dup, BODY)), "bad_key", "more than once");
    assert.equal(jwks.hits, 1, "a present-but-unusable key is not a reason to refetch");
  });

  it("unknown kid → exactly one refetch, then missing_key; further unknown kids are rate-limited", async () => {
    const k1 = newKey("whk-1");
    const jwks = await startJwks([jwkOf(k1)]);
    const clock = { t: T0 };
    const v = verifierFor(jwks.url, clock);
    expectOk(await v.verify(deliver(k1, BODY)));
    assert.equal(jwks.hits, 1);

    clock.t = T0 + 11_000;
    const ghost = newKey("whk-ghost");
    expectFail(await v.verify(deliver(ghost, BODY, { ts: clock.t })), "missing_key", "whk-ghost");
    assert.equal(jwks.hits, 2, "one refetch, then the answer");

    // a flood of unknown kids within the interval does not reach the server
    for (let i = 0; i < 25; i++) {
      clock.t += 100;
      expectFail(await v.verify(deliver(newKey(`flood-${i}`), BODY, { ts: clock.t })), "missing_key");
    }
    assert.equal(jwks.hits, 2);
    // known keys keep working meanwhile
    expectOk(await v.verify(deliver(k1, BODY, { ts: clock.t })));

    clock.t = T0 + 22_000;
    expectFail(await v.verify(deliver(ghost, BODY, { ts: clock.t })), "missing_key");
    assert.equal(jwks.hits, 3);
  });

  it("a key with an unknown kid on a cold verifier costs one fetch, not two", async () => {
    const jwks = await startJwks([jwkOf(newKey("whk-1"))]);
    const v = verifierFor(jwks.url, { t: T0 });
    expectFail(await v.verify(deliver(newKey("whk-ghost"), BODY)), "missing_key");
    assert.equal(jwks.hits, 1);
  });

  it("a rotated key added after the set was cached is found through the one refetch", async () => {
    const k1 = newKey("whk-1");
    const k2 = newKey("whk-2");
    const jwks = await startJwks([jwkOf(k1)], "public, max-age=3600");
    const clock = { t: T0 };
    const v = verifierFor(jwks.url, clock);
    expectOk(await v.verify(deliver(k1, BODY)));
    assert.equal(jwks.hits, 1);

    jwks.keys.push(jwkOf(k2));
    clock.t = T0 + 60_000; // well within max-age: only the unknown kid causes the fetch
    expectOk(await v.verify(deliver(k2, BODY, { ts: clock.t })));
    assert.equal(jwks.hits, 2);
    expectOk(await v.verify(deliver(k2, BODY, { ts: clock.t })));
    expectOk(await v.verify(deliver(k1, BODY, { ts: clock.t })));
    assert.equal(jwks.hits, 2, "the refetched set is cached");
  });

  it("a rotated key seen within the refetch interval is missing_key until the interval has passed (documented)", async () => {
    const k1 = newKey("whk-1");
    const k2 = newKey("whk-2");
    const jwks = await startJwks([jwkOf(k1)], "max-age=3600");
    const clock = { t: T0 };
    const v = verifierFor(jwks.url, clock);
    expectOk(await v.verify(deliver(k1, BODY)));
    jwks.keys.push(jwkOf(k2));
    clock.t = T0 + 5_000;
    expectFail(await v.verify(deliver(k2, BODY, { ts: clock.t })), "missing_key", "not refetched");
    assert.equal(jwks.hits, 1);
    clock.t = T0 + 10_000;
    expectOk(await v.verify(deliver(k2, BODY, { ts: clock.t })));
    assert.equal(jwks.hits, 2);
  });

  it("a key retired from the set is missing_key once the cached set has expired", async () => {
    const k1 = newKey("whk-1");
    const k2 = newKey("whk-2");
    const jwks = await startJwks([jwkOf(k1), jwkOf(k2)], "public, max-age=60");
    const clock = { t: T0 };
    const v = verifierFor(jwks.url, clock);
    expectOk(await v.verify(deliver(k1, BODY)));
    jwks.keys.splice(0, 1); // retire whk-1
    clock.t = T0 + 30_000;
    expectOk(await v.verify(deliver(k1, BODY, { ts: clock.t })));
    assert.equal(jwks.hits, 1, "still cached");
    clock.t = T0 + 61_000;
    expectFail(await v.verify(deliver(k1, BODY, { ts: clock.t })), "missing_key", "whk-1");
    assert.equal(jwks.hits, 2, "refreshed on expiry, and that fetch is the one lookup");
    expectOk(await v.verify(deliver(k2, BODY, { ts: clock.t })));
    assert.equal(jwks.hits, 2);
  });

  it("Cache-Control max-age is respected: no refetch within it, one after", async () => {
    const k1 = newKey("whk-1");
    const jwks = await startJwks([jwkOf(k1)], "public, max-age=120, must-revalidate");
    const clock = { t: T0 };
    const v = verifierFor(jwks.url, clock);
    for (const dt of [0, 1_000, 60_000, 119_999]) {
      clock.t = T0 + dt;
      expectOk(await v.verify(deliver(k1, BODY, { ts: clock.t })));
    }
    assert.equal(jwks.hits, 1);
    clock.t = T0 + 120_000;
    expectOk(await v.verify(deliver(k1, BODY, { ts: clock.t })));
    assert.equal(jwks.hits, 2);
    clock.t = T0 + 239_999;
    expectOk(await v.verify(deliver(k1, BODY, { ts: clock.t })));
    assert.equal(jwks.hits, 2);
    clock.t = T0 + 240_000;
    expectOk(await v.verify(deliver(k1, BODY, { ts: clock.t })));
    assert.equal(jwks.hits, 3);
  });

  it("Age is subtracted from max-age; no Cache-Control means 5 minutes; huge max-age is capped at 24 h", async () => {
    const k1 = newKey("whk-1");
    const jwks = await startJwks([jwkOf(k1)], "max-age=60");
    jwks.age = "50";
    const clock = { t: T0 };
    const v1 = verifierFor(jwks.url, clock);
    expectOk(await v1.verify(deliver(k1, BODY)));
    clock.t = T0 + 9_999;
    expectOk(await v1.verify(deliver(k1, BODY, { ts: clock.t })));
    assert.equal(jwks.hits, 1);
    clock.t = T0 + 10_000;
    expectOk(await v1.verify(deliver(k1, BODY, { ts: clock.t })));
    assert.equal(jwks.hits, 2);

    jwks.age = null;
    jwks.cacheControl = null;
    jwks.hits = 0;
    clock.t = T0;
    const v2 = verifierFor(jwks.url, clock);
    expectOk(await v2.verify(deliver(k1, BODY)));
    clock.t = T0 + 299_999;
    expectOk(await v2.verify(deliver(k1, BODY, { ts: clock.t })));
    assert.equal(jwks.hits, 1);
    clock.t = T0 + 300_000;
    expectOk(await v2.verify(deliver(k1, BODY, { ts: clock.t })));
    assert.equal(jwks.hits, 2);

    jwks.cacheControl = "max-age=31536000";
    jwks.hits = 0;
    clock.t = T0;
    const v3 = verifierFor(jwks.url, clock);
    expectOk(await v3.verify(deliver(k1, BODY)));
    clock.t = T0 + 86_399_999;
    expectOk(await v3.verify(deliver(k1, BODY, { ts: clock.t })));
    assert.equal(jwks.hits, 1);
    clock.t = T0 + 86_400_000;
    expectOk(await v3.verify(deliver(k1, BODY, { ts: clock.t })));
    assert.equal(jwks.hits, 2);
  });

  for (const directive of ["no-store", "no-cache", "max-age=0"]) {
    it(`Cache-Control ${directive}: fetched on every verify, but only once per verify`, async () => {
      const k1 = newKey("whk-1");
      const jwks = await startJwks([jwkOf(k1)], directive);
      const clock = { t: T0 };
      const v = verifierFor(jwks.url, clock);
      for (let i = 1; i <= 3; i++) {
        expectOk(await v.verify(deliver(k1, BODY)));
        assert.equal(jwks.hits, i);
      }
      expectFail(await v.verify(deliver(newKey("whk-ghost"), BODY)), "missing_key");
      assert.equal(jwks.hits, 4);
    });
  }

  it("one fetch per verify even with the refetch rate limit switched off", async () => {
    const jwks = await startJwks([jwkOf(newKey("whk-1"))], "no-store");
    const clock = { t: T0 };
    const v = verifierFor(jwks.url, clock, { minRefetchIntervalMs: 0 });
    expectFail(await v.verify(deliver(newKey("whk-ghost"), BODY)), "missing_key");
    assert.equal(jwks.hits, 1);
    jwks.cacheControl = "max-age=600";
    expectFail(await v.verify(deliver(newKey("whk-ghost"), BODY)), "missing_key");
    assert.equal(jwks.hits, 2);
    // cached now: an unknown kid gets its one refetch immediately
    expectFail(await v.verify(deliver(newKey("whk-ghost"), BODY)), "missing_key");
    assert.equal(jwks.hits, 3);
  });

  it("JWKS server down with no cache → jwks_unavailable", async () => {
    const clock = { t: T0 };
    const k1 = newKey("whk-1");
    const v = verifierFor(await deadUrl(), clock);
    expectFail(await v.verify(deliver(k1, BODY)), "jwks_unavailable", "failed");
  });

  for (const mode of ["http500", "badjson", "nokeys"] as const) {
    it(`JWKS answering ${mode} with no cache → jwks_unavailable; retried after the interval`, async () => {
      const k1 = newKey("whk-1");
      const jwks = await startJwks([jwkOf(k1)]);
      jwks.mode = mode;
      const clock = { t: T0 };
      const v = verifierFor(jwks.url, clock);
      expectFail(await v.verify(deliver(k1, BODY)), "jwks_unavailable");
      assert.equal(jwks.hits, 1);
      clock.t = T0 + 5_000;
      expectFail(await v.verify(deliver(k1, BODY, { ts: clock.t })), "jwks_unavailable");
      assert.equal(jwks.hits, 1, "a failed fetch is not retried within the interval");
      jwks.mode = "ok";
      clock.t = T0 + 10_000;
      expectOk(await v.verify(deliver(k1, BODY, { ts: clock.t })));
      assert.equal(jwks.hits, 2);
    });
  }

  it("a JWKS server that never answers times out → jwks_unavailable", async () => {
    const jwks = await startJwks([]);
    jwks.mode = "hang";
    const v = verifierFor(jwks.url, { t: T0 }, { fetchTimeoutMs: 150 });
    const started = Date.now();
    expectFail(await v.verify(deliver(newKey("k"), BODY)), "jwks_unavailable", "timed out");
    assert.ok(Date.now() - started < 5_000);
  });

  it("stale-if-error: keys stay usable for 1 h past expiry while refreshes fail, then jwks_unavailable", async () => {
    const k1 = newKey("whk-1");
    const jwks = await startJwks([jwkOf(k1)], "max-age=60");
    const clock = { t: T0 };
    const v = verifierFor(jwks.url, clock);
    expectOk(await v.verify(deliver(k1, BODY)));
    jwks.mode = "http500";

    clock.t = T0 + 61_000;
    expectOk(await v.verify(deliver(k1, BODY, { ts: clock.t })));
    assert.equal(jwks.hits, 2, "the refresh was attempted");
    // an unknown kid while the set is stale cannot be answered missing_key
    expectFail(await v.verify(deliver(newKey("whk-2"), BODY, { ts: clock.t })), "jwks_unavailable");
    assert.equal(jwks.hits, 2, "failed refresh is not retried within the interval");
    clock.t = T0 + 80_000; // the verify that retries the refresh (and fails) does not say missing_key either
    expectFail(await v.verify(deliver(newKey("whk-2"), BODY, { ts: clock.t })), "jwks_unavailable", "refreshing it failed");
    assert.equal(jwks.hits, 3);

    clock.t = T0 + 60_000 + 3_600_000 - 1;
    expectOk(await v.verify(deliver(k1, BODY, { ts: clock.t })));
    clock.t = T0 + 60_000 + 3_600_000;
    expectFail(await v.verify(deliver(k1, BODY, { ts: clock.t })), "jwks_unavailable");

    jwks.mode = "ok";
    clock.t += 10_000;
    expectOk(await v.verify(deliver(k1, BODY, { ts: clock.t })));
  });

  it("stale-if-error honours the response: stale-if-error=N, and none for no-store / must-revalidate", async () => {
    const k1 = newKey("whk-1");
    for (const [cc, staleMs] of [
      ["max-age=60, stale-if-error=30", 30_000],
      ["max-age=60, must-revalidate", 0],
      ["no-store", 0],
    ] as const) {
      const jwks = await startJwks([jwkOf(k1)], cc);
      const clock = { t: T0 };
      const v = verifierFor(jwks.url, clock);
      expectOk(await v.verify(deliver(k1, BODY)));
      jwks.mode = "http500";
      const expiry = cc === "no-store" ? T0 : T0 + 60_000;
      if (staleMs > 0) {
        clock.t = expiry + staleMs - 1;
        expectOk(await v.verify(deliver(k1, BODY, { ts: clock.t })), cc);
        clock.t += 10_001;
      } else {
        clock.t = expiry + 1;
      }
      expectFail(await v.verify(deliver(k1, BODY, { ts: clock.t })), "jwks_unavailable");
    }
  });

  it("concurrent verifies with an unknown kid coalesce into one fetch", async () => {
    const k1 = newKey("whk-1");
    const jwks = await startJwks([jwkOf(k1)], "max-age=600");
    jwks.delayMs = 50;
    const clock = { t: T0 };
    const v = verifierFor(jwks.url, clock);

    // cold start: 20 concurrent deliveries, one fetch
    const cold = await Promise.all(Array.from({ length: 20 }, () => v.verify(deliver(k1, BODY))));
    for (const r of cold) expectOk(r);
    assert.equal(jwks.hits, 1);

    // warm set, unknown kids from many concurrent deliveries: one refetch for all of them
    clock.t = T0 + 11_000;
    const kids = Array.from({ length: 20 }, (_, i) => newKey(`ghost-${i % 3}`));
    const results = await Promise.all(kids.map((k) => v.verify(deliver(k, BODY, { ts: clock.t }))));
    for (const r of results) expectFail(r, "missing_key");
    assert.equal(jwks.hits, 2);

    // a rotated key arriving on many deliveries at once: one refetch, all accepted
    const k2 = newKey("whk-2");
    jwks.keys.push(jwkOf(k2));
    clock.t = T0 + 22_000;
    const rotated = await Promise.all(Array.from({ length: 20 }, () => v.verify(deliver(k2, BODY, { ts: clock.t }))));
    for (const r of rotated) expectOk(r);
    assert.equal(jwks.hits, 3);
  });

  it("uses an injected fetch", async () => {
    const k1 = newKey("whk-1");
    const calls: string[] = [];
    const v = createWebhookVerifier({
      jwksUrl: new URL("https://sigil.invalid/public/v1/discovery/webhooks/jwks"),
      now: () => T0,
      fetch: async (url) => {
        calls.push(url);
        return new Response(JSON.stringify({ keys: [jwkOf(k1)] }), { headers: { "cache-control": "max-age=60" } });
      },
    });
    expectOk(await v.verify(deliver(k1, BODY)));
    expectOk(await v.verify(deliver(k1, BODY)));
    assert.deepEqual(calls, ["https://sigil.invalid/public/v1/discovery/webhooks/jwks"]);
    const thrower = createWebhookVerifier({
      jwksUrl: "https://sigil.invalid/jwks",
      now: () => T0,
      fetch: () => {
        throw new Error("sync boom");
      },
    });
    expectFail(await thrower.verify(deliver(k1, BODY)), "jwks_unavailable", "sync boom");
  });
});

describe("webhook verification agrees with an independent node:crypto verifier", () => {
  const k1 = newKey("whk-1");
  const k2 = newKey("whk-2");
  const k31 = newKey("whk-31");
  const jwksKeys = [jwkOf(k1), jwkOf(k2), jwkOf(k31, { x: Buffer.alloc(31, 1).toString("base64url") })];
  const publicKeys = new Map<string, string>(jwksKeys.map((j) => [String(j.kid), String(j.x)]));

  function cases(): Array<[string, Delivery]> {
    const d = deliver(k1, BODY);
    const obj = JSON.parse(BODY) as object;
    return [
      ["valid", d],
      ["valid k2", deliver(k2, "[]")],
      ["valid binary body", deliver(k1, Buffer.from([0, 1, 2, 0xff]))],
      ["valid empty body", deliver(k1, "")],
      ["valid at window edge", deliver(k1, BODY, { ts: T0 - WINDOW })],
      ["re-serialized", { headers: d.headers, rawBody: Buffer.from(JSON.stringify(obj, null, 2)) }],
      ["wrong key", deliver(k1, BODY, { signWith: k2 })],
      ["tampered ts", withHeaders(d, { [TIMESTAMP_HEADER]: String(T0 - 1) })],
      ["tampered event id", withHeaders(d, { [EVENT_ID_HEADER]: "evt-x" })],
      ["swapped kid", withHeaders(d, { [SIGNATURE_KEY_ID_HEADER]: "whk-2" })],
      ["unknown kid", deliver(newKey("whk-9"), BODY)],
      ["31-byte key", deliver(k31, BODY)],
      ["stale", deliver(k1, BODY, { ts: T0 - WINDOW - 1 })],
      ["future", deliver(k1, BODY, { ts: T0 + WINDOW + 1 })],
      ["short sig", withHeaders(d, { [SIGNATURE_HEADER]: d.headers[SIGNATURE_HEADER]!.slice(2) })],
      ["non-hex sig", withHeaders(d, { [SIGNATURE_HEADER]: "g" + d.headers[SIGNATURE_HEADER]!.slice(1) })],
      ["version v2", withHeaders(d, { [SIGNATURE_VERSION_HEADER]: "v2" })],
      ["algorithm", withHeaders(d, { [SIGNATURE_ALGORITHM_HEADER]: "Ed25519" })],
      ["bad ts", withHeaders(d, { [TIMESTAMP_HEADER]: "17e11" })],
      ...SIGNED_HEADERS.map((h): [string, Delivery] => [`no ${h}`, withHeaders(d, { [h]: undefined })]),
    ];
  }

  it("on a fixed set of valid and invalid deliveries (sync core and fetching verifier)", async () => {
    const jwks = await startJwks(jwksKeys);
    const v = verifierFor(jwks.url, { t: T0 });
    let valid = 0;
    for (const [name, d] of cases()) {
      const expected = independentVerify(d.headers, d.rawBody, { keys: jwksKeys }, T0);
      if (expected) valid++;
      assert.equal(verifyWebhookSignature({ ...d, publicKeys, nowMs: T0 }).ok, expected, name);
      assert.equal((await v.verify(d)).ok, expected, name);
    }
    assert.equal(valid, 5);
  });

  it("on random bodies, ids and single-bit corruptions (property)", () => {
    const idArb = fc.stringMatching(/^[A-Za-z0-9_:-]{1,40}$/);
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 256 }),
        idArb,
        fc.integer({ min: -WINDOW - 2, max: WINDOW + 2 }),
        fc.nat(),
        fc.constantFrom("none", "body", "signature", "timestamp", "eventId"),
        (body, eventId, skew, pos, corrupt) => {
          const d = deliver(k1, Buffer.from(body), { eventId, ts: T0 + skew });
          let headers = d.headers;
          let rawBody = d.rawBody;
          if (corrupt === "body" && rawBody.length > 0) {
            rawBody = Buffer.from(rawBody);
            rawBody[pos % rawBody.length]! ^= 1 << (pos % 8);
          } else if (corrupt === "signature") {
            const sig = Buffer.from(headers[SIGNATURE_HEADER]!, "hex");
            sig[pos % 64]! ^= 1 << (pos % 8);
            headers = { ...headers, [SIGNATURE_HEADER]: sig.toString("hex") };
          } else if (corrupt === "timestamp") {
            headers = { ...headers, [TIMESTAMP_HEADER]: String(T0 + skew + 1 + (pos % 5)) };
          } else if (corrupt === "eventId") {
            headers = { ...headers, [EVENT_ID_HEADER]: eventId + "x" };
          }
          const expected = independentVerify(headers, rawBody, { keys: jwksKeys }, T0);
          const actual = verifyWebhookSignature({ headers, rawBody, publicKeys, nowMs: T0 });
          assert.equal(actual.ok, expected);
          const untouched = corrupt === "none" || (corrupt === "body" && body.length === 0);
          assert.equal(expected, untouched && Math.abs(skew) <= WINDOW);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("examples/webhook-receiver.mjs", () => {
  it("answers 200 to a good delivery and 401 with the reason to a bad one", { timeout: 30_000 }, async () => {
    const k1 = newKey("whk-1");
    const jwks = await startJwks([jwkOf(k1)]);
    const child = spawn(process.execPath, [path.join(ROOT, "examples/webhook-receiver.mjs")], {
      cwd: ROOT,
      env: { ...process.env, SIGIL_JWKS_URL: jwks.url, PORT: "0", HOST: "127.0.0.1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const lines: Array<Record<string, unknown>> = [];
    const waiters: Array<() => void> = [];
    createInterface({ input: child.stdout }).on("line", (line) => {
      lines.push(JSON.parse(line) as Record<string, unknown>);
      for (const w of waiters.splice(0)) w();
    });
    const waitFor = async (pred: (l: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> => {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const hit = lines.find(pred);
        if (hit) return hit;
        if (Date.now() > deadline || child.exitCode !== null) assert.fail(`receiver did not log the expected line; stderr: ${stderr}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
    };
    try {
      const listening = await waitFor((l) => l.msg === "listening");
      const base = `http://127.0.0.1:${String(listening.port)}/webhooks`;
      const post = (d: Delivery) =>
        fetch(base, { method: "POST", headers: { ...d.headers, "content-type": "application/json" }, body: new Uint8Array(d.rawBody) });

      const good = deliver(k1, BODY, { ts: Date.now(), eventType: "ACTIVITY_UPDATES", eventId: "evt-example-good" });
      const r1 = await post(good);
      assert.equal(r1.status, 200);
      assert.deepEqual(await r1.json(), { ok: true });
      const accepted = await waitFor((l) => l.msg === "webhook accepted");
      assert.equal(accepted.eventId, "evt-example-good");
      assert.equal(accepted.eventType, "ACTIVITY_UPDATES");

      const bad = { headers: good.headers, rawBody: Buffer.from(JSON.stringify(JSON.parse(BODY), null, 2)) };
      const r2 = await post(bad);
      assert.equal(r2.status, 401);
      const body2 = (await r2.json()) as { error: string; message: string };
      assert.equal(body2.error, "bad_signature");
      assert.ok(body2.message.length > 0);

      const r3 = await post(withHeaders(deliver(k1, BODY, { ts: Date.now() - 10 * WINDOW }), {}));
      assert.equal(r3.status, 401);
      assert.equal(((await r3.json()) as { error: string }).error, "stale_timestamp");

      const r4 = await fetch(base);
      assert.equal(r4.status, 405);
      await r4.arrayBuffer();
      assert.equal(jwks.hits, 1);
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
  });
});
