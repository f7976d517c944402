// The published webhook test vector (lib/webhooks/test-vectors/webhook-signature-v1.json, exported as
// @sigil/webhooks/test-vectors/webhook-signature-v1.json) is what its generator writes, the
// service's own signing code produces exactly its signature and headers, and the receiver
// library accepts its valid delivery and refuses each invalid one for the stated reason.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createPrivateKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createWebhookVerifier, verifyWebhookSignature, webhookSignedMessage, type FetchLike } from "@sigil/webhooks";
import { signDelivery, signedMessage, type SigningKey } from "../../src/webhooks/signing-keys.ts";
import { deliveryHeaders } from "../../src/webhooks/deliver.ts";
import { VECTOR_FILE, webhookSignatureVectorText, type WebhookSignatureVector } from "../../scripts/webhook-test-vectors.ts";

// Through the package's "exports", as a receiver would find it.
const vectorPath = fileURLToPath(import.meta.resolve("@sigil/webhooks/test-vectors/webhook-signature-v1.json"));
const text = readFileSync(vectorPath, "utf8");
const vector = JSON.parse(text) as WebhookSignatureVector;

/** RFC 8032 §7.1 TEST 1: the public key of the seed the vector claims to use. */
const RFC8032_TEST1_PUBLIC_HEX = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";

const serverKey = (): SigningKey => ({ id: vector.key_id, privateKey: createPrivateKey({ key: vector.private_key.jwk, format: "jwk" }) });
const lowerKeys = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));

describe("webhook signature test vector v1", () => {
  it("is exactly what scripts/webhook-test-vectors.ts writes (run `npm run vectors:webhooks` after changing it)", () => {
    assert.equal(vectorPath, VECTOR_FILE);
    assert.equal(text, webhookSignatureVectorText());
  });

  it("uses the RFC 8032 TEST 1 key, and its fields agree with each other", () => {
    assert.equal(vector.public_key.hex, RFC8032_TEST1_PUBLIC_HEX);
    assert.equal(Buffer.from(vector.public_key.jwk.x, "base64url").toString("hex"), RFC8032_TEST1_PUBLIC_HEX);
    assert.equal(Buffer.from(vector.private_key.jwk.d!, "base64url").toString("hex"), vector.private_key.seed_hex);
    assert.equal(vector.signing_input, `v1.ed25519.${vector.key_id}.${vector.timestamp_ms}.${vector.event_id}.${vector.raw_body}`);
    assert.equal(Buffer.from(vector.signing_input_hex, "hex").toString("utf8"), vector.signing_input);
    assert.equal(Buffer.from(vector.raw_body_hex, "hex").toString("utf8"), vector.raw_body);
    // The body is not ASCII, so bytes and characters differ: the vector pins down which is signed.
    assert.notEqual(Buffer.byteLength(vector.raw_body, "utf8"), vector.raw_body.length);
  });

  it("the service's signing code builds the same signing input, signature and headers", () => {
    const body = Buffer.from(vector.raw_body, "utf8");
    assert.equal(signedMessage(vector.key_id, vector.timestamp_ms, vector.event_id, body).toString("hex"), vector.signing_input_hex);
    assert.equal(signDelivery(serverKey(), vector.timestamp_ms, vector.event_id, body), vector.signature_hex);
    const headers = deliveryHeaders({
      eventId: vector.event_id,
      eventType: vector.valid.headers["X-Service-Event-Type"],
      organizationId: vector.valid.headers["X-Service-Organization-Id"],
      body,
      key: serverKey(),
      now: Number(vector.timestamp_ms),
    });
    const { "content-type": contentType, ...signedAndInformational } = headers;
    assert.equal(contentType, "application/json");
    assert.deepEqual(signedAndInformational, lowerKeys(vector.valid.headers));
  });

  it("the receiver library builds the same signing input and accepts the valid delivery", async () => {
    assert.equal(
      webhookSignedMessage(vector.key_id, vector.timestamp_ms, vector.event_id, vector.raw_body).toString("hex"),
      vector.signing_input_hex,
    );
    const expected = {
      ok: true,
      eventId: vector.event_id,
      keyId: vector.key_id,
      timestampMs: Number(vector.timestamp_ms),
      organizationId: "org_01",
      eventType: "ACTIVITY_UPDATES",
    };
    const sync = verifyWebhookSignature({
      headers: vector.valid.headers,
      rawBody: Buffer.from(vector.raw_body, "utf8"),
      publicKeys: new Map([[vector.key_id, vector.public_key.jwk.x]]),
      nowMs: vector.valid.verify_at_ms,
    });
    assert.deepEqual(sync, expected);

    // And through the JWKS path, served the vector's key set.
    const fetch: FetchLike = async () => ({
      status: 200,
      headers: new Headers({ "cache-control": "max-age=300" }),
      arrayBuffer: async () => new TextEncoder().encode(JSON.stringify(vector.jwks)).buffer as ArrayBuffer,
    });
    const verifier = createWebhookVerifier({ jwksUrl: "https://sigil.test/jwks", fetch, now: () => vector.valid.verify_at_ms });
    assert.deepEqual(await verifier.verify({ headers: vector.valid.headers, rawBody: vector.raw_body }), expected);
  });

  it("the receiver library refuses every invalid delivery for the reason the vector states", () => {
    assert.ok(vector.invalid.length >= 5);
    for (const c of vector.invalid) {
      const r = verifyWebhookSignature({
        headers: c.headers,
        rawBody: Buffer.from(c.raw_body, "utf8"),
        publicKeys: new Map([[vector.key_id, vector.public_key.jwk.x]]),
        nowMs: c.verify_at_ms,
        maxTimestampAgeMs: vector.max_timestamp_age_ms,
      });
      assert.equal(r.ok ? "ok" : r.reason, c.expected_reason, c.description);
    }
  });
});
