// The in-process test tier: the real app (buildApp), store, migrations and pipeline, built
// inside the test process over a scratch SQLite file or a fresh PostgreSQL database, and
// driven through fastify's `app.inject` — no child process, no socket.
//
// Requests are the SDK's: bodies are built the way @turnkey/sdk-server builds them
// (`{parameters, organizationId, timestampMs, type}`, JSON.stringify'd once) and stamped by
// the real ApiKeyStamper; the headers are the ones its `request` sends. `sdk()` is the
// official TurnkeyServerClient itself with only its transport (`request`) swapped for inject.
import assert from "node:assert/strict";
import { describe, before, after } from "node:test";
import { readFileSync } from "node:fs";
import pino from "pino";
import type { FastifyInstance } from "fastify";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import type { TurnkeyServerClient } from "@turnkey/sdk-server";
import type { Static, TObject } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { CompiledActivity } from "../../src/activities/define.ts";
import { createUsersV4 } from "../../src/activities/users/create_users.ts";
import { createWebhookEndpoint } from "../../src/activities/webhooks/create_webhook_endpoint.ts";
import { buildApp } from "../../src/server/app.ts";
import { webhookUrlPolicy, type WebhookUrlPolicy } from "../../src/webhooks/url-policy.ts";
import type { LoginSettings } from "../../src/logins/settings.ts";
import { openService, type Service } from "../../src/service.ts";
import { insertOrganization, setRootQuorum } from "../../src/store/organizations.ts";
import { addUsers } from "../../src/activities/users/new-users.ts";
import { newId } from "../../src/store/util.ts";
import { generateP256KeyPair, type P256KeyPair } from "../../src/crypto/keygen.ts";
import { engines, newInstance, type EngineSpec, type Instance } from "./server.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>;

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const COMPLETED = "ACTIVITY_STATUS_COMPLETED";
const SDK_VERSION =
  "@turnkey/sdk-server@" +
  (JSON.parse(readFileSync(new URL("../../node_modules/@turnkey/sdk-server/package.json", import.meta.url), "utf8")) as { version: string })
    .version;

/**
 * The official client with its transport swapped for `send`. Loaded on first use:
 * importing @turnkey/sdk-server costs ~0.9 s, more than the rest of a test file's startup.
 */
async function injectedClient(creds: Creds, send: (url: string, body: string, as: Creds) => Promise<Res>): Promise<TurnkeyServerClient> {
  const { TurnkeyServerClient, TurnkeyRequestError } = await import("@turnkey/sdk-server");
  class InjectedClient extends TurnkeyServerClient {
    override async request<TBodyType, TResponseType>(url: string, body: TBodyType): Promise<TResponseType> {
      const res = await send(url, JSON.stringify(body), creds);
      if (res.status >= 400) throw new TurnkeyRequestError(res.json as ConstructorParameters<typeof TurnkeyRequestError>[0]);
      return res.json as TResponseType;
    }
  }
  return new InjectedClient({ apiBaseUrl: "", organizationId: creds.organizationId, stamper: stamperOf(creds) });
}

/** A caller: a user's API key pair in an organization. */
export interface Creds {
  organizationId: string;
  userId: string;
  key: P256KeyPair;
}

export interface Res {
  status: number;
  json: Json;
}

export interface CallOptions {
  as?: Creds;
  /** Defaults to the caller's organization. */
  organizationId?: string;
  timestampMs?: string;
}

export interface Harness {
  engine: EngineSpec["name"];
  app: FastifyInstance;
  service: Service;
  /** The organization `sigil init` would create: root user with one API key, root quorum 1/1. */
  root: Creds;
  /** POST exact bytes with exact headers (no stamp unless given). */
  post(path: string, body: string, headers?: Record<string, string>): Promise<Res>;
  /** POST /public/v1/submit/<op> with the SDK's envelope, stamped by `as` (root by default). */
  submit(op: string, type: string, parameters: Json, opts?: CallOptions): Promise<Res>;
  /** POST /public/v1/query/<op> with `{organizationId, ...body}`, stamped. */
  query(op: string, body?: Json, opts?: CallOptions): Promise<Res>;
  /** The official SDK client (TurnkeyServerClient) over inject; it polls (with sleeps) activities that are not terminal. */
  sdk(as?: Creds): Promise<TurnkeyServerClient>;
  /** Another root organization, bootstrapped like `sigil init`. */
  newOrg(name?: string, userEmail?: string): Promise<Creds>;
  /** What the app calls after commits that wrote webhook events (serve wires the dispatcher's wake). */
  onEvents(fn: (() => void) | undefined): void;
  close(): Promise<void>;
}

/**
 * Bootstraps a root organization exactly as `sigil init` does (src/cli/init.ts): the
 * organization, a root user holding one P-256 API key, root quorum 1/1, in one transaction.
 */
async function bootstrapOrganization(service: Service, name: string, userEmail?: string): Promise<Creds> {
  const key = generateP256KeyPair();
  const now = Date.now();
  const organizationId = newId();
  const userId = await service.store.db.transaction().execute(async (tx) => {
    await insertOrganization(tx, {
      id: organizationId,
      name,
      parent_id: null,
      root_quorum_threshold: 1,
      policy_version: 0,
      settings: "{}",
      created_at: now,
      updated_at: now,
    });
    const [uid] = await addUsers(
      tx,
      organizationId,
      [
        {
          userName: "root",
          userEmail,
          apiKeys: [{ apiKeyName: "root", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
          authenticators: [],
          oauthProviders: [],
        },
      ],
      now,
      "root user",
    );
    await setRootQuorum(tx, organizationId, [uid!]);
    return uid!;
  });
  return { organizationId, userId, key };
}

const stamperOf = (c: Creds) => new ApiKeyStamper({ apiPublicKey: c.key.publicKey, apiPrivateKey: c.key.privateKey });

function parse(text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return { text };
  }
}

export interface InprocOptions {
  /** Sessions, passkeys, OTP delivery (default: none configured). */
  logins?: LoginSettings;
  /** Settings of the service's environment beyond the instance's own (e.g. SIGIL_TVC_IMAGE_ROOT). */
  env?: NodeJS.ProcessEnv;
}

/**
 * Harness options for suites that deliver webhooks to a loopback receiver: the development
 * setting (SIGIL_WEBHOOKS_ALLOW_LOOPBACK), given to the app and the dispatcher as a value.
 */
export const LOOPBACK_WEBHOOKS: InprocOptions = { env: { SIGIL_WEBHOOKS_ALLOW_LOOPBACK: "true" } };

/** The webhook URL policy of the service's configuration, as `sigil serve` builds it. */
export function webhookUrlsOf(service: Service): WebhookUrlPolicy {
  return webhookUrlPolicy({ allowLoopback: service.config.webhooksAllowLoopback });
}

/** The real app over an opened service, as `sigil serve` builds it, silent. */
export function testApp(service: Service, extra: Partial<Parameters<typeof buildApp>[0]> = {}) {
  return buildApp({
    store: service.store,
    state: service.state,
    masterKey: service.masterKey,
    logger: pino({ level: "silent" }),
    bodyLimitBytes: service.config.bodyLimitBytes,
    timestampMaxAgeMs: service.config.timestampMaxAgeMs,
    timestampMaxFutureMs: service.config.timestampMaxFutureMs,
    tvcImageRoot: service.config.tvcImageRoot,
    webhookUrls: webhookUrlsOf(service),
    version: "test",
    ...extra,
  });
}

export async function inproc(engine: EngineSpec["name"] = "sqlite", options: InprocOptions = {}): Promise<Harness> {
  const inst: Instance = await newInstance(engine, options.env ?? {});
  const service = await openService([], inst.env);
  let eventsWritten: (() => void) | undefined;
  const app = testApp(service, {
    ...(options.logins ? { logins: options.logins } : {}),
    onEvents: () => eventsWritten?.(),
  });
  await app.ready();
  const root = await bootstrapOrganization(service, "Test Org");

  const post = async (path: string, body: string, headers: Record<string, string> = {}): Promise<Res> => {
    const r = await app.inject({ method: "POST", url: path, payload: body, headers: { "content-type": "application/json", ...headers } });
    return { status: r.statusCode, json: parse(r.body) };
  };
  // What TurnkeySDKClientBase.request sends: the stamp header, content type, client version.
  const stamped = async (path: string, body: string, as: Creds): Promise<Res> => {
    const stamp = await stamperOf(as).stamp(body);
    return post(path, body, { [stamp.stampHeaderName]: stamp.stampHeaderValue, "X-Client-Version": SDK_VERSION });
  };

  // Distinct timestamps: two submissions of equal parameters are two activities (idempotency
  // is by the exact body), unless a test passes the same timestampMs on purpose.
  let lastTimestamp = 0;
  const timestamp = () => (lastTimestamp = Math.max(Date.now(), lastTimestamp + 1));

  return {
    engine,
    app,
    service,
    root,
    post,
    submit: (op, type, parameters, opts = {}) => {
      const as = opts.as ?? root;
      const body = {
        parameters,
        organizationId: opts.organizationId ?? as.organizationId,
        timestampMs: opts.timestampMs ?? String(timestamp()),
        type,
      };
      return stamped(`/public/v1/submit/${op}`, JSON.stringify(body), as);
    },
    query: (op, body = {}, opts = {}) => {
      const as = opts.as ?? root;
      return stamped(`/public/v1/query/${op}`, JSON.stringify({ organizationId: opts.organizationId ?? as.organizationId, ...body }), as);
    },
    sdk: (as = root) => injectedClient(as, stamped),
    newOrg: (name = "Other Org", userEmail?: string) => bootstrapOrganization(service, name, userEmail),
    onEvents: (fn) => void (eventsWritten = fn),
    async close() {
      await app.close();
      await service.store.close();
      await inst.cleanup();
    },
  };
}

/**
 * One harness per engine for the enclosed tests (`describe` per engine of ENGINES; one with a
 * database server skipped with its reason when TEST_DATABASE_URL names none: engines.ts).
 * `only: ["sqlite"]` for what does not depend on the engine.
 */
export function perEngine(
  title: string,
  body: (h: () => Harness) => void,
  only?: EngineSpec["name"][],
  /** Options for each harness; a function is called per harness (e.g. to start an SMTP server). */
  options?: InprocOptions | (() => InprocOptions | Promise<InprocOptions>),
): void {
  for (const spec of engines().filter((e) => !only || only.includes(e.name))) {
    describe(`${title} [${spec.name}]`, { skip: spec.skip }, () => {
      let h: Harness | undefined;
      before(async () => {
        h = await inproc(spec.name, typeof options === "function" ? await options() : options);
      });
      after(async () => {
        await h?.close();
      });
      body(() => h!);
    });
  }
}

/** SQLite only: the behaviour under test does not depend on the engine. */
export const onSqlite = (title: string, body: (h: () => Harness) => void) => perEngine(title, body, ["sqlite"]);

/**
 * Asserts a completed activity and returns its result: with the activity's definition, the
 * result object it declares (`returns`), checked against that schema and typed by it; with a
 * result key, `activity.result[resultKey]` untyped.
 */
export function completed<R extends TObject>(res: Res, def: CompiledActivity<R>): Static<R>;
export function completed(res: Res, resultKey: string): Json;
export function completed(res: Res, by: string | CompiledActivity): Json {
  assert.equal(res.status, 200, JSON.stringify(res.json));
  const a = res.json.activity as Json;
  assert.equal(a.status, COMPLETED);
  assert.match(a.id, UUID);
  assert.match(a.fingerprint, /^sha256:[0-9a-f]{64}$|^[0-9a-f]{64}$/);
  const resultKey = typeof by === "string" ? by : by.result;
  assert.ok(a.result[resultKey], `result has ${resultKey}: ${JSON.stringify(a.result)}`);
  const result = a.result[resultKey] as Json;
  if (typeof by !== "string") {
    const errors = [...Value.Errors(by.returns, result)].slice(0, 5).map((e) => `${e.path}: ${e.message}`);
    assert.deepEqual(errors, [], `${resultKey} does not match the definition's result schema: ${JSON.stringify(result)}`);
  }
  return result;
}

/**
 * Asserts the SDK's error body: HTTP status, gRPC code, turnkeyErrorCode, and optionally a
 * message pattern and the BadRequest field names.
 */
export function failsWith(res: Res, http: number, grpc: number, turnkeyErrorCode: string, message?: RegExp, fields?: string[]): Json {
  assert.equal(res.status, http, JSON.stringify(res.json));
  assert.equal(res.json.code, grpc, JSON.stringify(res.json));
  assert.equal(typeof res.json.message, "string");
  assert.equal(res.json.details?.[0]?.["@type"], "type.googleapis.com/errors.v1.TurnkeyErrorDetail");
  assert.equal(res.json.details[0].turnkeyErrorCode, turnkeyErrorCode, JSON.stringify(res.json));
  if (message) assert.match(res.json.message, message);
  if (fields) {
    const bad = (res.json.details as Json[]).find((d) => d["@type"] === "type.googleapis.com/google.rpc.BadRequest");
    assert.ok(bad, `BadRequest detail in ${JSON.stringify(res.json)}`);
    for (const f of fields)
      assert.ok(
        bad.fieldViolations.some((v: Json) => v.field === f),
        `violation on ${f}: ${JSON.stringify(bad.fieldViolations)}`,
      );
  }
  return res.json;
}

export const invalidRequest = (res: Res, message?: RegExp, fields?: string[]) => failsWith(res, 400, 3, "REQUEST_INVALID", message, fields);
export const notFound = (res: Res, message?: RegExp) => failsWith(res, 404, 5, "REQUEST_INVALID", message);
export const conflict = (res: Res, message?: RegExp) => failsWith(res, 409, 6, "REQUEST_INVALID", message);
export const exhausted = (res: Res, message?: RegExp) => failsWith(res, 429, 8, "RATE_LIMIT_EXCEEDED", message);
export const precondition = (res: Res, message?: RegExp) => failsWith(res, 400, 9, "REQUEST_INVALID", message);
export const forbidden = (res: Res, message?: RegExp) => failsWith(res, 403, 7, "REQUEST_NOT_AUTHORIZED", message);

/** A stamped request as the SDK sends it, from a chosen client address (inject's remoteAddress). */
export async function stampedFrom(h: Harness, address: string, as: Creds, path: string, body: Json): Promise<Res> {
  const text = JSON.stringify(body);
  const stamp = await stamperOf(as).stamp(text);
  const r = await h.app.inject({
    method: "POST",
    url: path,
    payload: text,
    remoteAddress: address,
    headers: { "content-type": "application/json", [stamp.stampHeaderName]: stamp.stampHeaderValue },
  });
  return { status: r.statusCode, json: JSON.parse(r.body) as Json };
}

/** A fresh compressed P-256 public key (hex), for parameters that register keys. */
export const publicKey = () => generateP256KeyPair().publicKey;

/** Users with one API key each, created through create_users by `as` (root by default) in its organization. */
export async function addUsersWithKeys(h: Harness, n: number, as: Creds = h.root): Promise<Creds[]> {
  const keys = Array.from({ length: n }, () => generateP256KeyPair());
  const res = await h.submit(
    "create_users",
    "ACTIVITY_TYPE_CREATE_USERS_V4",
    { users: keys.map((key) => userParams({ apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }] })) },
    { as },
  );
  const ids = completed(res, createUsersV4).userIds;
  return ids.map((userId, i) => ({ organizationId: as.organizationId, userId, key: keys[i]! }));
}

/**
 * A new organization whose root quorum is `size` users with `threshold`: whatever one of
 * them submits awaits threshold - 1 more approvals. Also returns a non-root user.
 */
export async function quorumOrg(h: Harness, size: number, threshold: number): Promise<{ members: Creds[]; other: Creds }> {
  const first = await h.newOrg("Quorum Org");
  const users = await addUsersWithKeys(h, size, first);
  const members = [first, ...users.slice(0, size - 1)];
  const res = await h.submit(
    "update_root_quorum",
    "ACTIVITY_TYPE_UPDATE_ROOT_QUORUM",
    { threshold, userIds: members.map((m) => m.userId) },
    { as: first },
  );
  completed(res, "updateRootQuorumResult");
  return { members, other: users[size - 1]! };
}

/** quorumOrg(h, 2, 2): `a` and `b` are the root quorum, `other` is not in it. */
export async function twoOfTwo(h: Harness): Promise<{ a: Creds; b: Creds; other: Creds }> {
  const { members, other } = await quorumOrg(h, 2, 2);
  return { a: members[0]!, b: members[1]!, other };
}

/** A user entry for create_users (V4) with defaults. */
export const userParams = (over: Json = {}): Json => ({
  userName: `u-${newId().slice(0, 8)}`,
  apiKeys: [],
  authenticators: [],
  oauthProviders: [],
  userTags: [],
  ...over,
});

/**
 * Every activity op is idempotent by fingerprint: the same body twice is one activity.
 * Sends exactly the same bytes twice and checks the second answer names the same activity.
 */
export async function assertIdempotent(h: Harness, op: string, type: string, parameters: Json): Promise<Json> {
  const timestampMs = String(Date.now());
  const first = await h.submit(op, type, parameters, { timestampMs });
  const second = await h.submit(op, type, parameters, { timestampMs });
  assert.equal(first.status, 200, JSON.stringify(first.json));
  assert.equal(second.status, 200, JSON.stringify(second.json));
  assert.equal(second.json.activity.id, first.json.activity.id);
  assert.deepEqual(second.json.activity.result, first.json.activity.result);
  return first.json.activity as Json;
}

/** A webhook endpoint of `as`'s organization (root by default); returns its id. */
export async function newEndpoint(h: Harness, as: Creds = h.root): Promise<string> {
  const res = await h.submit(
    "create_webhook_endpoint",
    "ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT",
    { url: "https://a.example.com/h", name: "a" },
    { as },
  );
  return completed(res, createWebhookEndpoint).endpointId;
}

/** A local receiver and the webhook dispatcher, in this process (what `sigil serve` runs next to the app). */
export interface Deliveries {
  /** An endpoint URL that reaches the receiver. */
  url: string;
  /** What the receiver answers from now on (4xx: the delivery fails at once, without retries). */
  answer(status: number): void;
  /** How many requests the receiver got. */
  received(): number;
  stop(): Promise<void>;
}

/**
 * Starts delivering `h`'s webhook events to a loopback receiver (the harness is opened with
 * LOOPBACK_WEBHOOKS: the development setting), one attempt per delivery; the app wakes the
 * dispatcher after commits that wrote events, as in `sigil serve`.
 * The dispatcher is imported here, on use, so only the files that deliver depend on it.
 */
export async function startDeliveries(h: Harness): Promise<Deliveries> {
  const webhookUrls = webhookUrlsOf(h.service);
  if (!webhookUrls.allowLoopback)
    throw new Error("startDeliveries: open the harness with LOOPBACK_WEBHOOKS (the receiver listens on loopback)");
  const [{ startDispatcher }, { activeSigningKey }, http] = await Promise.all([
    import("../../src/webhooks/dispatcher.ts"),
    import("../../src/webhooks/signing-keys.ts"),
    import("node:http"),
  ]);
  let status = 200;
  let count = 0;
  const server = http.createServer((req, res) => {
    req.resume().on("end", () => {
      count++;
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await activeSigningKey(h.service.state.signingKey, h.service.store.db, h.service.masterKey);
  // DEBUG_DELIVERIES=1 prints the dispatcher's warnings (failed attempts, refused dials).
  const quiet = {
    info() {},
    warn(o: object, m: string) {
      if (process.env.DEBUG_DELIVERIES) console.error(m, o);
    },
  };
  const dispatcher = startDispatcher({
    db: h.service.store.db,
    state: h.service.state,
    masterKey: h.service.masterKey,
    log: quiet,
    pollMs: 10,
    timeoutMs: 2000,
    maxAttempts: 1,
    webhookUrls,
  });
  h.onEvents(dispatcher.wake);
  return {
    url: `http://127.0.0.1:${port}/hook`,
    answer: (s) => void (status = s),
    received: () => count,
    async stop() {
      h.onEvents(undefined);
      await dispatcher.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * `h`'s delivery of the event of `activityId` to `endpointId` once its status is `status`
 * (bounded polling: the dispatcher works on its own schedule).
 */
export async function deliveryOf(h: Harness, endpointId: string, activityId: string, status: string): Promise<Json> {
  const { pollUntil } = await import("./raw-http.ts");
  return pollUntil(`a ${status} delivery of ${activityId}`, 10_000, 10, async () => {
    const res = await h.query("list_webhook_deliveries", { endpointId, filterByStatus: [status], paginationOptions: { limit: "100" } });
    return (res.json.webhookDeliveries as Json[] | undefined)?.find((d) => d.activityId === activityId);
  });
}

/** For the tests of a suite: the dispatcher and receiver run (started before, stopped after). */
export function deliveriesFor(h: () => Harness): () => Deliveries {
  let d: Deliveries | undefined;
  before(async () => {
    d = await startDeliveries(h());
  });
  after(() => d?.stop());
  return () => d!;
}

/** A new endpoint at the receiver, which answers 400: one activity's delivery, once it has failed. */
export async function failedDelivery(
  h: Harness,
  d: Deliveries,
  name: string,
): Promise<{ endpointId: string; activityId: string; delivery: Json }> {
  d.answer(400);
  const { endpointId } = completed(
    await h.submit("create_webhook_endpoint", "ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT", { url: d.url, name }),
    createWebhookEndpoint,
  );
  const tagged = await h.submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: name, userIds: [] });
  completed(tagged, "createUserTagResult");
  const activityId = tagged.json.activity.id as string;
  return { endpointId, activityId, delivery: await deliveryOf(h, endpointId, activityId, "WEBHOOK_DELIVERY_STATUS_FAILED") };
}
