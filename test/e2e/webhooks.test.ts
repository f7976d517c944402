// End-to-end: webhooks (docs/webhooks.md) against the real service on
// both engines. Endpoints are managed and activities submitted through the official SDK
// clients (behind the shared recording proxy, for HTTP statuses); deliveries land on a real
// node:http receiver on 127.0.0.1 that records raw body bytes and headers, and are verified
// twice: with the receiver library (@sigil/webhooks) and with an independent node:crypto
// verifier written here. Delivery bookkeeping (status, attempts, last_status) is read
// straight from the instance's database.
//
// Isolation: the organization `sigil init` created never owns an endpoint; each test works in
// its own sub-organization(s) and on its own receiver paths. Waiting is always a poll of a
// condition with a deadline. "Nothing else arrives" is established with a marker: deliveries
// to one endpoint go out in event order, so once a later event has been delivered to it, an
// earlier one can no longer arrive (and the database says it is terminal).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import path from "node:path";
import { createPublicKey, randomBytes, randomUUID, verify as edVerify } from "node:crypto";
import { createWebhookVerifier, type VerifyResult, type WebhookVerifier } from "@sigil/webhooks";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import {
  RecordingProxy,
  expectError,
  newSubOrgParty,
  partyFor,
  type AnyRec,
  type ExpectedError,
  type Party,
} from "../helpers/policy-harness.ts";
import {
  WebhookSink,
  freePort,
  openWebhookTables,
  until,
  type Answer,
  type DeliveryRow,
  type Receipt,
  type WebhookTables,
} from "../helpers/webhook-sink.ts";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "bin/sigil.mjs");

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const COMPLETED = "ACTIVITY_STATUS_COMPLETED";
const CONSENSUS = "ACTIVITY_STATUS_CONSENSUS_NEEDED";
const JWKS_PATH = "/public/v1/discovery/webhooks/jwks";
const SIGNED = [
  "x-service-event-id",
  "x-service-signature-key-id",
  "x-service-signature-algorithm",
  "x-service-signature-version",
  "x-service-signature",
  "x-service-timestamp",
] as const;
/** Fast retries so fault cases finish in seconds; enough attempts (~23 s) to outlive a short outage. */
const SERVER_ENV = {
  SIGIL_WEBHOOKS_ALLOW_LOOPBACK: "true",
  SIGIL_WEBHOOKS_RETRY_SCHEDULE: "0,50ms,100ms,200ms,400ms,800ms,1s,2s,2s,2s,2s,2s,2s,2s,2s",
  SIGIL_WEBHOOKS_TIMEOUT_MS: "2000",
};
/** DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410); the 32 raw key bytes follow. */
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

const uniq = (label: string) => `${label}-${randomBytes(4).toString("hex")}`;

function header(r: Receipt, name: string): string {
  const v = r.headers[name];
  assert.equal(typeof v, "string", `header ${name} of delivery #${r.seq} to ${r.path}: ${JSON.stringify(v)}`);
  return v as string;
}

const bodyOf = (r: Receipt) => JSON.parse(r.body.toString("utf8")) as AnyRec;
const activityOf = (r: Receipt) => String(bodyOf(r).id);
const eventIdOf = (r: Receipt) => header(r, "x-service-event-id");
const forActivity = (rs: Receipt[], activityId: string) => rs.filter((r) => activityOf(r) === activityId);

interface Jwk {
  kid: string;
  kty: string;
  crv: string;
  alg: string;
  use: string;
  x: string;
  service_signature_algorithm: string;
  service_signature_version: string;
}

async function fetchJwks(
  baseUrl: string,
): Promise<{ status: number; cacheControl: string | null; contentType: string | null; json: AnyRec }> {
  const res = await fetch(`${baseUrl}${JWKS_PATH}`);
  return {
    status: res.status,
    cacheControl: res.headers.get("cache-control"),
    contentType: res.headers.get("content-type"),
    json: (await res.json()) as AnyRec,
  };
}

/**
 * An independent verifier: node:crypto only, straight from docs/webhooks.md §2.2 and §4. Returns why it
 * rejects, or "ok".
 */
function independentVerify(keys: Jwk[], r: { headers: Receipt["headers"]; body: Buffer }, nowMs = Date.now()): string {
  const h = (n: string) => {
    const v = r.headers[n];
    return typeof v === "string" && v !== "" ? v : undefined;
  };
  const [eventId, kid, alg, version, sigHex, ts] = SIGNED.map(h);
  if (!eventId || !kid || !alg || !version || !sigHex || !ts) return "missing_header";
  if (version !== "v1" || alg !== "ed25519") return "unsupported";
  if (!/^[0-9]+$/.test(ts) || Math.abs(nowMs - Number(ts)) > 5 * 60_000) return "stale_timestamp";
  const jwk = keys.find((k) => k.kid === kid);
  if (!jwk) return "missing_key";
  if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519") return "bad_key";
  const raw = Buffer.from(jwk.x, "base64url");
  if (raw.length !== 32) return "bad_key";
  if (!/^[0-9a-f]{128}$/i.test(sigHex)) return "bad_signature_encoding";
  const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: "der", type: "spki" });
  const message = Buffer.concat([Buffer.from(`${version}.${alg}.${kid}.${ts}.${eventId}.`, "ascii"), r.body]);
  return edVerify(null, message, key, Buffer.from(sigHex, "hex")) ? "ok" : "bad_signature";
}

const verifyWith = (v: WebhookVerifier, r: { headers: Receipt["headers"]; body: Buffer }) =>
  v.verify({ headers: r.headers, rawBody: r.body });

function assertVerified(res: VerifyResult, r: Receipt): void {
  assert.ok(res.ok, `library rejected delivery #${r.seq} to ${r.path}: ${JSON.stringify(res)}`);
  assert.equal(res.eventId, eventIdOf(r));
  assert.equal(res.keyId, header(r, "x-service-signature-key-id"));
  assert.equal(res.timestampMs, Number(header(r, "x-service-timestamp")));
}

for (const engine of engines()) {
  describe(`webhooks end to end (${engine.name})`, { skip: engine.skip, timeout: 240_000 }, () => {
    let inst: Instance | undefined;
    let server: RunningServer | undefined;
    let proxy: RecordingProxy | undefined;
    let tables: WebhookTables | undefined;
    let init: InitResult;
    let root: Party;
    const sink = new WebhookSink();
    /** Extra receivers started by tests (on ports chosen while nothing listened there). */
    const extraSinks: WebhookSink[] = [];

    const fail = (p: Promise<unknown>, exp: ExpectedError) => expectError(proxy!, p, exp);
    const party = (key: ReturnType<typeof generateP256KeyPair>, userId: string, orgId: string) => partyFor(proxy!.url, key, userId, orgId);
    const jwksUrl = () => `${server!.url}${JWKS_PATH}`;
    const db = () => tables!;

    /** A sub-organization of `parent`'s organization, with one root user. */
    const newOrg = (label: string, parent: Party = root): Promise<Party> => newSubOrgParty(proxy!.url, parent, label);

    /** One COMPLETED activity (create_user_tag) in `p`'s organization; its id. */
    async function activity(p: Party, label = "tag"): Promise<string> {
      const res = await p.sdk.createUserTag({ userTagName: uniq(label), userIds: [] });
      assert.equal(res.activity.status, COMPLETED);
      return res.activity.id;
    }

    async function createEndpoint(p: Party, url: string, name = uniq("endpoint")): Promise<string> {
      const res = await p.sdk.createWebhookEndpoint({ url, name, subscriptions: [{ eventType: "ACTIVITY_UPDATES" }] });
      assert.equal(res.activity.status, COMPLETED);
      assert.match(res.endpointId, UUID);
      return res.endpointId;
    }

    /** Waits until `p` holds at least `n` receipts for `activityId`; returns them in arrival order. */
    const received = (p: string, activityId: string, n = 1, timeoutMs?: number, on: WebhookSink = sink): Promise<Receipt[]> =>
      until(
        `${n} delivery(ies) of activity ${activityId} at ${p}`,
        () => {
          const got = forActivity(on.at(p), activityId);
          return got.length >= n ? got : undefined;
        },
        {
          timeoutMs,
          describe: () => on.at(p).map((r) => ({ activity: activityOf(r), event: r.headers["x-service-event-id"], answered: r.answered })),
        },
      );

    /** Waits until the endpoint's deliveries satisfy `ok`; returns them. */
    const deliveriesUntil = (
      endpointId: string,
      what: string,
      ok: (rows: DeliveryRow[]) => boolean,
      timeoutMs?: number,
    ): Promise<DeliveryRow[]> => {
      let last: DeliveryRow[] = [];
      return until(
        `deliveries of endpoint ${endpointId}: ${what}`,
        async () => {
          last = await db().deliveries(endpointId);
          return ok(last) ? last : undefined;
        },
        { timeoutMs, describe: () => last },
      );
    };

    /** The one ACTIVITY_UPDATES event of a completed activity (written with it). */
    async function onlyEvent(activityId: string): Promise<string> {
      const events = await db().events(activityId);
      assert.equal(events.length, 1, `events of ${activityId}: ${JSON.stringify(events)}`);
      assert.equal(events[0]!.event_type, "ACTIVITY_UPDATES");
      return events[0]!.id;
    }

    before(async () => {
      inst = await newInstance(engine.name, SERVER_ENV);
      init = await sigilInit(inst, ["--name", "Webhooks Org"]);
      server = await startServer(inst);
      proxy = new RecordingProxy(server.url);
      await proxy.start();
      await sink.start();
      tables = await openWebhookTables(inst);
      root = party({ publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey }, init.userId, init.organizationId);
    });

    after(async () => {
      await sink.stop();
      for (const s of extraSinks) await s.stop();
      await proxy?.stop();
      await server?.stop();
      await tables?.close();
      await inst?.cleanup();
    });

    it("1. endpoint create/update/list/delete through the SDK; the URL policy, with and without loopback mode", async () => {
      const org = await newOrg("crud");
      const url1 = sink.url("/crud-1");
      const first = await org.sdk.createWebhookEndpoint({ url: url1, name: "first", subscriptions: [{ eventType: "ACTIVITY_UPDATES" }] });
      assert.equal(first.activity.status, COMPLETED);
      assert.equal(first.activity.type, "ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT");
      const ep1 = first.endpointId;
      assert.match(ep1, UUID);
      const view1 = first.webhookEndpoint as AnyRec;
      assert.equal(view1.endpointId, ep1);
      assert.equal(view1.organizationId, org.orgId);
      assert.equal(view1.url, url1);
      assert.equal(view1.name, "first");
      assert.equal(view1.isActive, true);
      assert.deepEqual(view1.subscriptions, [{ eventType: "ACTIVITY_UPDATES" }]);

      // Without subscriptions: ACTIVITY_UPDATES.
      const second = await org.http.createWebhookEndpoint({
        type: "ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT",
        timestampMs: String(Date.now()),
        organizationId: org.orgId,
        parameters: { url: sink.url("/crud-2"), name: "second" },
      });
      const ep2 = (second.activity.result as AnyRec).createWebhookEndpointResult.endpointId as string;
      assert.match(ep2, UUID);
      assert.notEqual(ep2, ep1);

      let listed = (await org.sdk.listWebhookEndpoints({ organizationId: org.orgId })).webhookEndpoints as AnyRec[];
      assert.deepEqual(
        listed.map((e) => [e.endpointId, e.organizationId, e.url, e.name, e.isActive, e.subscriptions]),
        [
          [ep1, org.orgId, url1, "first", true, [{ eventType: "ACTIVITY_UPDATES" }]],
          [ep2, org.orgId, sink.url("/crud-2"), "second", true, [{ eventType: "ACTIVITY_UPDATES" }]],
        ],
        "oldest first",
      );

      // Update url and name; pause the second one.
      const url1b = sink.url("/crud-1b");
      const upd = await org.sdk.updateWebhookEndpoint({ endpointId: ep1, url: url1b, name: "renamed" });
      assert.equal(upd.activity.status, COMPLETED);
      assert.equal(upd.endpointId, ep1);
      assert.equal((upd.webhookEndpoint as AnyRec).url, url1b);
      assert.equal((upd.webhookEndpoint as AnyRec).name, "renamed");
      assert.equal((upd.webhookEndpoint as AnyRec).isActive, true);
      const paused = await org.sdk.updateWebhookEndpoint({ endpointId: ep2, isActive: false });
      assert.equal((paused.webhookEndpoint as AnyRec).isActive, false);
      listed = (await org.sdk.listWebhookEndpoints({ organizationId: org.orgId })).webhookEndpoints as AnyRec[];
      assert.deepEqual(
        listed.map((e) => [e.endpointId, e.url, e.name, e.isActive]),
        [
          [ep1, url1b, "renamed", true],
          [ep2, sink.url("/crud-2"), "second", false],
        ],
      );

      // Unknown ids, and another organization's endpoint, are not found.
      await fail(org.sdk.updateWebhookEndpoint({ endpointId: randomUUID(), name: "x" }), { status: 404, code: 5 });
      await fail(root.sdk.updateWebhookEndpoint({ endpointId: ep1, name: "hijacked" }), { status: 404, code: 5 });
      await fail(root.sdk.deleteWebhookEndpoint({ endpointId: ep1 }), { status: 404, code: 5 });

      // Bad fields.
      await fail(org.sdk.createWebhookEndpoint({ url: sink.url("/x"), name: "" }), { status: 400, code: 3 });
      await fail(
        org.sdk.createWebhookEndpoint({
          url: sink.url("/x"),
          name: "balances",
          subscriptions: [{ eventType: "BALANCE_CONFIRMED_UPDATES" }],
        }),
        { status: 400, code: 3, includes: "not supported" },
      );

      // The URL policy (loopback mode on: only loopback addresses gain anything).
      const rejected = [
        "http://example.com/hook", // plain http off loopback
        "ftp://example.com/hook",
        "ws://example.com/hook",
        "not a url",
        "https://user:pw@example.com/hook",
        "https://user@example.com/hook",
        "https://10.0.0.1/x",
        "https://172.16.5.4/x",
        "https://192.168.1.20/x",
        "https://100.64.0.1/x",
        "https://169.254.169.254/latest/meta-data/",
        "http://169.254.169.254/latest/meta-data/",
        "https://0.0.0.0/x",
        "https://[fe80::1]/x",
        "https://[fd00::1]/x",
        "https://[::ffff:10.0.0.1]/x",
        "https://[::ffff:169.254.169.254]/x",
        "https://metadata.google.internal/computeMetadata/v1/",
        "https://metadata/x",
        "https://printer.local/x",
        "https://svc.internal/x",
        "https://app.localhost/x",
        "https://exa_mple.com/x",
      ];
      for (const url of rejected) {
        await fail(org.sdk.createWebhookEndpoint({ url, name: "bad" }), { status: 400, code: 3, startsWith: "invalid webhook url" }).catch(
          (e: Error) => {
            throw new Error(`create with ${url}: ${e.message}`);
          },
        );
      }
      await fail(org.sdk.updateWebhookEndpoint({ endpointId: ep1, url: "https://10.0.0.1/x" }), {
        status: 400,
        code: 3,
        startsWith: "invalid webhook url",
      });
      const afterRejections = (await org.sdk.listWebhookEndpoints({ organizationId: org.orgId })).webhookEndpoints as AnyRec[];
      assert.deepEqual(
        afterRejections.map((e) => [e.endpointId, e.url]),
        [
          [ep1, url1b],
          [ep2, sink.url("/crud-2")],
        ],
        "rejected requests changed nothing",
      );

      // Delete.
      const del = await org.sdk.deleteWebhookEndpoint({ endpointId: ep2 });
      assert.equal(del.activity.status, COMPLETED);
      assert.equal(del.endpointId, ep2);
      await fail(org.sdk.deleteWebhookEndpoint({ endpointId: ep2 }), { status: 404, code: 5 });
      listed = (await org.http.listWebhookEndpoints({ organizationId: org.orgId })).webhookEndpoints as AnyRec[];
      assert.deepEqual(
        listed.map((e) => e.endpointId),
        [ep1],
      );
      await org.sdk.deleteWebhookEndpoint({ endpointId: ep1 });
      assert.deepEqual((await org.sdk.listWebhookEndpoints({ organizationId: org.orgId })).webhookEndpoints, []);

      // A server without loopback mode refuses loopback destinations in every spelling.
      const strict = await newInstance(engine.name, { SIGIL_WEBHOOKS_ALLOW_LOOPBACK: "false" });
      let strictServer: RunningServer | undefined;
      try {
        const strictInit = await sigilInit(strict, ["--name", "Strict Org"]);
        strictServer = await startServer(strict);
        const strictProxy = new RecordingProxy(strictServer.url);
        await strictProxy.start();
        try {
          const s = partyFor(
            strictProxy.url,
            { publicKey: strictInit.apiPublicKey, privateKey: strictInit.apiPrivateKey },
            strictInit.userId,
            strictInit.organizationId,
          );
          for (const url of [
            `http://127.0.0.1:${sink.port}/x`,
            "https://127.0.0.1/x",
            "https://127.9.9.9/x",
            "https://2130706433/x", // 127.0.0.1 in decimal
            "https://[::1]/x",
            "https://[::ffff:127.0.0.1]/x",
            "https://localhost/x",
            `http://localhost:${sink.port}/x`,
            "http://example.com/x",
          ]) {
            await expectError(strictProxy, s.sdk.createWebhookEndpoint({ url, name: "loop" }), {
              status: 400,
              code: 3,
              startsWith: "invalid webhook url",
            }).catch((e: Error) => {
              throw new Error(`strict server, create with ${url}: ${e.message}`);
            });
          }
          // A public https destination is fine (deleted at once: nothing is ever sent to it).
          const ok = await s.sdk.createWebhookEndpoint({ url: "https://hooks.example.com/sigil?x=1", name: "public" });
          assert.equal(ok.activity.status, COMPLETED);
          await s.sdk.deleteWebhookEndpoint({ endpointId: ok.endpointId });
        } finally {
          await strictProxy.stop();
        }
      } finally {
        await strictServer?.stop();
        await strict.cleanup();
      }
    });

    it("2. deliveries carry the signed headers, verify (library and independent), are the activity; consensus → completed is two events", async () => {
      // The key set: exactly the fields of docs/webhooks.md §3, cacheable.
      const jwks = await fetchJwks(server!.url);
      assert.equal(jwks.status, 200);
      assert.match(String(jwks.contentType), /^application\/json/);
      const maxAge = /(?:^|[,\s])max-age=(\d+)(?:$|[,\s])/.exec(String(jwks.cacheControl));
      assert.ok(maxAge && Number(maxAge[1]) > 0, `Cache-Control ${jwks.cacheControl}`);
      assert.deepEqual(Object.keys(jwks.json), ["keys"]);
      const keys = jwks.json.keys as Jwk[];
      assert.ok(keys.length >= 1);
      for (const k of keys) {
        assert.deepEqual(Object.keys(k).sort(), [
          "alg",
          "crv",
          "kid",
          "kty",
          "service_signature_algorithm",
          "service_signature_version",
          "use",
          "x",
        ]);
        assert.deepEqual(
          { kty: k.kty, crv: k.crv, alg: k.alg, use: k.use, a: k.service_signature_algorithm, v: k.service_signature_version },
          { kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig", a: "ed25519", v: "v1" },
        );
        assert.match(k.x, /^[A-Za-z0-9_-]{43}$/);
        assert.equal(Buffer.from(k.x, "base64url").length, 32);
      }
      assert.equal(new Set(keys.map((k) => k.kid)).size, keys.length, "kids are unique");

      const org = await newOrg("signed");
      const endpointId = await createEndpoint(org, sink.url("/signed"));
      const before = Date.now();
      const tag = await org.sdk.createUserTag({ userTagName: uniq("signed"), userIds: [] });
      assert.equal(tag.activity.status, COMPLETED);
      const r: Receipt = (await received("/signed", tag.activity.id))[0]!;

      // Headers: the six signed ones once each, plus organization id and event type.
      assert.equal(r.method, "POST");
      assert.match(header(r, "content-type"), /^application\/json/);
      for (const name of [...SIGNED, "x-service-organization-id", "x-service-event-type"]) {
        const n = r.rawHeaders.filter((v, i) => i % 2 === 0 && v.toLowerCase() === name).length;
        assert.equal(n, 1, `${name} appears ${n} times`);
        assert.notEqual(header(r, name), "");
      }
      const eventId = eventIdOf(r);
      assert.equal(eventId, await onlyEvent(tag.activity.id), "X-Service-Event-Id is the event's id");
      assert.equal(header(r, "x-service-signature-algorithm"), "ed25519");
      assert.equal(header(r, "x-service-signature-version"), "v1");
      assert.match(header(r, "x-service-signature"), /^[0-9a-f]{128}$/);
      const ts = Number(header(r, "x-service-timestamp"));
      assert.match(header(r, "x-service-timestamp"), /^[0-9]{13}$/);
      assert.ok(ts >= before - 1000 && ts <= r.receivedAt + 1000, `timestamp ${ts} vs submit at ${before}, received at ${r.receivedAt}`);
      assert.equal(header(r, "x-service-organization-id"), org.orgId);
      assert.equal(header(r, "x-service-event-type"), "ACTIVITY_UPDATES");
      assert.ok(
        keys.some((k) => k.kid === header(r, "x-service-signature-key-id")),
        "the signing kid is published",
      );

      // Both verifiers accept it.
      const lib = createWebhookVerifier({ jwksUrl: jwksUrl() });
      const v = await verifyWith(lib, r);
      assertVerified(v, r);
      assert.equal(v.ok && v.organizationId, org.orgId);
      assert.equal(v.ok && v.eventType, "ACTIVITY_UPDATES");
      assert.equal(independentVerify(keys, r), "ok");

      // Only the exact bytes verify.
      const parsed = JSON.parse(r.body.toString("utf8")) as AnyRec;
      const roundTrip = Buffer.from(JSON.stringify(parsed));
      const roundTripOk = roundTrip.equals(r.body);
      assert.equal(
        (await verifyWith(lib, { headers: r.headers, body: roundTrip })).ok,
        roundTripOk,
        "JSON.stringify(JSON.parse(body)) verifies iff it is byte-identical",
      );
      assert.equal(independentVerify(keys, { headers: r.headers, body: roundTrip }) === "ok", roundTripOk);
      const reversed = Object.fromEntries(Object.entries(parsed).reverse());
      const variants: [string, Buffer][] = [
        ["pretty-printed", Buffer.from(JSON.stringify(parsed, null, 2))],
        ["keys reordered", Buffer.from(JSON.stringify(reversed))],
        ["trailing newline", Buffer.concat([r.body, Buffer.from("\n")])],
        ["status changed", Buffer.from(r.body.toString("utf8").replace(COMPLETED, "ACTIVITY_STATUS_FAILED"))],
      ];
      for (const [what, body] of variants) {
        assert.ok(!body.equals(r.body), what);
        const res = await verifyWith(lib, { headers: r.headers, body });
        assert.equal(res.ok ? "ok" : res.reason, "bad_signature", `library, ${what}`);
        assert.equal(independentVerify(keys, { headers: r.headers, body }), "bad_signature", `independent, ${what}`);
      }
      // Headers are bound too: another event id, timestamp or a flipped signature bit fails.
      const flipped = header(r, "x-service-signature").replace(/^./, (c) => (c === "0" ? "1" : "0"));
      for (const [name, value] of [
        ["x-service-event-id", randomUUID()],
        ["x-service-timestamp", String(ts + 1)],
        ["x-service-signature", flipped],
      ] as const) {
        const headers = { ...r.headers, [name]: value };
        const res = await verifyWith(lib, { headers, body: r.body });
        assert.equal(res.ok ? "ok" : res.reason, "bad_signature", `library, ${name} changed`);
        assert.equal(independentVerify(keys, { headers, body: r.body }), "bad_signature", `independent, ${name} changed`);
      }

      // The body is the activity, exactly as get_activity returns it once completed.
      assert.equal(parsed.id, tag.activity.id);
      assert.equal(parsed.organizationId, org.orgId);
      assert.equal(parsed.status, COMPLETED);
      assert.equal(parsed.type, "ACTIVITY_TYPE_CREATE_USER_TAG");
      assert.equal(parsed.fingerprint, tag.activity.fingerprint);
      assert.deepEqual(parsed.result, { createUserTagResult: { userTagId: tag.userTagId, userIds: [] } });
      const got = await org.http.getActivity({ organizationId: org.orgId, activityId: tag.activity.id });
      assert.deepEqual(parsed, got.activity);

      // Consensus: 2 approvals needed. Submitted → CONSENSUS_NEEDED event; approved → COMPLETED event.
      const tagId = (await org.sdk.createUserTag({ userTagName: "approvers", userIds: [] })).userTagId;
      const users: Party[] = [];
      for (const name of ["alice", "bob"]) {
        const key = generateP256KeyPair();
        const res = await org.sdk.createUsers({
          users: [
            {
              userName: name,
              apiKeys: [{ apiKeyName: `${name}-key`, publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
              authenticators: [],
              oauthProviders: [],
              userTags: [tagId],
            },
          ],
        });
        users.push(party(key, res.userIds[0]!, org.orgId));
      }
      const [alice, bob] = users as [Party, Party];
      await org.sdk.createPolicy({
        policyName: "two approvers for tags",
        effect: "EFFECT_ALLOW",
        consensus: `approvers.filter(u, u.tags.contains('${tagId}')).count() >= 2`,
        condition: "activity.kind == 'CREATE_USER_TAG'",
        notes: "",
      });
      const pending = (
        await alice.http.createUserTag({
          type: "ACTIVITY_TYPE_CREATE_USER_TAG",
          timestampMs: String(Date.now()),
          organizationId: org.orgId,
          parameters: { userTagName: uniq("voted"), userIds: [] },
        })
      ).activity as AnyRec;
      assert.equal(pending.status, CONSENSUS);
      const [c1] = await received("/signed", pending.id);
      assert.equal(bodyOf(c1!).status, CONSENSUS, "the first event is the CONSENSUS_NEEDED one");
      const approved = (
        await bob.http.approveActivity({
          type: "ACTIVITY_TYPE_APPROVE_ACTIVITY",
          timestampMs: String(Date.now()),
          organizationId: org.orgId,
          parameters: { fingerprint: pending.fingerprint },
        })
      ).activity as AnyRec;
      assert.equal(approved.status, COMPLETED);
      await received("/signed", pending.id, 2);
      // Marker: a later event delivered to the same endpoint; nothing about `pending` can follow.
      const marker = await activity(org, "marker");
      await received("/signed", marker);
      const both = forActivity(sink.at("/signed"), pending.id);
      assert.deepEqual(
        both.map((x) => bodyOf(x).status),
        [CONSENSUS, COMPLETED],
        "two events, in order",
      );
      const [e1, e2] = both.map(eventIdOf) as [string, string];
      assert.notEqual(e1, e2, "distinct event ids");
      assert.deepEqual(
        (await db().events(pending.id)).map((e) => e.id),
        [e1, e2],
      );
      for (const x of both) {
        assertVerified(await verifyWith(lib, x), x);
        assert.equal(independentVerify((await fetchJwks(server!.url)).json.keys as Jwk[], x), "ok");
      }
      const completedBody = bodyOf(both[1]!);
      assert.equal(completedBody.votes.length, 2);
      assert.deepEqual(completedBody, (await org.http.getActivity({ organizationId: org.orgId, activityId: pending.id })).activity);
      assert.equal(bodyOf(both[0]!).votes.length, 1);

      // Every delivery to this endpoint is recorded delivered, once, with a 200.
      const rows = await deliveriesUntil(endpointId, "all delivered", (rs) => rs.length > 0 && rs.every((d) => d.status === "delivered"));
      const seen = sink.at("/signed").map(eventIdOf);
      assert.deepEqual(
        rows.map((d) => d.event_id),
        seen,
        "received exactly the recorded deliveries, in order",
      );
      assert.ok(rows.every((d) => d.attempts === 1 && d.last_status === 200));
    });

    it("3. a sub-organization's events reach its parent's endpoint; the sub-organization's endpoint never sees the parent's", async () => {
      const parent = await newOrg("parent");
      const child = await newOrg("child", parent);
      const parentEp = await createEndpoint(parent, sink.url("/parent"));
      const childEp = await createEndpoint(child, sink.url("/child"));

      const inChild = await activity(child, "in-child");
      const [atParent] = await received("/parent", inChild);
      const [atChild] = await received("/child", inChild);
      const eventId = await onlyEvent(inChild);
      for (const r of [atParent!, atChild!]) {
        assert.equal(eventIdOf(r), eventId, "one event, fanned out to both endpoints");
        assert.equal(header(r, "x-service-organization-id"), child.orgId);
        assert.equal(bodyOf(r).organizationId, child.orgId);
      }
      assert.deepEqual(atParent!.body, atChild!.body);
      assert.deepEqual((await db().deliveriesOfEvent(eventId)).map((d) => d.endpoint_id).sort(), [parentEp, childEp].sort());

      const inParent = await activity(parent, "in-parent");
      const [r] = await received("/parent", inParent);
      assert.equal(header(r!, "x-service-organization-id"), parent.orgId);
      const parentEvent = await onlyEvent(inParent);
      // Marker on the child's endpoint: a later child event.
      const later = await activity(child, "later");
      await received("/child", later);
      await received("/parent", later);
      assert.deepEqual(forActivity(sink.at("/child"), inParent), [], "the child's endpoint got the parent's event");
      assert.deepEqual(
        (await db().deliveriesOfEvent(parentEvent)).map((d) => d.endpoint_id),
        [parentEp],
      );
      assert.ok(
        sink.at("/child").every((x) => header(x, "x-service-organization-id") === child.orgId),
        "only the child's events at the child's endpoint",
      );
      const lib = createWebhookVerifier({ jwksUrl: jwksUrl() });
      for (const x of [...sink.at("/parent"), ...sink.at("/child")]) assertVerified(await verifyWith(lib, x), x);
    });

    it("4. key rotation: new deliveries carry the new kid and verify; old ones verify until the old key is retired", async () => {
      const org = await newOrg("rotation");
      await createEndpoint(org, sink.url("/rotation"));
      let jwksFetches = 0;
      const counting = createWebhookVerifier({
        jwksUrl: jwksUrl(),
        // Any unknown kid may be refetched at once (the default spaces refetches 10 s apart).
        minRefetchIntervalMs: 0,
        fetch: (url, init) => {
          jwksFetches++;
          return fetch(url, init);
        },
      });

      const a1 = await activity(org, "old-key");
      const [old] = await received("/rotation", a1);
      const oldKid = header(old!, "x-service-signature-key-id");
      assertVerified(await verifyWith(counting, old!), old!);
      assert.equal(jwksFetches, 1);

      const rotated = JSON.parse(
        (await run(process.execPath, [BIN, "webhook-keys", "rotate"], { env: inst!.env, cwd: ROOT })).stdout,
      ) as AnyRec;
      const newKid = String(rotated.activeKeyId);
      assert.notEqual(newKid, oldKid);
      let published = (await fetchJwks(server!.url)).json.keys as Jwk[];
      assert.ok(
        published.some((k) => k.kid === newKid),
        "the new key is published",
      );
      assert.ok(
        published.some((k) => k.kid === oldKid),
        "the old key stays published",
      );
      const listedKeys = JSON.parse(
        (await run(process.execPath, [BIN, "webhook-keys", "list"], { env: inst!.env, cwd: ROOT })).stdout,
      ) as AnyRec;
      const statusOf = (kid: string) => (listedKeys.keys as AnyRec[]).find((k) => k.keyId === kid)?.status;
      assert.equal(statusOf(newKid), "active");
      assert.equal(statusOf(oldKid), "published");

      const a2 = await activity(org, "new-key");
      const [fresh] = await received("/rotation", a2);
      assert.equal(header(fresh!, "x-service-signature-key-id"), newKid, "signed by the new key");
      assertVerified(await verifyWith(counting, fresh!), fresh!);
      assert.equal(jwksFetches, 2, "one refetch for the unknown kid");
      assertVerified(await verifyWith(counting, fresh!), fresh!);
      assert.equal(jwksFetches, 2, "then served from the cache");
      assert.equal(independentVerify(published, fresh!), "ok");
      // The delivery signed earlier still verifies: its key is still published.
      assertVerified(await verifyWith(counting, old!), old!);
      assertVerified(await verifyWith(createWebhookVerifier({ jwksUrl: jwksUrl() }), old!), old!);
      assert.equal(independentVerify(published, old!), "ok");

      // The active key cannot be retired.
      await assert.rejects(run(process.execPath, [BIN, "webhook-keys", "retire", newKid], { env: inst!.env, cwd: ROOT }));
      const retired = JSON.parse(
        (await run(process.execPath, [BIN, "webhook-keys", "retire", oldKid], { env: inst!.env, cwd: ROOT })).stdout,
      ) as AnyRec;
      assert.equal(retired.retiredKeyId, oldKid);
      published = (await fetchJwks(server!.url)).json.keys as Jwk[];
      assert.ok(!published.some((k) => k.kid === oldKid), "the retired key is no longer published");
      assert.ok(published.some((k) => k.kid === newKid));

      const afterRetire = createWebhookVerifier({ jwksUrl: jwksUrl() });
      const res = await verifyWith(afterRetire, old!);
      assert.equal(res.ok ? "ok" : res.reason, "missing_key", "a delivery signed by a retired key is refused");
      assert.equal(independentVerify(published, old!), "missing_key");
      assertVerified(await verifyWith(afterRetire, fresh!), fresh!);
      // And deliveries keep flowing with the new key.
      const a3 = await activity(org, "after-retire");
      const [third] = await received("/rotation", a3);
      assert.equal(header(third!, "x-service-signature-key-id"), newKid);
      assertVerified(await verifyWith(afterRetire, third!), third!);
    });

    it("5. deleting or pausing an endpoint cancels its pending deliveries and stops new ones", async () => {
      // Deleting: the endpoint's receiver is down, so its deliveries stay pending (retrying).
      const org = await newOrg("delete");
      const downPort = await freePort();
      const doomed = await createEndpoint(org, `http://127.0.0.1:${downPort}/doomed`);
      const markerEp = await createEndpoint(org, sink.url("/delete-marker"));
      const acts = [await activity(org), await activity(org), await activity(org)];
      await received("/delete-marker", acts[2]!);
      // (Its queue also holds the event of the marker endpoint's creation, ahead of these.)
      const doomedEvents = await Promise.all(acts.map(onlyEvent));
      const queued = await deliveriesUntil(
        doomed,
        "the 3 activities' deliveries pending, the first delivery retried",
        (rs) =>
          doomedEvents.every((e) => rs.some((d) => d.event_id === e)) && rs.every((d) => d.status === "pending") && rs[0]!.attempts >= 2,
      );
      const del = await org.sdk.deleteWebhookEndpoint({ endpointId: doomed });
      assert.equal(del.activity.status, COMPLETED);
      let rows = await db().deliveries(doomed);
      assert.deepEqual(
        rows.map((d) => [d.event_id, d.status]),
        queued.map((d) => [d.event_id, "cancelled"]),
        "pending deliveries are cancelled with the delete",
      );
      const lateSink = await new WebhookSink().start(downPort);
      extraSinks.push(lateSink);
      const afterDelete = await activity(org, "after-delete");
      await received("/delete-marker", afterDelete);
      assert.deepEqual(
        (await db().deliveriesOfEvent(await onlyEvent(afterDelete))).map((d) => d.endpoint_id),
        [markerEp],
        "a deleted endpoint gets no deliveries",
      );
      rows = await db().deliveries(doomed);
      assert.deepEqual(
        rows.map((d) => [d.event_id, d.status]),
        queued.map((d) => [d.event_id, "cancelled"]),
        "and they stay cancelled",
      );

      // Pausing: same, and resuming does not resend what was cancelled.
      const porg = await newOrg("pause");
      const pausedPort = await freePort();
      const pausable = await createEndpoint(porg, `http://127.0.0.1:${pausedPort}/paused`);
      await createEndpoint(porg, sink.url("/pause-marker"));
      const pacts = [await activity(porg), await activity(porg)];
      await received("/pause-marker", pacts[1]!);
      const pausedEvents = await Promise.all(pacts.map(onlyEvent));
      const pQueued = await deliveriesUntil(
        pausable,
        "the 2 activities' deliveries pending, the first delivery retried",
        (rs) =>
          pausedEvents.every((e) => rs.some((d) => d.event_id === e)) && rs.every((d) => d.status === "pending") && rs[0]!.attempts >= 2,
      );
      const pause = await porg.sdk.updateWebhookEndpoint({ endpointId: pausable, isActive: false });
      assert.equal((pause.webhookEndpoint as AnyRec).isActive, false);
      assert.deepEqual(
        (await db().deliveries(pausable)).map((d) => [d.event_id, d.status]),
        pQueued.map((d) => [d.event_id, "cancelled"]),
        "pausing cancels pending deliveries",
      );
      const pausedSink = await new WebhookSink().start(pausedPort);
      extraSinks.push(pausedSink);
      const whilePaused = await activity(porg, "while-paused");
      await received("/pause-marker", whilePaused);
      assert.equal((await db().deliveriesOfEvent(await onlyEvent(whilePaused))).filter((d) => d.endpoint_id === pausable).length, 0);

      const resume = await porg.sdk.updateWebhookEndpoint({ endpointId: pausable, isActive: true });
      assert.equal((resume.webhookEndpoint as AnyRec).isActive, true);
      const afterResume = await activity(porg, "after-resume");
      await received("/paused", afterResume, 1, undefined, pausedSink);
      const resumedRows = await deliveriesUntil(
        pausable,
        "the resumed ones delivered",
        (rs) => rs.filter((d) => d.status === "delivered").length === 2,
      );
      assert.deepEqual(
        resumedRows.map((d) => d.status),
        [...pQueued.map(() => "cancelled"), "delivered", "delivered"],
        "cancelled deliveries stay cancelled after resuming",
      );
      assert.deepEqual(
        pausedSink.at("/paused").map(activityOf),
        [resume.activity.id, afterResume],
        "after resuming: only events written after it (the resume itself, then the next activity)",
      );
      assert.deepEqual(lateSink.receipts, [], "nothing ever reached the deleted endpoint's receiver");
    });

    it("6a. receiver down for a while: every event delivered exactly once, in order, none lost", async () => {
      const org = await newOrg("outage");
      const port = await freePort();
      const ep = await createEndpoint(org, `http://127.0.0.1:${port}/outage`);
      const acts: string[] = [];
      for (let i = 0; i < 5; i++) acts.push(await activity(org, `outage-${i}`));
      const events = await Promise.all(acts.map(onlyEvent));
      await deliveriesUntil(
        ep,
        "5 pending, the first retried at least twice",
        (rs) => rs.length === 5 && rs.every((d) => d.status === "pending") && rs[0]!.attempts >= 3,
      );
      const pendingRows = await db().deliveries(ep);
      assert.deepEqual(
        pendingRows.map((d) => d.event_id),
        events,
        "deliveries queue in event order",
      );
      assert.ok(pendingRows[0]!.last_error, "the refused connection is recorded");
      assert.equal(pendingRows[0]!.last_status, null);
      assert.ok(
        pendingRows.slice(1).every((d) => d.attempts === 0),
        "later deliveries wait behind the first",
      );

      const back = await new WebhookSink().start(port);
      extraSinks.push(back);
      const rows = await deliveriesUntil(
        ep,
        "all 5 delivered",
        (rs) => rs.length === 5 && rs.every((d) => d.status === "delivered"),
        90_000,
      ); // the head may be in a backoff of several seconds when the receiver returns
      assert.deepEqual(back.receipts.map(eventIdOf), events, "each event exactly once, in activity order");
      assert.deepEqual(back.receipts.map(activityOf), acts);
      // attempts counts an attempt when it is claimed: the third one seen above may still have
      // been in flight when the receiver came back, and succeeded.
      assert.ok(rows[0]!.attempts >= Math.max(3, pendingRows[0]!.attempts), `first delivery attempts: ${rows[0]!.attempts}`);
      assert.ok(rows.every((d) => d.last_status === 200));
      const lib = createWebhookVerifier({ jwksUrl: jwksUrl() });
      for (const r of back.receipts) assertVerified(await verifyWith(lib, r), r);
    });

    it("6b. 500 then 200: delivered once, two attempts with fresh timestamp and signature, same event id", async () => {
      const org = await newOrg("flaky");
      const ep = await createEndpoint(org, sink.url("/flaky"));
      const failedOnce = new Set<string>();
      sink.on("/flaky", (r) => {
        const id = eventIdOf(r);
        if (failedOnce.has(id)) return 200;
        failedOnce.add(id);
        return 500;
      });
      const a = await activity(org, "flaky");
      const eventId = await onlyEvent(a);
      const rows = await deliveriesUntil(ep, "delivered", (rs) => rs.length === 1 && rs[0]!.status === "delivered");
      assert.equal(rows[0]!.attempts, 2);
      assert.equal(rows[0]!.last_status, 200);
      const marker = await activity(org, "flaky-marker");
      await received("/flaky", marker, 2); // it too fails once first
      const attempts = forActivity(sink.at("/flaky"), a);
      assert.deepEqual(
        attempts.map((r) => r.answered),
        [500, 200],
        "one retry, then never again",
      );
      const [t1, t2] = attempts as [Receipt, Receipt];
      assert.equal(eventIdOf(t1), eventId);
      assert.equal(eventIdOf(t2), eventId, "same event id on the retry");
      assert.ok(Number(header(t2, "x-service-timestamp")) > Number(header(t1, "x-service-timestamp")), "fresh timestamp");
      assert.notEqual(header(t2, "x-service-signature"), header(t1, "x-service-signature"), "fresh signature");
      assert.deepEqual(t1.body, t2.body, "same body");
      const lib = createWebhookVerifier({ jwksUrl: jwksUrl() });
      for (const r of attempts) assertVerified(await verifyWith(lib, r), r);
      // The first attempt's signature does not carry over to the second attempt's timestamp.
      const mixed = { ...t2.headers, "x-service-signature": header(t1, "x-service-signature") };
      const res = await verifyWith(lib, { headers: mixed, body: t2.body });
      assert.equal(res.ok ? "ok" : res.reason, "bad_signature");
    });

    it("6c. 410, 429 (and a redirect) are terminal: failed after one attempt, status recorded, never retried", async () => {
      const org = await newOrg("terminal");
      const gone = await createEndpoint(org, sink.url("/gone"));
      const busy = await createEndpoint(org, sink.url("/busy"));
      const moved = await createEndpoint(org, sink.url("/moved"));
      // Only the event of the activity named `doomedName` is refused; everything else is taken.
      const doomedName = uniq("terminal");
      const refuse = (r: Receipt, answer: Answer): Answer =>
        bodyOf(r).intent?.createUserTagIntent?.userTagName === doomedName ? answer : 200;
      sink.on("/gone", (r) => refuse(r, 410));
      sink.on("/busy", (r) => refuse(r, 429));
      sink.on("/moved", (r) => refuse(r, { status: 302, headers: { location: sink.url("/moved-target") } }));
      const res = await org.sdk.createUserTag({ userTagName: doomedName, userIds: [] });
      const a = res.activity.id;
      const eventId = await onlyEvent(a);
      const expected: [string, string, number][] = [
        [gone, "/gone", 410],
        [busy, "/busy", 429],
        [moved, "/moved", 302],
      ];
      let rows: DeliveryRow[] = [];
      await until(
        "the three deliveries of the event are final",
        async () => {
          rows = await db().deliveriesOfEvent(eventId);
          return rows.length === 3 && rows.every((d) => d.status !== "pending");
        },
        { describe: () => rows },
      );
      for (const [ep, , status] of expected) {
        const row = rows.find((d) => d.endpoint_id === ep);
        assert.ok(row, `no delivery to ${ep}`);
        assert.deepEqual([row.status, row.attempts, row.last_status], ["failed", 1, status], `endpoint answering ${status}`);
      }
      // Marker: the next event is delivered to each; the failed one never came again.
      const next = await activity(org, "after-terminal");
      const nextEvent = await onlyEvent(next);
      for (const [ep, p, status] of expected) {
        await received(p, next);
        const attempts = forActivity(sink.at(p), a);
        assert.deepEqual(
          attempts.map((r) => [eventIdOf(r), r.answered]),
          [[eventId, status]],
          `${p}: attempts of the failed event`,
        );
        const all = await deliveriesUntil(ep, "the next one delivered", (rs) =>
          rs.some((d) => d.event_id === nextEvent && d.status === "delivered"),
        );
        assert.deepEqual(
          all.filter((d) => d.event_id === eventId || d.event_id === nextEvent).map((d) => [d.status, d.attempts]),
          [
            ["failed", 1],
            ["delivered", 1],
          ],
        );
      }
      assert.deepEqual(sink.at("/moved-target"), [], "redirects are not followed");
    });

    it(
      "6e. two servers on one PostgreSQL share the outbox: every event once, in order",
      { skip: engine.name !== "postgres" && "several workers share an outbox only on PostgreSQL (SQLite is single-node)" },
      async () => {
        const second = await startServer(inst!);
        try {
          const org = await newOrg("shared");
          const ep = await createEndpoint(org, sink.url("/shared"));
          const acts: string[] = [];
          for (let i = 0; i < 30; i++) acts.push(await activity(org, `shared-${i}`));
          const events: string[] = [];
          for (const a of acts) events.push(await onlyEvent(a));
          await deliveriesUntil(ep, "all 30 delivered", (rs) => rs.length === 30 && rs.every((d) => d.status === "delivered"), 60_000);
          const ids = sink.at("/shared").map(eventIdOf);
          assert.deepEqual(ids, events, "each event exactly once, in event order, across both dispatchers");
          assert.ok(
            (await db().deliveries(ep)).every((d) => d.attempts === 1),
            "no attempt was taken twice",
          );
        } finally {
          await second.stop();
        }
      },
    );

    it("7. twenty endpoints in one organization (the maximum), next to other organizations' endpoints: every one receives every event, in order", async () => {
      // The instance already holds the endpoints of the tests above; these come on top.
      const big = await newOrg("many");
      const other = await newOrg("many-other");
      const bigPaths = Array.from({ length: 20 }, (_, i) => `/many-${i}`);
      const otherPaths = Array.from({ length: 3 }, (_, i) => `/many-other-${i}`);
      for (const p of bigPaths) await createEndpoint(big, sink.url(p));
      for (const p of otherPaths) await createEndpoint(other, sink.url(p));
      const listed = (await big.sdk.listWebhookEndpoints({ organizationId: big.orgId })).webhookEndpoints as AnyRec[];
      assert.equal(listed.length, 20);
      const bigActs = [await activity(big, "many-a"), await activity(big, "many-b"), await activity(big, "many-c")];
      const otherActs = [await activity(other, "many-other-a"), await activity(other, "many-other-b")];
      for (const [paths, acts] of [
        [bigPaths, bigActs],
        [otherPaths, otherActs],
      ] as const) {
        for (const p of paths) {
          await received(p, acts.at(-1)!, 1, 30_000);
          const got = sink
            .at(p)
            .map(activityOf)
            .filter((a) => acts.includes(a));
          assert.deepEqual(got, acts, `${p}: each activity once, in order`);
        }
      }
    });

    it("8. a receiver that trickles its answer is cut at the attempt's total deadline and retried; no attempt is ever held by two workers", async () => {
      // On PostgreSQL a second server shares the outbox: with an inactivity timeout only, the
      // trickle outlived the lease and the other server claimed the same attempt.
      const second = engine.name === "postgres" ? await startServer(inst!) : undefined;
      try {
        const org = await newOrg("trickle");
        const ep = await createEndpoint(org, sink.url("/trickle"));
        const trickled = new Set<string>();
        // First attempt of each event: 200 at once, then a byte every 200 ms for 12 s (the
        // 2 s deadline and the 7 s lease both end inside it). Later attempts: 200.
        sink.on("/trickle", (r) => {
          const id = eventIdOf(r);
          if (trickled.has(id)) return 200;
          trickled.add(id);
          return { trickle: { status: 200, everyMs: 200, forMs: 12_000 } };
        });
        const a = await activity(org, "trickle");
        const eventId = await onlyEvent(a);
        const rows = await deliveriesUntil(
          ep,
          "delivered after the cut attempt",
          (rs) => rs.length === 1 && rs[0]!.status === "delivered",
          30_000,
        );
        const attempts = forActivity(sink.at("/trickle"), a);
        assert.equal(attempts.length, 2, `attempts: ${JSON.stringify(attempts.map((r) => [r.receivedAt, r.closedAt, r.answered]))}`);
        assert.equal(rows[0]!.attempts, 2, "one attempt record per request the receiver saw");
        const [cut, retried] = attempts as [Receipt, Receipt];
        assert.ok(cut.closedAt, "the trickled exchange was closed");
        const held = cut.closedAt! - cut.receivedAt;
        assert.ok(held < 2_000 + 1_000, `the trickled answer was cut at the 2 s deadline (held ${held} ms)`);
        assert.ok(held > 500, `and only then (held ${held} ms): an inactivity timeout never fires on a trickle`);
        assert.ok(retried.receivedAt >= cut.closedAt!, "the retry came after the cut attempt had ended: never two at once");
        assert.equal(eventIdOf(retried), eventId);
        // The attempts as the deliveries query shows them.
        const res = await org.http.request<AnyRec, AnyRec>("/public/v1/query/list_webhook_deliveries", {
          organizationId: org.orgId,
          endpointId: ep,
        });
        const view = (res.webhookDeliveries as AnyRec[])[0]!;
        assert.equal(view.eventId, eventId);
        assert.equal(view.status, "WEBHOOK_DELIVERY_STATUS_DELIVERED");
        assert.deepEqual(
          (view.attempts as AnyRec[]).map((t) => [t.attempt, t.httpStatus, typeof t.error]),
          [
            [1, 200, "string"],
            [2, 200, "undefined"],
          ],
        );
        assert.match(view.attempts[0].error, /deadline/);
        assert.ok(view.attempts[0].durationMs <= 2_500, `cut attempt took ${view.attempts[0].durationMs} ms`);
        // Nothing else arrives for it later (a second worker's late claim would show here).
        const marker = await activity(org, "trickle-marker");
        await received("/trickle", marker, 2);
        assert.equal(forActivity(sink.at("/trickle"), a).length, 2);
      } finally {
        await second?.stop();
      }
    });

    it("6d. the server is SIGKILLed while a delivery is held open: after restart it is attempted again; nothing is lost", async () => {
      const org = await newOrg("crash");
      const ep = await createEndpoint(org, sink.url("/crash"));
      let release!: (status: number) => void;
      const held = new Promise<number>((resolve) => (release = resolve));
      let holdNext = true;
      sink.on("/crash", () => {
        if (!holdNext) return 200;
        holdNext = false;
        return held;
      });
      // The first event's delivery is held; the other two queue behind it. The kill must come
      // before the server's own 2 s attempt timeout would end the held attempt.
      const acts = [await activity(org, "crash-held"), await activity(org, "crash-2"), await activity(org, "crash-3")];
      const events: string[] = [];
      for (const a of acts) events.push(await onlyEvent(a));
      await received("/crash", acts[0]!);
      await deliveriesUntil(ep, "3 deliveries queued", (rs) => rs.length === 3);
      assert.equal(sink.at("/crash").length, 1, "the first attempt is still held open");
      const before = await db().deliveries(ep);
      assert.deepEqual(
        before.map((d) => [d.event_id, d.status, d.attempts]),
        [
          [events[0], "pending", 1],
          [events[1], "pending", 0],
          [events[2], "pending", 0],
        ],
      );

      await server!.kill();
      release(200); // answered only after the sender is gone
      server = await startServer(inst!);
      proxy!.target = server.url; // later tests call the API through the proxy
      const rows = await deliveriesUntil(
        ep,
        "all 3 delivered after the restart",
        (rs) => rs.length === 3 && rs.every((d) => d.status === "delivered"),
        40_000,
      );
      assert.ok(rows[0]!.attempts >= 2, `the held delivery was attempted again (attempts ${rows[0]!.attempts})`);
      assert.deepEqual(
        rows.map((d) => d.event_id),
        events,
      );
      const receipts = sink.at("/crash");
      const ids = receipts.map(eventIdOf);
      assert.equal(ids[0], events[0], "the held attempt");
      assert.ok(ids.filter((id) => id === events[0]).length >= 2, "the held event was sent again");
      assert.equal(ids.filter((id) => id === events[1]).length, 1);
      assert.equal(ids.filter((id) => id === events[2]).length, 1);
      // In order: the held event is completed before the later ones go out.
      const lastOfFirst = ids.lastIndexOf(events[0]!);
      assert.ok(
        lastOfFirst < ids.indexOf(events[1]!) && ids.indexOf(events[1]!) < ids.indexOf(events[2]!),
        `arrival order ${JSON.stringify(ids)}`,
      );
      assert.equal(receipts[lastOfFirst]!.answered, 200);
      assert.notEqual(header(receipts[lastOfFirst]!, "x-service-signature"), header(receipts[0]!, "x-service-signature"));
      const lib = createWebhookVerifier({ jwksUrl: jwksUrl() });
      for (const r of receipts) assertVerified(await verifyWith(lib, r), r);
    });

    it("6f. SIGTERM while a delivery is held open: the attempt is cut, given back uncounted, and the server exits 0 without waiting for the receiver", async () => {
      const org = await newOrg("term");
      const ep = await createEndpoint(org, sink.url("/term"));
      let holdNext = true;
      sink.on("/term", () => {
        if (!holdNext) return 200;
        holdNext = false;
        return new Promise<number>(() => {}); // never answers: only the sender can end it
      });
      const act = await activity(org, "term-held");
      const event = await onlyEvent(act);
      await received("/term", act);
      const signalled = Date.now();
      await server!.stop();
      const exitMs = Date.now() - signalled;
      assert.equal(server!.proc.exitCode, 0, server!.output().slice(-2000));
      // The attempt deadline is 2 s (SERVER_ENV): the shutdown did not wait it out.
      assert.ok(exitMs < 1_500, `exited after ${exitMs} ms`);
      const [given] = await db().deliveries(ep);
      assert.deepEqual([given!.event_id, given!.status, given!.attempts], [event, "pending", 0], "the cut attempt is not counted");
      server = await startServer(inst!);
      proxy!.target = server.url; // later tests call the API through the proxy
      const [row] = await deliveriesUntil(
        ep,
        "delivered after the restart",
        (rs) => rs.length === 1 && rs[0]!.status === "delivered",
        40_000,
      );
      assert.equal(row!.attempts, 1);
      const ids = sink.at("/term").map(eventIdOf);
      assert.deepEqual(ids, [event, event], "the same event id, sent again");
    });
  });
}
