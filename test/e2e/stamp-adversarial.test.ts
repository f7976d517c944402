// Adversarial requests against the real server, byte for byte: forged, tampered, malformed,
// stale, misrouted and oversized requests must all be rejected with the SDK's error shape,
// the right gRPC code / HTTP status / turnkeyErrorCode, and must never store an activity.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { createPublicKey, randomUUID } from "node:crypto";
import { engines, newInstance, sigilInit, startServer, type Instance, type InitResult, type RunningServer } from "../helpers/server.ts";
import {
  decodeStamp,
  encodeStamp,
  goodStamp,
  newKeyPair,
  pollUntil,
  rawPost,
  rawSignature,
  stampedPost,
  type KeyPair,
  type RawResponse,
} from "../helpers/raw-http.ts";

const TAG = "/public/v1/submit/create_user_tag";
const WHOAMI = "/public/v1/query/whoami";
const P256 = "SIGNATURE_SCHEME_TK_API_P256";
const P256_N = BigInt("0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551");
const SPKI_P256_COMPRESSED = "3039301306072a8648ce3d020106082a8648ce3d030107032200";

const NOT_FOUND_KEY_MSG = "could not find public key in organization or its parent organization";
const EXPIRED_KEY_MSG = "Unauthenticated desc = expired api key publicKey";

type ErrorBody = { code: number; message: string; details: Array<Record<string, unknown>> };

/** Checks the grpc-gateway error shape the SDKs parse, and returns it. */
function assertError(res: RawResponse, expect: { status: number; code: number; category?: string; message?: string | RegExp }): ErrorBody {
  const ctx = `HTTP ${res.status}: ${res.text.slice(0, 500)}`;
  assert.equal(res.status, expect.status, ctx);
  assert.match(res.contentType ?? "", /^application\/json/, ctx);
  assert.ok(res.json && typeof res.json === "object" && !Array.isArray(res.json), `body is not a JSON object: ${ctx}`);
  const body = res.json as ErrorBody;
  assert.deepEqual(Object.keys(body).sort(), ["code", "details", "message"], ctx);
  assert.equal(body.code, expect.code, ctx);
  assert.equal(typeof body.message, "string", ctx);
  assert.ok(body.message.length > 0, ctx);
  assert.ok(Array.isArray(body.details), ctx);
  const first = body.details[0];
  assert.ok(first, `details is empty: ${ctx}`);
  assert.equal(first["@type"], "type.googleapis.com/errors.v1.TurnkeyErrorDetail", ctx);
  assert.equal(typeof first.turnkeyErrorCode, "string", ctx);
  if (expect.category !== undefined) assert.equal(first.turnkeyErrorCode, expect.category, ctx);
  if (typeof expect.message === "string")
    assert.ok(body.message.includes(expect.message), `message lacks ${JSON.stringify(expect.message)}: ${ctx}`);
  else if (expect.message) assert.match(body.message, expect.message, ctx);
  return body;
}

const assertUnauthenticated = (res: RawResponse, category?: string, message?: string | RegExp) =>
  assertError(res, { status: 401, code: 16, category, message });
const assertInvalid = (res: RawResponse, message?: string | RegExp) =>
  assertError(res, { status: 400, code: 3, category: "REQUEST_INVALID", message });

function fieldViolations(body: ErrorBody): Array<{ field: string; description: string }> {
  const br = body.details.find((d) => d["@type"] === "type.googleapis.com/google.rpc.BadRequest");
  return (br?.fieldViolations as Array<{ field: string; description: string }> | undefined) ?? [];
}

/** DER ECDSA signature (hex) → r, s. Strict enough for signatures the stamper makes. */
function parseDer(hex: string): { r: bigint; s: bigint } {
  const b = Buffer.from(hex, "hex");
  assert.equal(b[0], 0x30, "DER sequence");
  let i = 2;
  assert.equal(b[i], 0x02);
  const rLen = b[i + 1]!;
  const r = BigInt("0x" + b.subarray(i + 2, i + 2 + rLen).toString("hex"));
  i += 2 + rLen;
  assert.equal(b[i], 0x02);
  const sLen = b[i + 1]!;
  const s = BigInt("0x" + b.subarray(i + 2, i + 2 + sLen).toString("hex"));
  return { r, s };
}

function derInt(n: bigint): Buffer {
  let h = n.toString(16);
  if (h.length % 2) h = "0" + h;
  let b = Buffer.from(h, "hex");
  if (b[0]! & 0x80) b = Buffer.concat([Buffer.from([0]), b]);
  return Buffer.concat([Buffer.from([0x02, b.length]), b]);
}

function encodeDer(r: bigint, s: bigint): string {
  const body = Buffer.concat([derInt(r), derInt(s)]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]).toString("hex");
}

/** A compressed P-256 "public key" whose x has no point on the curve. */
function offCurveKey(): string {
  for (let x = 1n; ; x++) {
    const hex = "02" + x.toString(16).padStart(64, "0");
    try {
      createPublicKey({ key: Buffer.from(SPKI_P256_COMPRESSED + hex, "hex"), format: "der", type: "spki" });
    } catch {
      return hex;
    }
  }
}

for (const engine of engines()) {
  describe(`stamp adversarial (${engine.name})`, { skip: engine.skip, timeout: 180_000 }, () => {
    let inst: Instance;
    let server: RunningServer;
    let root: InitResult;
    let rootKey: KeyPair;
    let foreign: InitResult;
    let foreignKey: KeyPair;
    /** Activities our good requests created in the root org, by id. */
    const goodActivities = new Set<string>();
    /** Tag names our good requests created. */
    const goodTags = new Set<string>();
    let seq = 0;

    const tagBody = (overrides: Record<string, unknown> = {}, name = `adv-${engine.name}-${++seq}-${randomUUID().slice(0, 8)}`) =>
      JSON.stringify({
        parameters: { userTagName: name, userIds: [] },
        organizationId: root.organizationId,
        timestampMs: String(Date.now()),
        type: "ACTIVITY_TYPE_CREATE_USER_TAG",
        ...overrides,
      });
    const whoamiBody = (organizationId = root.organizationId) => JSON.stringify({ organizationId });
    const stampObj = (overrides: Record<string, unknown>) => ({
      publicKey: rootKey.publicKey,
      scheme: P256,
      signature: "00",
      ...overrides,
    });

    /** A request the server must accept: it creates one activity we account for. */
    async function acceptedTag(body: string, headers: Record<string, string>): Promise<string> {
      const res = await rawPost(server.url, TAG, body, headers);
      assert.equal(res.status, 200, res.text);
      const activity = res.json.activity as { id: string; status: string; type: string; organizationId: string };
      assert.equal(activity.status, "ACTIVITY_STATUS_COMPLETED");
      assert.equal(activity.type, "ACTIVITY_TYPE_CREATE_USER_TAG");
      assert.equal(activity.organizationId, root.organizationId);
      goodActivities.add(activity.id);
      goodTags.add((JSON.parse(body) as { parameters: { userTagName: string } }).parameters.userTagName);
      return activity.id;
    }

    before(async () => {
      inst = await newInstance(engine.name);
      root = await sigilInit(inst, ["--name", "Adversarial Org"]);
      rootKey = { publicKey: root.apiPublicKey, privateKey: root.apiPrivateKey };
      server = await startServer(inst);
      // A second root organization on the same instance, made while the server runs.
      foreign = await sigilInit(inst, ["--name", "Foreign Org"]);
      foreignKey = { publicKey: foreign.apiPublicKey, privateKey: foreign.apiPrivateKey };
      assert.notEqual(foreign.organizationId, root.organizationId);
    });

    after(async () => {
      await server?.stop();
      await inst?.cleanup();
    });

    it("baseline: an SDK-stamped request is accepted (whoami and create_user_tag)", async () => {
      const who = await stampedPost(server.url, WHOAMI, whoamiBody(), rootKey);
      assert.equal(who.status, 200, who.text);
      assert.equal(who.json.organizationId, root.organizationId);
      assert.equal(who.json.userId, root.userId);
      const body = tagBody();
      await acceptedTag(body, { "X-Stamp": await goodStamp(rootKey, body) });
      // The foreign org's own key works on its own org: it is a real, live credential.
      const fwho = await stampedPost(server.url, WHOAMI, whoamiBody(foreign.organizationId), foreignKey);
      assert.equal(fwho.status, 200, fwho.text);
      assert.equal(fwho.json.organizationId, foreign.organizationId);
    });

    it("the exact same signed bytes replayed return the same activity, not a new one", async () => {
      const body = tagBody();
      const headers = { "X-Stamp": await goodStamp(rootKey, body) };
      const id = await acceptedTag(body, headers);
      const again = await rawPost(server.url, TAG, body, headers);
      assert.equal(again.status, 200, again.text);
      assert.equal(again.json.activity.id, id);
    });

    it("a high-S (non-normalised) DER signature is accepted, as the SDK's node stamper emits them", async () => {
      const body = tagBody();
      const stamp = decodeStamp(await goodStamp(rootKey, body));
      const { r, s } = parseDer(stamp.signature);
      const highS = s > P256_N / 2n ? s : P256_N - s;
      assert.ok(highS > P256_N / 2n);
      await acceptedTag(body, { "X-Stamp": encodeStamp({ ...stamp, signature: encodeDer(r, highS) }) });
    });

    it("rejects a body tampered with after signing (SIGNATURE_INVALID)", async () => {
      const body = tagBody();
      const stamp = await goodStamp(rootKey, body);
      const tampered = body.replace('"userIds":[]', `"userIds":["${root.userId}"]`);
      assert.notEqual(tampered, body);
      assertUnauthenticated(await rawPost(server.url, TAG, tampered, { "X-Stamp": stamp }), "SIGNATURE_INVALID");
      // Whitespace-only changes are tampering too: the signed message is the exact bytes.
      assertUnauthenticated(await rawPost(server.url, TAG, body + " ", { "X-Stamp": stamp }), "SIGNATURE_INVALID");
    });

    it("rejects a query whose body was tampered with after signing (SIGNATURE_INVALID)", async () => {
      const stamp = await goodStamp(rootKey, whoamiBody());
      const res = await rawPost(server.url, WHOAMI, whoamiBody(foreign.organizationId), { "X-Stamp": stamp });
      assertUnauthenticated(res, "SIGNATURE_INVALID");
    });

    it("rejects a signature lifted from another request (SIGNATURE_INVALID)", async () => {
      const other = decodeStamp(await goodStamp(rootKey, tagBody()));
      const body = tagBody();
      assertUnauthenticated(await rawPost(server.url, TAG, body, { "X-Stamp": encodeStamp(other) }), "SIGNATURE_INVALID");
    });

    it("rejects a signature made by a different key than the stamp's publicKey (SIGNATURE_INVALID)", async () => {
      const body = tagBody();
      const attacker = newKeyPair();
      const forged = decodeStamp(await goodStamp(attacker, body));
      const res = await rawPost(server.url, TAG, body, { "X-Stamp": encodeStamp({ ...forged, publicKey: rootKey.publicKey }) });
      assertUnauthenticated(res, "SIGNATURE_INVALID");
    });

    it("rejects a valid signature by an unregistered key (PUBLIC_KEY_NOT_FOUND, SDK message)", async () => {
      const stranger = newKeyPair();
      const body = tagBody();
      assertUnauthenticated(await stampedPost(server.url, TAG, body, stranger), "PUBLIC_KEY_NOT_FOUND", NOT_FOUND_KEY_MSG);
      const who = await stampedPost(server.url, WHOAMI, whoamiBody(), stranger);
      assertUnauthenticated(who, "PUBLIC_KEY_NOT_FOUND", NOT_FOUND_KEY_MSG);
    });

    it("rejects a key of another root organization targeting this one (PUBLIC_KEY_NOT_FOUND), both ways", async () => {
      const body = tagBody();
      assertUnauthenticated(await stampedPost(server.url, TAG, body, foreignKey), "PUBLIC_KEY_NOT_FOUND", NOT_FOUND_KEY_MSG);
      assertUnauthenticated(await stampedPost(server.url, WHOAMI, whoamiBody(), foreignKey), "PUBLIC_KEY_NOT_FOUND", NOT_FOUND_KEY_MSG);
      // And the root key cannot act on the foreign org either.
      const intoForeign = tagBody({ organizationId: foreign.organizationId });
      assertUnauthenticated(await stampedPost(server.url, TAG, intoForeign, rootKey), "PUBLIC_KEY_NOT_FOUND", NOT_FOUND_KEY_MSG);
    });

    it("rejects an expired API key (API_KEY_EXPIRED, SDK message)", async () => {
      const shortLived = newKeyPair();
      const create = JSON.stringify({
        parameters: {
          apiKeys: [
            { apiKeyName: "short-lived", publicKey: shortLived.publicKey, curveType: "API_KEY_CURVE_P256", expirationSeconds: "1" },
          ],
          userId: root.userId,
        },
        organizationId: root.organizationId,
        timestampMs: String(Date.now()),
        type: "ACTIVITY_TYPE_CREATE_API_KEYS_V2",
      });
      const res = await stampedPost(server.url, "/public/v1/submit/create_api_keys", create, rootKey);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.activity.status, "ACTIVITY_STATUS_COMPLETED");
      goodActivities.add(res.json.activity.id as string);
      // Wait (bounded) until the server considers the key expired.
      const expired = await pollUntil("the 1-second API key to expire", 15_000, 100, async () => {
        const r = await stampedPost(server.url, WHOAMI, whoamiBody(), shortLived);
        if (r.status === 200) return undefined;
        return r;
      });
      assertUnauthenticated(expired, "API_KEY_EXPIRED", EXPIRED_KEY_MSG);
      assert.ok(expired.json.message.includes(shortLived.publicKey), expired.text);
      const submit = await stampedPost(server.url, TAG, tagBody(), shortLived);
      assertUnauthenticated(submit, "API_KEY_EXPIRED", EXPIRED_KEY_MSG);
    });

    it("rejects a request without any stamp header (SIGNATURE_MISSING)", async () => {
      assertUnauthenticated(await rawPost(server.url, TAG, tagBody()), "SIGNATURE_MISSING", /stamp/i);
      assertUnauthenticated(await rawPost(server.url, WHOAMI, whoamiBody()), "SIGNATURE_MISSING", /stamp/i);
    });

    it("rejects a request carrying both X-Stamp and X-Stamp-WebAuthn", async () => {
      const body = tagBody();
      const res = await rawPost(server.url, TAG, body, {
        "X-Stamp": await goodStamp(rootKey, body),
        "X-Stamp-WebAuthn": JSON.stringify({ authenticatorData: "AA", clientDataJson: "AA", credentialId: "AA", signature: "AA" }),
      });
      assertUnauthenticated(res, undefined, /stamp/i);
    });

    it("rejects two X-Stamp values (both valid) instead of picking one", async () => {
      const body = tagBody();
      const s = await goodStamp(rootKey, body);
      const headers = new Headers({ "Content-Type": "application/json" });
      headers.append("X-Stamp", s);
      headers.append("X-Stamp", s);
      const r = await fetch(server.url + TAG, { method: "POST", headers, body });
      const text = await r.text();
      assertUnauthenticated({ status: r.status, contentType: r.headers.get("content-type"), text, json: JSON.parse(text) });
    });

    it("answers a WebAuthn-only stamp that cannot be read with 401 'could not extract webauthn stamp'", async () => {
      const body = tagBody();
      const res = await rawPost(server.url, TAG, body, {
        "X-Stamp-WebAuthn": JSON.stringify({ authenticatorData: "AA", clientDataJson: "AA", credentialId: "AA", signature: "AA" }),
      });
      assertUnauthenticated(res, "UNAUTHENTICATED", /could not extract webauthn stamp/);
    });

    it("rejects an X-Stamp that is not base64url", async () => {
      const body = tagBody();
      const good = await goodStamp(rootKey, body);
      for (const bad of ["!!!not-base64!!!", good.replace(/-|_/g, "+") + "+/", `${good}.${good}`, "a b"]) {
        assertUnauthenticated(await rawPost(server.url, TAG, body, { "X-Stamp": bad }), undefined, /malformed/);
      }
    });

    it("rejects an X-Stamp that decodes to something other than JSON", async () => {
      const body = tagBody();
      assertUnauthenticated(
        await rawPost(server.url, TAG, body, { "X-Stamp": encodeStamp("publicKey=02ab;sig=00") }),
        undefined,
        /malformed/,
      );
      // Valid base64url but not UTF-8 JSON at all.
      assertUnauthenticated(
        await rawPost(server.url, TAG, body, { "X-Stamp": Buffer.from([0xff, 0xfe, 0x00, 0x7b]).toString("base64url") }),
        undefined,
        /malformed/,
      );
    });

    it("rejects an X-Stamp JSON that is not an object or misses fields", async () => {
      const body = tagBody();
      const good = decodeStamp(await goodStamp(rootKey, body));
      const { signature: _sig, ...noSignature } = good;
      const { publicKey: _pk, ...noPublicKey } = good;
      const { scheme: _sch, ...noScheme } = good;
      for (const bad of [noSignature, noPublicKey, noScheme, [good], null, 42, { ...good, signature: 123 }]) {
        const res = await rawPost(server.url, TAG, body, { "X-Stamp": encodeStamp(JSON.stringify(bad)) });
        assertUnauthenticated(res, undefined, /malformed/);
      }
    });

    it("rejects an unknown signature scheme", async () => {
      const body = tagBody();
      const good = decodeStamp(await goodStamp(rootKey, body));
      for (const scheme of ["SIGNATURE_SCHEME_TK_API_RSA", "", "signature_scheme_tk_api_p256"]) {
        const res = await rawPost(server.url, TAG, body, { "X-Stamp": encodeStamp({ ...good, scheme }) });
        assertUnauthenticated(res, undefined, /scheme/);
      }
    });

    it("rejects a stamp publicKey that is not hex", async () => {
      const body = tagBody();
      const good = decodeStamp(await goodStamp(rootKey, body));
      const notHex = "zz" + good.publicKey.slice(2);
      assertUnauthenticated(
        await rawPost(server.url, TAG, body, { "X-Stamp": encodeStamp({ ...good, publicKey: notHex }) }),
        undefined,
        /publicKey/,
      );
    });

    it("rejects a stamp publicKey of the wrong length", async () => {
      const body = tagBody();
      const good = decodeStamp(await goodStamp(rootKey, body));
      for (const publicKey of [good.publicKey.slice(0, 64), good.publicKey + "00", "", "02"]) {
        const res = await rawPost(server.url, TAG, body, { "X-Stamp": encodeStamp({ ...good, publicKey }) });
        assertUnauthenticated(res, undefined, /publicKey/);
      }
    });

    it("rejects a stamp publicKey that is not a point on P-256", async () => {
      const body = tagBody();
      const good = decodeStamp(await goodStamp(rootKey, body));
      const res = await rawPost(server.url, TAG, body, { "X-Stamp": encodeStamp({ ...good, publicKey: offCurveKey() }) });
      assertUnauthenticated(res, undefined, /publicKey/);
    });

    it("rejects a signature that is not hex", async () => {
      const body = tagBody();
      const good = decodeStamp(await goodStamp(rootKey, body));
      for (const signature of [
        "xyz" + good.signature.slice(3),
        good.signature.slice(1),
        "",
        Buffer.from(good.signature, "hex").toString("base64"),
      ]) {
        const res = await rawPost(server.url, TAG, body, { "X-Stamp": encodeStamp({ ...good, signature }) });
        assertUnauthenticated(res, undefined);
      }
    });

    it("rejects hex that is not a valid DER signature (SIGNATURE_INVALID)", async () => {
      const body = tagBody();
      const good = decodeStamp(await goodStamp(rootKey, body));
      for (const signature of ["deadbeef", "30" + good.signature.slice(2, 40), good.signature + "00", "3000"]) {
        const res = await rawPost(server.url, TAG, body, { "X-Stamp": encodeStamp({ ...good, signature }) });
        assertUnauthenticated(res, "SIGNATURE_INVALID");
      }
    });

    it("rejects a raw r||s (64-byte) signature instead of DER (SIGNATURE_INVALID)", async () => {
      const body = tagBody();
      const raw = await rawSignature(rootKey, body);
      assert.equal(raw.length, 128);
      const res = await rawPost(server.url, TAG, body, { "X-Stamp": encodeStamp(stampObj({ signature: raw })) });
      assertUnauthenticated(res, "SIGNATURE_INVALID");
    });

    it("rejects an over-long X-Stamp header", async () => {
      const body = tagBody();
      const good = decodeStamp(await goodStamp(rootKey, body));
      const res = await rawPost(server.url, TAG, body, { "X-Stamp": encodeStamp({ ...good, padding: "a".repeat(10_000) }) });
      assertUnauthenticated(res);
    });

    it("rejects a stale timestampMs (6 minutes old)", async () => {
      const body = tagBody({ timestampMs: String(Date.now() - 6 * 60_000) });
      assertInvalid(await stampedPost(server.url, TAG, body, rootKey), /timestampMs/);
    });

    it("rejects a future timestampMs (10 minutes ahead)", async () => {
      const body = tagBody({ timestampMs: String(Date.now() + 10 * 60_000) });
      assertInvalid(await stampedPost(server.url, TAG, body, rootKey), /timestampMs/);
    });

    it("rejects a missing or non-numeric timestampMs", async () => {
      const missing = JSON.parse(tagBody()) as Record<string, unknown>;
      delete missing.timestampMs;
      const e = assertInvalid(await stampedPost(server.url, TAG, JSON.stringify(missing), rootKey));
      assert.ok(
        fieldViolations(e).some((v) => v.field === "timestampMs"),
        JSON.stringify(e),
      );
      assertInvalid(await stampedPost(server.url, TAG, tagBody({ timestampMs: "soon" }), rootKey), /timestampMs/);
      assertInvalid(await stampedPost(server.url, TAG, tagBody({ timestampMs: Date.now() }), rootKey), /timestampMs/);
    });

    it("rejects a body type the path does not accept", async () => {
      const body = JSON.stringify({
        parameters: { userIds: [root.userId] },
        organizationId: root.organizationId,
        timestampMs: String(Date.now()),
        type: "ACTIVITY_TYPE_DELETE_USERS",
      });
      const e = assertInvalid(await stampedPost(server.url, TAG, body, rootKey), /ACTIVITY_TYPE_DELETE_USERS/);
      assert.ok(
        fieldViolations(e).some((v) => v.field === "type"),
        JSON.stringify(e),
      );
      assertInvalid(await stampedPost(server.url, TAG, tagBody({ type: undefined }), rootKey));
      assertInvalid(await stampedPost(server.url, TAG, tagBody({ type: "ACTIVITY_TYPE_CREATE_USER_TAG_V2" }), rootKey));
      // The root user still exists: the misrouted delete did nothing.
      const who = await stampedPost(server.url, WHOAMI, whoamiBody(), rootKey);
      assert.equal(who.status, 200, who.text);
    });

    it("rejects a malformed JSON body (even when properly stamped)", async () => {
      const body = tagBody().slice(0, -5);
      assertInvalid(await stampedPost(server.url, TAG, body, rootKey), /JSON/);
      assertInvalid(await stampedPost(server.url, WHOAMI, "{organizationId:", rootKey), /JSON/);
    });

    it("rejects a JSON body that is not an object", async () => {
      for (const body of ["[]", `[${tagBody()}]`, '"ACTIVITY_TYPE_CREATE_USER_TAG"', "42", "null", "true"]) {
        assertInvalid(await stampedPost(server.url, TAG, body, rootKey));
      }
      assertInvalid(await stampedPost(server.url, WHOAMI, "[]", rootKey));
    });

    it("rejects an empty body", async () => {
      assertInvalid(await stampedPost(server.url, TAG, "", rootKey), /empty/);
      assertInvalid(await rawPost(server.url, TAG, undefined, { "X-Stamp": await goodStamp(rootKey, "") }));
      assertInvalid(await stampedPost(server.url, WHOAMI, "", rootKey), /empty/);
      // Unstamped, the body is never looked at: the missing stamp is the answer.
      assertUnauthenticated(await rawPost(server.url, WHOAMI, ""), "SIGNATURE_MISSING");
    });

    it("rejects a body over 1 MiB with 413", async () => {
      const body = tagBody({}, "x".repeat(1024 * 1024 + 10));
      assert.ok(Buffer.byteLength(body) > 1024 * 1024);
      const res = await stampedPost(server.url, TAG, body, rootKey);
      assertError(res, { status: 413, code: 3, category: "REQUEST_INVALID", message: /too large/ });
    });

    it("rejects a chunked (no Content-Length) body over 1 MiB with 413", async () => {
      const body = Buffer.from(tagBody({}, "y".repeat(2 * 1024 * 1024)));
      const stamp = await goodStamp(rootKey, body.toString("utf8"));
      const chunk = 64 * 1024;
      let off = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (off >= body.length) return controller.close();
          controller.enqueue(body.subarray(off, off + chunk));
          off += chunk;
        },
      });
      let res: RawResponse;
      try {
        const r = await fetch(server.url + TAG, {
          method: "POST",
          headers: { "Content-Type": "application/json", "X-Stamp": stamp },
          body: stream,
          duplex: "half",
        } as RequestInit & { duplex: "half" });
        const text = await r.text();
        res = { status: r.status, contentType: r.headers.get("content-type"), text, json: JSON.parse(text) };
      } catch (err) {
        // The server may close the connection while we still upload; that is a rejection too,
        // as long as nothing was stored (checked at the end) and the server lives on.
        assert.match(String((err as Error).cause ?? err), /(ECONNRESET|EPIPE|closed|terminated|socket)/i);
        return;
      }
      assertError(res, { status: 413, code: 3, category: "REQUEST_INVALID" });
    });

    it("answers an unknown operation path with 404", async () => {
      const body = tagBody();
      assertError(await stampedPost(server.url, "/public/v1/submit/create_user_tags", body, rootKey), { status: 404, code: 5 });
      assertError(await stampedPost(server.url, "/public/v1/query/who_am_i", whoamiBody(), rootKey), { status: 404, code: 5 });
      assertError(await stampedPost(server.url, "/public/v2/submit/create_user_tag", body, rootKey), { status: 404, code: 5 });
    });

    it("rejects an organizationId that is not a UUID with 400", async () => {
      for (const organizationId of ["not-a-uuid", "", `${randomUUID()}x`, 12]) {
        const e = assertInvalid(await stampedPost(server.url, TAG, tagBody({ organizationId }), rootKey));
        assert.ok(
          fieldViolations(e).some((v) => v.field === "organizationId"),
          JSON.stringify(e),
        );
      }
      const q = assertInvalid(await stampedPost(server.url, WHOAMI, JSON.stringify({ organizationId: "../../etc" }), rootKey));
      assert.ok(
        fieldViolations(q).some((v) => v.field === "organizationId"),
        JSON.stringify(q),
      );
    });

    it("answers the organizationId of a nonexistent organization like an unknown key (401 PUBLIC_KEY_NOT_FOUND)", async () => {
      // Which organizations exist is no one's business but their users': a nonexistent
      // organization, signed for by a real key, is answered exactly like a real one signed
      // for by a key unknown there.
      const ghost = randomUUID();
      const ghostTag = assertUnauthenticated(
        await stampedPost(server.url, TAG, tagBody({ organizationId: ghost }), rootKey),
        "PUBLIC_KEY_NOT_FOUND",
        NOT_FOUND_KEY_MSG,
      );
      const ghostWho = assertUnauthenticated(
        await stampedPost(server.url, WHOAMI, whoamiBody(ghost), rootKey),
        "PUBLIC_KEY_NOT_FOUND",
        NOT_FOUND_KEY_MSG,
      );
      const realTag = assertUnauthenticated(await stampedPost(server.url, TAG, tagBody(), newKeyPair()), "PUBLIC_KEY_NOT_FOUND");
      const realWho = assertUnauthenticated(await stampedPost(server.url, WHOAMI, whoamiBody(), newKeyPair()), "PUBLIC_KEY_NOT_FOUND");
      assert.deepEqual(ghostTag, realTag);
      assert.deepEqual(ghostWho, realWho);
    });

    it("stored no activity and no tag for any rejected request", async () => {
      const list = await stampedPost(
        server.url,
        "/public/v1/query/list_activities",
        JSON.stringify({ organizationId: root.organizationId, paginationOptions: { limit: "100" } }),
        rootKey,
      );
      assert.equal(list.status, 200, list.text);
      const activities = list.json.activities as Array<{ id: string; status: string }>;
      // baseline + replay + high-S + create_api_keys for the expiring key.
      assert.equal(goodActivities.size, 4);
      assert.deepEqual(new Set(activities.map((a) => a.id)), goodActivities);
      assert.equal(activities.length, goodActivities.size);
      for (const a of activities) assert.equal(a.status, "ACTIVITY_STATUS_COMPLETED");

      const tags = await stampedPost(server.url, "/public/v1/query/list_user_tags", whoamiBody(), rootKey);
      assert.equal(tags.status, 200, tags.text);
      assert.deepEqual(new Set((tags.json.userTags as Array<{ tagName: string }>).map((t) => t.tagName)), goodTags);

      const foreignList = await stampedPost(
        server.url,
        "/public/v1/query/list_activities",
        JSON.stringify({ organizationId: foreign.organizationId, paginationOptions: { limit: "100" } }),
        foreignKey,
      );
      assert.equal(foreignList.status, 200, foreignList.text);
      assert.equal(foreignList.json.activities.length, 0);
    });

    it("the server is still alive and serving", async () => {
      assert.equal(server.proc.exitCode, null, server.output().slice(-2000));
      assert.equal(server.proc.signalCode, null);
      const health = await fetch(server.url + "/healthz");
      assert.equal(health.status, 200);
      const who = await stampedPost(server.url, WHOAMI, whoamiBody(), rootKey);
      assert.equal(who.status, 200, who.text);
      assert.doesNotMatch(server.output(), /"internal error"/, "a rejected request caused an internal error");
    });
  });
}
