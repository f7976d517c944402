// End-to-end: webhook retries over long outages, failed deliveries and operators' tools, and
// an idle dispatcher that does not write — against the real service on both engines, with
// the official SDK clients (queries and activities the SDK does not name go through its
// generic `request`) and real node:http receivers on 127.0.0.1.
//
// Two instances per engine, each with its own retry settings:
// - "scaled": the default schedule (immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h)
//   divided by 3600, so an hour of outage takes a second;
// - "short": three attempts 100 ms apart and endpoints disabled after 3 s of failing, so a
//   delivery fails for good, and an endpoint is disabled, within seconds.
// Waiting is a poll of a condition with a deadline, except where the point is that nothing
// happens during a span of time (the idle checks).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import {
  RecordingProxy,
  expectError,
  newSubOrgParty,
  partyFor,
  type AnyRec,
  type ExpectedError,
  type Party,
} from "../helpers/policy-harness.ts";
import { WebhookSink, freePort, until, type Receipt } from "../helpers/webhook-sink.ts";
import { randomBytes, randomUUID } from "node:crypto";

const COMPLETED = "ACTIVITY_STATUS_COMPLETED";
const S = {
  pending: "WEBHOOK_DELIVERY_STATUS_PENDING",
  delivered: "WEBHOOK_DELIVERY_STATUS_DELIVERED",
  failed: "WEBHOOK_DELIVERY_STATUS_FAILED",
};
/** The default schedule ÷ 3600 (ms): an hour of the real schedule is a second here. */
const SCALED_SCHEDULE = "0,1ms,83ms,500ms,2s,5s,10s,10s";
/** The dispatcher's idle poll period (dispatcher.ts DISPATCH_DEFAULTS.pollMs). */
const POLL_MS = 500;

const uniq = (label: string) => `${label}-${randomBytes(4).toString("hex")}`;
const eventIdOf = (r: Receipt) => String(r.headers["x-service-event-id"]);
const activityOf = (r: Receipt) => String((JSON.parse(r.body.toString("utf8")) as AnyRec).id);

/** One instance of the service with its own settings, driven through the SDK. */
class Harness {
  inst!: Instance;
  server!: RunningServer;
  proxy!: RecordingProxy;
  root!: Party;
  init!: InitResult;
  readonly sinks: WebhookSink[] = [];

  constructor(
    readonly engine: "sqlite" | "postgres",
    readonly env: NodeJS.ProcessEnv,
  ) {}

  async start(): Promise<void> {
    this.inst = await newInstance(this.engine, { SIGIL_WEBHOOKS_ALLOW_LOOPBACK: "true", SIGIL_WEBHOOKS_TIMEOUT_MS: "2000", ...this.env });
    this.init = await sigilInit(this.inst, ["--name", "Retries Org"]);
    this.server = await startServer(this.inst);
    this.proxy = new RecordingProxy(this.server.url);
    await this.proxy.start();
    this.root = partyFor(
      this.proxy.url,
      { publicKey: this.init.apiPublicKey, privateKey: this.init.apiPrivateKey },
      this.init.userId,
      this.init.organizationId,
    );
  }

  async stop(): Promise<void> {
    for (const s of this.sinks) await s.stop();
    await this.proxy?.stop();
    await this.server?.stop();
    await this.inst?.cleanup();
  }

  fail(p: Promise<unknown>, exp: ExpectedError) {
    return expectError(this.proxy, p, exp);
  }

  async sink(port = 0): Promise<WebhookSink> {
    const s = await new WebhookSink().start(port);
    this.sinks.push(s);
    return s;
  }

  newOrg(label: string): Promise<Party> {
    return newSubOrgParty(this.proxy.url, this.root, label);
  }

  async endpoint(p: Party, url: string): Promise<string> {
    const res = await p.sdk.createWebhookEndpoint({ url, name: uniq("endpoint"), subscriptions: [{ eventType: "ACTIVITY_UPDATES" }] });
    assert.equal(res.activity.status, COMPLETED);
    return res.endpointId;
  }

  async activity(p: Party, label = "tag"): Promise<string> {
    const res = await p.sdk.createUserTag({ userTagName: uniq(label), userIds: [] });
    assert.equal(res.activity.status, COMPLETED);
    return res.activity.id;
  }

  deliveries(p: Party, body: AnyRec = {}): Promise<AnyRec[]> {
    return p.http
      .request<AnyRec, AnyRec>("/public/v1/query/list_webhook_deliveries", { organizationId: p.orgId, ...body })
      .then((r) => r.webhookDeliveries as AnyRec[]);
  }

  /** An endpoint's deliveries (oldest first) once `ok` holds. */
  deliveriesUntil(p: Party, endpointId: string, what: string, ok: (ds: AnyRec[]) => boolean, timeoutMs = 20_000): Promise<AnyRec[]> {
    let last: AnyRec[] = [];
    return until(
      what,
      async () => {
        last = (await this.deliveries(p, { endpointId, paginationOptions: { limit: "100" } })).reverse();
        return ok(last) ? last : undefined;
      },
      { timeoutMs, intervalMs: 50, describe: () => last.map((d) => [d.eventId, d.status, d.attemptCount, d.lastError]) },
    );
  }

  redeliver(p: Party, parameters: AnyRec): Promise<AnyRec> {
    return p.http.request<AnyRec, AnyRec>("/public/v1/submit/redeliver_webhook_deliveries", {
      type: "ACTIVITY_TYPE_REDELIVER_WEBHOOK_DELIVERIES",
      timestampMs: String(Date.now()),
      organizationId: p.orgId,
      parameters,
    });
  }

  async endpointView(p: Party, endpointId: string): Promise<AnyRec> {
    const all = (await p.sdk.listWebhookEndpoints({ organizationId: p.orgId })).webhookEndpoints as AnyRec[];
    const e = all.find((x) => x.endpointId === endpointId);
    assert.ok(e, `endpoint ${endpointId} listed`);
    return e;
  }

  /**
   * What an otherwise idle server does to its database during `polls` poll periods. The span
   * is the measurement (nothing may happen in it), not a wait for something to happen.
   * Returns every problem seen:
   * - SQLite: a commit by anyone (data_version, seen from a read-only connection);
   * - PostgreSQL: any INSERT/UPDATE/DELETE statement, even one that touches no row
   *   (statement-level triggers on every table), any row lock (FOR UPDATE) or change on the
   *   webhook tables (xmax), and with `noQueries`, any statement at all from the server's
   *   connections (pg_stat_activity.query_start).
   */
  async idleProblems(polls: number, opts: { noQueries?: boolean } = {}): Promise<string[]> {
    const spanMs = polls * POLL_MS;
    const problems: string[] = [];
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    if (this.engine === "sqlite") {
      const reader = new Database(path.join(this.inst.dataDir, "sigil.db"), { readonly: true, fileMustExist: true });
      try {
        const version = () => Number(reader.pragma("data_version", { simple: true }));
        const before = version();
        await sleep(spanMs);
        if (version() !== before) problems.push("something was committed");
      } finally {
        reader.close();
      }
      return problems;
    }
    const client = new pg.Client({ connectionString: this.inst.env.DATABASE_URL });
    await client.connect();
    try {
      await client.query(`
        CREATE TABLE IF NOT EXISTS test_write_log (at timestamptz NOT NULL DEFAULT clock_timestamp(), tbl text NOT NULL, op text NOT NULL);
        CREATE OR REPLACE FUNCTION test_log_write() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN INSERT INTO test_write_log (tbl, op) VALUES (TG_TABLE_NAME, TG_OP); RETURN NULL; END $$;
        DO $$ DECLARE t text; BEGIN
          FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'test_write_log' LOOP
            EXECUTE format('DROP TRIGGER IF EXISTS test_log_write ON %I', t);
            EXECUTE format('CREATE TRIGGER test_log_write AFTER INSERT OR UPDATE OR DELETE ON %I FOR EACH STATEMENT EXECUTE FUNCTION test_log_write()', t);
          END LOOP; END $$;`);
      const rowState = async () =>
        (
          await client.query<{ s: string }>(
            `SELECT coalesce((SELECT string_agg(id || ':' || xmin::text || ':' || xmax::text, ',' ORDER BY id) FROM webhook_endpoints), '') || '|' ||
                    coalesce((SELECT string_agg(id || ':' || xmin::text || ':' || xmax::text, ',' ORDER BY id) FROM webhook_deliveries), '') AS s`,
          )
        ).rows[0]!.s;
      if (opts.noQueries) {
        // The dispatcher's first polls after startup look around once; measure after them.
        await until(
          "the server's connections quiet for a second",
          async () =>
            (
              await client.query<{ quiet: boolean }>(
                `SELECT coalesce(max(query_start), '-infinity') < clock_timestamp() - interval '1 second' AS quiet FROM pg_stat_activity
                  WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
              )
            ).rows[0]!.quiet,
          { timeoutMs: 15_000, intervalMs: 200 },
        );
      }
      const t0 = (await client.query<{ t: Date }>("SELECT clock_timestamp() AS t")).rows[0]!.t;
      const rowsBefore = await rowState();
      await sleep(spanMs);
      const writes = await client.query<{ tbl: string; op: string }>("SELECT tbl, op FROM test_write_log WHERE at > $1 ORDER BY at", [t0]);
      if (writes.rows.length) problems.push(`write statements: ${writes.rows.map((r) => `${r.op} ${r.tbl}`).join(", ")}`);
      if ((await rowState()) !== rowsBefore) problems.push("webhook rows were locked or changed");
      if (opts.noQueries) {
        const q = await client.query<{ query: string }>(
          `SELECT query FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND query_start > $1`,
          [t0],
        );
        if (q.rows.length)
          problems.push(`statements from the server: ${q.rows.map((r) => r.query.replace(/\s+/g, " ").slice(0, 120)).join(" | ")}`);
      }
      return problems;
    } finally {
      await client.end();
    }
  }

  /** A commit to the database is seen (the control for idleProblems). */
  async commitsDuring(work: () => Promise<unknown>): Promise<boolean> {
    if (this.engine === "sqlite") {
      const reader = new Database(path.join(this.inst.dataDir, "sigil.db"), { readonly: true, fileMustExist: true });
      try {
        const before = Number(reader.pragma("data_version", { simple: true }));
        await work();
        return Number(reader.pragma("data_version", { simple: true })) !== before;
      } finally {
        reader.close();
      }
    }
    const client = new pg.Client({ connectionString: this.inst.env.DATABASE_URL });
    await client.connect();
    try {
      const n = async () => Number((await client.query<{ n: string }>("SELECT count(*) AS n FROM test_write_log")).rows[0]!.n);
      const before = await n();
      await work();
      return (await n()) > before;
    } finally {
      await client.end();
    }
  }
}

for (const engine of engines()) {
  describe(`webhook retries, scaled default schedule (${engine.name})`, { skip: engine.skip, timeout: 180_000 }, () => {
    const h = new Harness(engine.name, { SIGIL_WEBHOOKS_RETRY_SCHEDULE: SCALED_SCHEDULE, SIGIL_WEBHOOKS_DISABLE_AFTER: "60s" });
    before(() => h.start());
    after(() => h.stop());

    it("a long outage (hours, at this scale) loses nothing: later events wait behind the retrying head, then all arrive once, in order", async () => {
      const org = await h.newOrg("outage");
      const port = await freePort();
      const ep = await h.endpoint(org, `http://127.0.0.1:${port}/outage`);
      const acts: string[] = [];
      for (let i = 0; i < 5; i++) acts.push(await h.activity(org, `outage-${i}`));
      // Five attempts of the head: 0, 5 s, 5 min, 30 min, 2 h into the outage at full scale
      // (the old schedule had given up after ~10 minutes).
      const during = await h.deliveriesUntil(
        org,
        ep,
        "the head attempted 5 times, nothing given up",
        (ds) => ds.length === 5 && ds[0]!.attemptCount >= 5,
        30_000,
      );
      assert.deepEqual(
        during.map((d) => [d.activityId, d.status]),
        acts.map((a) => [a, S.pending]),
        "all still pending, in activity order",
      );
      assert.ok(
        during.slice(1).every((d) => d.attemptCount === 0),
        "later events wait behind the head, unattempted",
      );
      assert.ok(
        (during[0]!.attempts as AnyRec[]).every((t) => typeof t.error === "string" && t.httpStatus === undefined),
        "each refused connection recorded",
      );
      const view = await h.endpointView(org, ep);
      assert.equal(view.isActive, true, "hours of failing do not disable an endpoint (days do)");

      const back = await h.sink(port);
      const done = await h.deliveriesUntil(
        org,
        ep,
        "all 5 delivered",
        (ds) => ds.length === 5 && ds.every((d) => d.status === S.delivered),
        40_000,
      );
      assert.deepEqual(back.receipts.map(activityOf), acts, "each activity exactly once, in order");
      assert.deepEqual(
        back.receipts.map(eventIdOf),
        done.map((d) => d.eventId),
      );
      // An attempt is counted when it is claimed: the fifth seen above may have been in flight
      // when the receiver came back, and succeeded.
      assert.ok(done[0]!.attemptCount >= Math.max(5, during[0]!.attemptCount), `head attempts: ${done[0]!.attemptCount}`);
      assert.equal(done[0]!.attempts.at(-1).httpStatus, 200);
    });

    it("idle with an endpoint (everything delivered): polls write nothing", async () => {
      const org = await h.newOrg("idle");
      const s = await h.sink();
      const ep = await h.endpoint(org, s.url("/idle"));
      const a = await h.activity(org, "idle");
      await h.deliveriesUntil(org, ep, "delivered", (ds) => ds.some((d) => d.activityId === a && d.status === S.delivered));
      assert.deepEqual(await h.idleProblems(6), [], "6 idle poll periods");
      // The measurement sees writes (control): one activity is seen.
      assert.ok(await h.commitsDuring(() => h.activity(org, "control")), "an activity is seen as a write");
    });
  });

  describe(
    `webhook retries, short schedule: failures, redelivery, auto-disable, idle (${engine.name})`,
    { skip: engine.skip, timeout: 180_000 },
    () => {
      // The TVC controller reads the desired deployments once per reconcile pass (1 s by default):
      // slowed to a minute here, so that "an idle dispatcher sends no statement" is measurable.
      const h = new Harness(engine.name, {
        SIGIL_WEBHOOKS_RETRY_SCHEDULE: "0,100ms,100ms",
        SIGIL_WEBHOOKS_DISABLE_AFTER: "3s",
        SIGIL_TVC_RECONCILE_MS: "60000",
      });
      before(() => h.start());
      after(() => h.stop());

      it("idle with no endpoint at all: polls write nothing", async () => {
        // Nothing but `sigil init` has happened here: no endpoint exists. Not even a read: the
        // dispatcher hears of a first endpoint when it matters (see dispatcher.ts).
        assert.deepEqual(await h.idleProblems(6, { noQueries: true }), [], "6 idle poll periods");
      });

      it("when the head's attempts run out it fails and the next event goes; operators list the attempts and redeliver with the same event ids", async () => {
        const org = await h.newOrg("exhaust");
        const port = await freePort();
        const ep = await h.endpoint(org, `http://127.0.0.1:${port}/exhaust`);
        const acts = [await h.activity(org, "exhaust-1"), await h.activity(org, "exhaust-2")];
        const failed = await h.deliveriesUntil(org, ep, "both failed", (ds) => ds.length === 2 && ds.every((d) => d.status === S.failed));
        assert.deepEqual(
          failed.map((d) => d.activityId),
          acts,
        );
        for (const d of failed) {
          assert.equal(d.attemptCount, 3);
          assert.deepEqual(
            (d.attempts as AnyRec[]).map((t) => t.attempt),
            [1, 2, 3],
          );
          assert.ok((d.attempts as AnyRec[]).every((t) => typeof t.error === "string" && t.durationMs >= 0));
          assert.equal(d.nextAttemptAt, undefined, "nothing scheduled for a failed delivery");
        }
        // In order: the second event's first attempt came after the first event's last one.
        const ms = (t: AnyRec) => Number(t.startedAt.seconds) * 1000 + Math.floor(Number(t.startedAt.nanos) / 1e6);
        const lastOfFirst = failed[0]!.attempts[2];
        assert.ok(ms(failed[1]!.attempts[0]) >= ms(lastOfFirst) + lastOfFirst.durationMs - 1, "the next event waited for the head to fail");

        // The query: filters and pagination (newest first).
        const onlyFailed = await h.deliveries(org, { endpointId: ep, filterByStatus: [S.failed] });
        assert.deepEqual(
          onlyFailed.map((d) => d.deliveryId),
          [failed[1]!.deliveryId, failed[0]!.deliveryId],
        );
        assert.deepEqual(await h.deliveries(org, { endpointId: ep, filterByStatus: [S.delivered] }), []);
        const page1 = await h.deliveries(org, { endpointId: ep, paginationOptions: { limit: "1" } });
        const page2 = await h.deliveries(org, { endpointId: ep, paginationOptions: { limit: "1", after: page1[0]!.deliveryId } });
        assert.deepEqual(
          [...page1, ...page2].map((d) => d.deliveryId),
          [failed[1]!.deliveryId, failed[0]!.deliveryId],
        );
        const byEvent = await h.deliveries(org, { eventId: failed[0]!.eventId });
        assert.deepEqual(
          byEvent.map((d) => d.deliveryId),
          [failed[0]!.deliveryId],
        );
        const q = (body: AnyRec) => org.http.request("/public/v1/query/list_webhook_deliveries", { organizationId: org.orgId, ...body });
        await h.fail(q({ endpointId: randomUUID() }), { status: 404, code: 5 });
        await h.fail(q({ filterByStatus: ["failed"] }), { status: 400, code: 3 });
        await h.fail(q({ paginationOptions: { after: randomUUID() } }), { status: 400, code: 3 });
        // Another organization sees none of them.
        const stranger = await h.newOrg("stranger");
        assert.deepEqual(await h.deliveries(stranger, {}), []);
        await h.fail(h.deliveries(stranger, { endpointId: ep }), { status: 404, code: 5 });

        // Redelivery: bad requests first.
        await h.fail(h.redeliver(org, {}), { status: 400, code: 3, includes: "either deliveryIds or endpointId" });
        await h.fail(h.redeliver(org, { endpointId: ep, deliveryIds: [failed[0]!.deliveryId] }), { status: 400, code: 3 });
        await h.fail(h.redeliver(org, { deliveryIds: [randomUUID()] }), { status: 404, code: 5 });
        await h.fail(h.redeliver(stranger, { deliveryIds: [failed[0]!.deliveryId] }), { status: 404, code: 5 });
        await h.fail(h.redeliver(org, { deliveryIds: ["not-a-uuid"] }), { status: 400, code: 3 });

        // The receiver is back; every failed delivery of the endpoint is redelivered.
        const back = await h.sink(port);
        const res = await h.redeliver(org, { endpointId: ep });
        assert.equal(res.activity.status, COMPLETED);
        assert.deepEqual(
          res.activity.result.redeliverWebhookDeliveriesResult.deliveryIds,
          failed.map((d) => d.deliveryId),
        );
        // (The redelivery is an activity too: its own event is queued behind them.)
        const mine = (ds: AnyRec[]) => ds.filter((d) => failed.some((f) => f.deliveryId === d.deliveryId));
        const done = mine(
          await h.deliveriesUntil(
            org,
            ep,
            "both delivered",
            (ds) => mine(ds).length === 2 && mine(ds).every((d) => d.status === S.delivered),
          ),
        );
        assert.deepEqual(
          back.receipts.filter((r) => acts.includes(activityOf(r))).map((r) => [activityOf(r), eventIdOf(r)]),
          failed.map((d) => [d.activityId, d.eventId]),
          "the same events (same ids), in order",
        );
        assert.deepEqual(back.receipts.slice(0, 2).map(activityOf), acts, "ahead of anything queued after the redelivery");
        for (const d of done) {
          assert.equal(d.attemptCount, 4);
          assert.equal(d.attempts[3].httpStatus, 200);
        }
        // By id: a delivered one is sent once more, with the same event id.
        const again = await h.redeliver(org, { deliveryIds: [done[0]!.deliveryId] });
        assert.deepEqual(again.activity.result.redeliverWebhookDeliveriesResult.deliveryIds, [done[0]!.deliveryId]);
        await until(
          "the redelivered event arrives again",
          () => back.receipts.filter((r) => eventIdOf(r) === done[0]!.eventId).length === 2,
        );
        assert.equal((await h.endpointView(org, ep)).isActive, true, "half a second of failing did not disable it");
      });

      it("an endpoint failing continuously past the limit is disabled with a visible reason; re-enabling and redelivering brings everything back", async () => {
        const org = await h.newOrg("disable");
        const port = await freePort();
        const ep = await h.endpoint(org, `http://127.0.0.1:${port}/disable`);
        // Each event fails in ~0.2 s; 30 of them keep the endpoint failing well past 3 s.
        const acts: string[] = [];
        for (let i = 0; i < 30; i++) acts.push(await h.activity(org, `disable-${i}`));
        const view = await until(
          "the endpoint disabled",
          async () => {
            const v = await h.endpointView(org, ep);
            return v.isActive === false ? v : undefined;
          },
          { timeoutMs: 40_000, intervalMs: 100 },
        );
        assert.match(
          String(view.disabledReason),
          /^disabled automatically: every delivery attempt failed since \d{4}-\d\d-\d\dT.*; last attempt: .+/,
        );
        assert.ok(view.disabledAt?.seconds, "disabledAt");
        const rows = await h.deliveriesUntil(org, ep, "nothing pending", (ds) => ds.length > 0 && ds.every((d) => d.status !== S.pending));
        assert.ok(rows.every((d) => d.status === S.failed));
        assert.ok(
          rows.some((d) => /endpoint disabled/.test(String(d.lastError))),
          "what was still queued is failed with the reason",
        );
        // While disabled: no new deliveries, and redelivery is refused.
        const whileDisabled = await h.activity(org, "while-disabled");
        await h.fail(h.redeliver(org, { endpointId: ep }), { status: 400, code: 9, includes: "not active" });

        // Re-enabled by its owner: the reason is gone; the receiver is back; redelivered.
        const back = await h.sink(port);
        const upd = await org.sdk.updateWebhookEndpoint({ endpointId: ep, isActive: true });
        assert.equal((upd.webhookEndpoint as AnyRec).isActive, true);
        assert.equal((upd.webhookEndpoint as AnyRec).disabledReason, undefined);
        assert.equal((await h.endpointView(org, ep)).disabledReason, undefined);
        const res = await h.redeliver(org, { endpointId: ep });
        assert.equal(res.activity.result.redeliverWebhookDeliveriesResult.deliveryIds.length, rows.length);
        const after = await h.activity(org, "after-enable");
        const all = await h.deliveriesUntil(
          org,
          ep,
          "everything delivered",
          (ds) => ds.some((d) => d.activityId === after) && ds.every((d) => d.status === S.delivered),
          40_000,
        );
        const delivered = new Set(back.receipts.map(activityOf));
        for (const a of acts) assert.ok(delivered.has(a), `activity ${a} delivered after the redelivery`);
        assert.ok(delivered.has(after));
        assert.equal(new Set(back.receipts.map(eventIdOf)).size, back.receipts.length, "each event once");
        assert.equal(all.length, back.receipts.length);
        // Fan-out goes in event order, so by now an event of the activity done while disabled
        // would have its delivery: it has none (nobody listened then).
        assert.ok(!all.some((d) => d.activityId === whileDisabled), "nothing queued while disabled");
      });
    },
  );
}
