// Writes lib/webhooks/test-vectors/webhook-signature-v1.json: one fixed Ed25519 key and one signed
// delivery (plus deliveries that must be refused), for receivers in any language to test their
// verification against. Deterministic: the key is RFC 8032's first test key and Ed25519
// signatures carry no randomness, so running this again writes the same bytes
// (test/unit/webhook-test-vectors.test.ts fails when the committed file is not that output).
//
// node:crypto only, on purpose: neither the service's signing code nor the receiver library is
// used here, so the test can hold both of them to this file.
//
//   npm run vectors:webhooks
import { createPrivateKey, createPublicKey, sign } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

export const VECTOR_FILE = path.resolve(import.meta.dirname, "../lib/webhooks/test-vectors/webhook-signature-v1.json");

/** RFC 8032 §7.1, TEST 1: a published key, so nobody mistakes it for a secret. */
const SEED_HEX = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
/** PKCS#8 wrapping of a raw Ed25519 seed (RFC 8410): the fixed DER prefix, then the 32 bytes. */
const PKCS8_ED25519_PREFIX = "302e020100300506032b657004220420";

const KEY_ID = "whk_test_vector_1";
const TIMESTAMP_MS = "1760000000000";
const EVENT_ID = "4f1c2a9e-7b3d-4e5f-8a6b-0c1d2e3f4a5b";
// Non-ASCII on purpose: the signature covers the UTF-8 bytes, not characters.
const RAW_BODY =
  '{"activity":{"id":"act_01","organizationId":"org_01","status":"ACTIVITY_STATUS_COMPLETED","type":"ACTIVITY_TYPE_CREATE_USERS_V4","note":"café ✓"}}';

interface SignedDelivery {
  headers: Record<string, string>;
  raw_body: string;
  verify_at_ms: number;
}

function signingInput(keyId: string, timestampMs: string, eventId: string, rawBody: string): string {
  return `v1.ed25519.${keyId}.${timestampMs}.${eventId}.${rawBody}`;
}

export function webhookSignatureVector() {
  const privateKey = createPrivateKey({ key: Buffer.from(PKCS8_ED25519_PREFIX + SEED_HEX, "hex"), format: "der", type: "pkcs8" });
  const privateJwk = privateKey.export({ format: "jwk" });
  const x = createPublicKey(privateKey).export({ format: "jwk" }).x!;
  const publishedJwk = {
    kid: KEY_ID,
    kty: "OKP",
    crv: "Ed25519",
    alg: "EdDSA",
    use: "sig",
    x,
    service_signature_algorithm: "ed25519",
    service_signature_version: "v1",
  };

  const signed = (timestampMs: string, eventId: string, rawBody: string) =>
    sign(null, Buffer.from(signingInput(KEY_ID, timestampMs, eventId, rawBody), "utf8"), privateKey).toString("hex");
  const headersFor = (timestampMs: string, eventId: string, signature: string) => ({
    "X-Service-Event-Id": eventId,
    "X-Service-Signature-Key-Id": KEY_ID,
    "X-Service-Signature-Algorithm": "ed25519",
    "X-Service-Signature-Version": "v1",
    "X-Service-Signature": signature,
    "X-Service-Timestamp": timestampMs,
    "X-Service-Organization-Id": "org_01",
    "X-Service-Event-Type": "ACTIVITY_UPDATES",
  });

  const input = signingInput(KEY_ID, TIMESTAMP_MS, EVENT_ID, RAW_BODY);
  const signature = signed(TIMESTAMP_MS, EVENT_ID, RAW_BODY);
  const headers = headersFor(TIMESTAMP_MS, EVENT_ID, signature);
  const verifyAt = Number(TIMESTAMP_MS);
  const invalid: Array<SignedDelivery & { description: string; expected_reason: string }> = [
    {
      description: "one byte of the body changed after signing (ASCII 'c' of café → 'C')",
      headers,
      raw_body: RAW_BODY.replace("café", "Café"),
      verify_at_ms: verifyAt,
      expected_reason: "bad_signature",
    },
    {
      description: "X-Service-Timestamp moved by 1 ms after signing",
      headers: { ...headers, "X-Service-Timestamp": String(verifyAt + 1) },
      raw_body: RAW_BODY,
      verify_at_ms: verifyAt,
      expected_reason: "bad_signature",
    },
    {
      description: "X-Service-Event-Id changed after signing",
      headers: { ...headers, "X-Service-Event-Id": EVENT_ID.replace(/.$/, "c") },
      raw_body: RAW_BODY,
      verify_at_ms: verifyAt,
      expected_reason: "bad_signature",
    },
    {
      description: "a correct signature, verified 300001 ms after its timestamp (outside the 5-minute window)",
      headers,
      raw_body: RAW_BODY,
      verify_at_ms: verifyAt + 300_001,
      expected_reason: "stale_timestamp",
    },
    {
      description: "a correct signature, verified 300001 ms before its timestamp (the window applies both ways)",
      headers,
      raw_body: RAW_BODY,
      verify_at_ms: verifyAt - 300_001,
      expected_reason: "stale_timestamp",
    },
  ];

  return {
    name: "sigil webhook signature v1",
    description:
      "Ed25519 over the UTF-8 bytes of `v1.ed25519.<key_id>.<timestamp_ms>.<event_id>.<raw_body>`, signature as lowercase hex in X-Service-Signature. The key is RFC 8032 TEST 1: public, never use it for anything real.",
    generated_by: "scripts/webhook-test-vectors.ts",
    max_timestamp_age_ms: 300_000,
    private_key: { seed_hex: SEED_HEX, jwk: { kty: privateJwk.kty, crv: privateJwk.crv, d: privateJwk.d, x: privateJwk.x } },
    public_key: { hex: Buffer.from(x, "base64url").toString("hex"), jwk: publishedJwk },
    jwks: { keys: [publishedJwk] },
    key_id: KEY_ID,
    timestamp_ms: TIMESTAMP_MS,
    event_id: EVENT_ID,
    raw_body: RAW_BODY,
    raw_body_hex: Buffer.from(RAW_BODY, "utf8").toString("hex"),
    signing_input: input,
    signing_input_hex: Buffer.from(input, "utf8").toString("hex"),
    signature_hex: signature,
    valid: { headers, raw_body: RAW_BODY, verify_at_ms: verifyAt } satisfies SignedDelivery,
    invalid,
  };
}

export type WebhookSignatureVector = ReturnType<typeof webhookSignatureVector>;

/** The file's exact text. */
export function webhookSignatureVectorText(): string {
  return `${JSON.stringify(webhookSignatureVector(), null, 2)}\n`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  writeFileSync(VECTOR_FILE, webhookSignatureVectorText());
  console.log(`wrote ${path.relative(process.cwd(), VECTOR_FILE)}`);
}
