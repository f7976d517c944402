// The console's browser code that needs no browser (docs/console.md §4–5), run in Node's own
// WebCrypto: a pasted API key is checked against its public key and imported non-extractable;
// X-Stamp headers made with it pass the server's own verifier (src/auth/api-key-stamp.ts) over
// bodies with non-ASCII text; WebCrypto's r‖s signatures become DER that OpenSSL accepts,
// high bits and leading zeros included; the policy text is marked exactly at the explained
// spans (unsorted, overlapping, out of range); a hash route's parts never reach Object.prototype.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createSign, generateKeyPairSync, createVerify, randomBytes } from "node:crypto";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { p256 } from "@noble/curves/nist.js";
import { apiKeyStamps } from "../../src/auth/api-key-stamp.ts";
import { p1363ToDer, toHex } from "../../src/console/browser/encoding.ts";
import { apiKeyStamp, generateSessionKey, importApiKey } from "../../src/console/browser/stamps.ts";
import { highlighted } from "../../src/console/browser/pages/activity.ts";
import { match, parseHash, type Route } from "../../src/console/browser/page.ts";
import { ROUTES } from "../../src/console/browser/pages/index.ts";

function keyPair(): { publicKey: string; privateKey: string; uncompressed: string } {
  const priv = p256.utils.randomSecretKey();
  return { privateKey: toHex(priv), publicKey: toHex(p256.getPublicKey(priv, true)), uncompressed: toHex(p256.getPublicKey(priv, false)) };
}

const decodeStamp = (value: string) => JSON.parse(Buffer.from(value, "base64url").toString("utf8")) as Record<string, string>;

describe("console: API key stamps", () => {
  it("imports a key only with its own public key (compressed or not), non-extractable", async () => {
    const k = keyPair();
    const other = keyPair();
    const key = await importApiKey(k.publicKey, k.privateKey);
    assert.equal(key.publicKey, k.publicKey);
    assert.equal(key.privateKey.extractable, false);
    assert.equal((await importApiKey(k.uncompressed, k.privateKey)).publicKey, k.publicKey, "the stamp names the compressed form");
    await assert.rejects(importApiKey(other.publicKey, k.privateKey), /does not belong/);
    await assert.rejects(importApiKey(k.publicKey, k.privateKey.slice(2)), /32 bytes/);
    await assert.rejects(importApiKey(k.publicKey, "zz".repeat(32)), /hex/);
    await assert.rejects(importApiKey(k.publicKey, "00".repeat(32)), /not a valid P-256 key/);
    await assert.rejects(crypto.subtle.exportKey("jwk", key.privateKey));
  });

  it("stamps pass the server's verifier, in the stamper's shape, over non-ASCII bodies; a changed body fails", async () => {
    const k = keyPair();
    const key = await importApiKey(k.publicKey, k.privateKey);
    const reference = await new ApiKeyStamper({ apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey }).stamp("{}");
    for (let i = 0; i < 40; i++) {
      const body = JSON.stringify({ organizationId: randomBytes(8).toString("hex"), note: `zürich ✓ ${i} 🔑` });
      const stamp = await apiKeyStamp(key, body);
      assert.equal(stamp.header, reference.stampHeaderName);
      const fields = decodeStamp(stamp.value);
      assert.deepEqual(Object.keys(fields), Object.keys(decodeStamp(reference.stampHeaderValue)));
      assert.equal(fields.scheme, "SIGNATURE_SCHEME_TK_API_P256");
      assert.equal(fields.publicKey, k.publicKey);
      await apiKeyStamps.verify(stamp.value, Buffer.from(body, "utf8"));
      await assert.rejects(apiKeyStamps.verify(stamp.value, Buffer.from(body.replace("✓", "x"), "utf8")), /could not verify/);
    }
  });

  it("a session key is made non-extractable and its stamps verify", async () => {
    const key = await generateSessionKey();
    assert.equal(key.privateKey.extractable, false);
    assert.match(key.publicKey, /^0[23][0-9a-f]{64}$/);
    const body = '{"organizationId":"x"}';
    await apiKeyStamps.verify((await apiKeyStamp(key, body)).value, Buffer.from(body));
  });

  it("r‖s to DER: OpenSSL verifies every conversion, and integers are minimal (leading zeros dropped, a zero added before a high bit)", () => {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    for (let i = 0; i < 300; i++) {
      const msg = randomBytes(16);
      const raw = createSign("sha256").update(msg).sign({ key: privateKey, dsaEncoding: "ieee-p1363" });
      const der = Buffer.from(p1363ToDer(new Uint8Array(raw)));
      assert.ok(createVerify("sha256").update(msg).verify({ key: publicKey, dsaEncoding: "der" }, der), `signature ${i}`);
    }
    const r = new Uint8Array(32).fill(0x11);
    r[0] = 0;
    r[1] = 0x7f;
    const s = new Uint8Array(32).fill(0xff);
    const der = p1363ToDer(new Uint8Array([...r, ...s]));
    assert.equal(toHex(der), `3044` + `021f7f${"11".repeat(30)}` + `022100${"ff".repeat(32)}`);
  });
});

describe("console: the explained policy text", () => {
  const text = "activity.type == 'A' && activity.resource == 'USER'";
  const render = (spans: { start: number; end: number }[]) =>
    highlighted(text, spans, "policy-highlight")
      .map((part) => (typeof part === "string" ? part : `[${String((part.props as { children: unknown }).children)}]`))
      .join("");

  it("marks each span exactly, in text order, merging overlaps and clamping to the text", () => {
    assert.equal(render([{ start: 24, end: 51 }]), "activity.type == 'A' && [activity.resource == 'USER']");
    assert.equal(
      render([
        { start: 24, end: 32 },
        { start: 0, end: 8 },
      ]),
      "[activity].type == 'A' && [activity].resource == 'USER'",
    );
    assert.equal(
      render([
        { start: 0, end: 10 },
        { start: 5, end: 13 },
      ]),
      "[activity.type] == 'A' && activity.resource == 'USER'",
    );
    assert.equal(
      render([
        { start: -5, end: 2 },
        { start: 40, end: 999 },
        { start: 7, end: 7 },
        { start: 9, end: 3 },
      ]),
      `[ac]tivity.type == 'A' && activity.resourc[e == 'USER']`,
    );
    assert.equal(render([]), text);
    const marks = highlighted(text, [{ start: 0, end: 8 }], "policy-highlight").filter((p) => typeof p !== "string");
    assert.equal((marks[0] as { type: unknown }).type, "mark");
    assert.equal((marks[0] as { props: Record<string, unknown> }).props["data-testid"], "policy-highlight");
  });
});

describe("console: hash routes", () => {
  it("parses the path and query, decodes parts, and captures named parts into a Map", () => {
    const loc = parseHash("#/org/o%2F1/activities/a-1?status=ACTIVITY_STATUS_FAILED&user=u");
    assert.deepEqual(loc.path, ["org", "o/1", "activities", "a-1"]);
    assert.equal(loc.query.get("status"), "ACTIVITY_STATUS_FAILED");
    const m = match(ROUTES, loc.path);
    assert.equal(m?.route.nav, "activities");
    assert.equal(m?.params.get("activityId"), "a-1");
    assert.equal(parseHash("#/org/%E0%A4%A").path[1], "%E0%A4%A", "a malformed escape is kept as typed");
    assert.equal(match(ROUTES, ["org", "x", "policies", "new"])?.params.has("policyId"), false, "policies/new is the new-policy editor");
    assert.equal(match(ROUTES, ["org", "x", "nowhere"]), undefined);
  });

  it("a part named __proto__ stays a value: nothing reaches Object.prototype", () => {
    const routes: Route[] = [{ pattern: "x/:__proto__/:constructor", page: () => null }];
    const m = match(routes, ["x", "polluted", "also"]);
    assert.equal(m?.params.get("__proto__"), "polluted");
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, "polluted"), false);
  });
});
