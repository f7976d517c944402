// The PostgreSQL store going away under a running server: connections terminated
// (pg_terminate_backend), refused, hung, or a table locked. The server must stay up, answer
// 503 UNAVAILABLE with the SDK's error body (gRPC 14) within its configured timeouts while the
// database is away, keep /readyz prompt, and recover by itself when the database is back.
// Outages are simulated with a TCP proxy written here (the shared PostgreSQL server itself is
// never stopped) and with pg_terminate_backend limited to this test's own database.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import pg from "pg";
import { TurnkeyClient, TurnkeyRequestError } from "@turnkey/http";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { goodStamp } from "../helpers/raw-http.ts";
import { testDatabaseUrl } from "../helpers/engines.ts";

const BASE = testDatabaseUrl("postgres");
const SKIP = BASE ? undefined : "TEST_DATABASE_URL names no postgres server: PostgreSQL tests skipped";
const CONNECT_TIMEOUT_MS = 1_000;
const STATEMENT_TIMEOUT_MS = 1_500;
/** statement_timeout plus the client's own slack (src/store/postgres/index.ts) plus scheduling margin. */
const MAX_UNAVAILABLE_MS = STATEMENT_TIMEOUT_MS + 1_000 + 1_000;
const DETAIL_TYPE = "type.googleapis.com/errors.v1.TurnkeyErrorDetail";

/** Resolves once `cond()` holds, polling every 20 ms; fails after `ms`. */
async function until(cond: () => Promise<boolean> | boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A TCP proxy to PostgreSQL that can forward, refuse (nothing listening), or hang. */
class PgProxy {
  port = 0;
  #server: net.Server | undefined;
  #sockets = new Set<net.Socket>();
  #hung = false;
  constructor(private readonly target: { host: string; port: number }) {}

  async start(port = 0): Promise<void> {
    const server = net.createServer((client) => this.#accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
    });
    this.#server = server;
    this.port = (server.address() as net.AddressInfo).port;
  }

  #accept(client: net.Socket): void {
    this.#sockets.add(client);
    client.on("close", () => this.#sockets.delete(client));
    client.on("error", () => {});
    if (this.#hung) return; // accepted, never answered
    const upstream = net.connect(this.target.port, this.target.host);
    this.#sockets.add(upstream);
    upstream.on("close", () => {
      this.#sockets.delete(upstream);
      client.destroy();
    });
    upstream.on("error", () => {});
    client.on("close", () => upstream.destroy());
    // Forward chunk by chunk so that hang() can stop both directions at once.
    client.on("data", (c: Buffer) => this.#hung || upstream.write(c));
    upstream.on("data", (c: Buffer) => this.#hung || client.write(c));
  }

  /** The database is gone: every connection cut, new ones refused. */
  async cut(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }

  /** The database hangs: connections stay open, nothing gets through any more. */
  hang(): void {
    this.#hung = true;
  }

  /** Back to normal: listening on the same port, forwarding. Hung connections are dropped. */
  async restore(): Promise<void> {
    if (this.#hung) {
      this.#hung = false;
      for (const s of this.#sockets) s.destroy();
    }
    if (!this.#server) await this.start(this.port);
  }

  async close(): Promise<void> {
    await this.cut();
  }
}

type Outcome = { ok: true } | { ok: false; code: number; detailType: unknown; message: string };

async function outcome(p: Promise<unknown>): Promise<Outcome> {
  try {
    await p;
    return { ok: true };
  } catch (e) {
    if (e instanceof TurnkeyRequestError) {
      return { ok: false, code: e.code, detailType: (e.details?.[0] as { "@type"?: string } | undefined)?.["@type"], message: e.message };
    }
    return { ok: false, code: -1, detailType: undefined, message: String(e) };
  }
}

function assertAvailableOr503(o: Outcome, what: string): void {
  if (o.ok) return;
  assert.equal(o.code, 14, `${what}: expected success or UNAVAILABLE, got ${o.message}`);
  assert.equal(o.detailType, DETAIL_TYPE, `${what}: the SDK error body`);
}

describe("PostgreSQL outages", { skip: SKIP, timeout: 180_000 }, () => {
  let inst: Instance;
  let init: InitResult;
  let server: RunningServer;
  let proxy: PgProxy;
  let client: TurnkeyClient;
  let dbName: string;
  let admin: pg.Client;
  let directUrl: string;

  before(async () => {
    inst = await newInstance("postgres", {
      SIGIL_DB_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
      SIGIL_DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
    });
    const direct = new URL(inst.env.DATABASE_URL!);
    dbName = direct.pathname.slice(1);
    proxy = new PgProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    await proxy.start();
    // The server (and init) reach PostgreSQL only through the proxy.
    const viaProxy = new URL(direct);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    inst.env.DATABASE_URL = viaProxy.toString();
    init = await sigilInit(inst);
    server = await startServer(inst);
    client = new TurnkeyClient(
      { baseUrl: server.url },
      new ApiKeyStamper({ apiPublicKey: init.apiPublicKey, apiPrivateKey: init.apiPrivateKey }),
    );
    directUrl = direct.toString();
    admin = new pg.Client({ connectionString: directUrl });
    await admin.connect();
  });
  after(async () => {
    await admin?.end().catch(() => {});
    await server?.stop();
    await proxy?.close();
    await inst?.cleanup();
  });

  let tagNo = 0;
  const createTag = () =>
    client.createUserTag({
      type: "ACTIVITY_TYPE_CREATE_USER_TAG",
      timestampMs: String(Date.now()),
      organizationId: init.organizationId,
      parameters: { userTagName: `tag-${++tagNo}-${Date.now()}`, userIds: [] },
    });
  const whoami = () => client.getWhoami({ organizationId: init.organizationId });

  /** A stamped query over raw HTTP: the status code the SDK does not expose. */
  async function rawWhoami(): Promise<{ status: number; json: { code?: number; details?: { "@type"?: string }[] } }> {
    const body = JSON.stringify({ organizationId: init.organizationId });
    const res = await fetch(`${server.url}/public/v1/query/whoami`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-stamp": await goodStamp({ publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey }, body),
      },
      body,
    });
    return { status: res.status, json: (await res.json()) as { code?: number } };
  }

  async function readyz(): Promise<{ status: number; ms: number }> {
    const started = Date.now();
    const res = await fetch(`${server.url}/readyz`);
    await res.arrayBuffer();
    return { status: res.status, ms: Date.now() - started };
  }

  async function assertServesNormally(): Promise<void> {
    assert.equal(server.proc.exitCode, null, "the server process is alive");
    assert.equal((await readyz()).status, 200);
    assert.equal((await whoami()).userId, init.userId);
    assert.equal((await createTag()).activity.status, "ACTIVITY_STATUS_COMPLETED");
  }

  it("survives repeated pg_terminate_backend on its connections while serving SDK requests", async (t) => {
    await assertServesNormally();
    const outcomes: { what: string; o: Outcome }[] = [];
    let raw503 = 0;
    let stop = false;
    const worker = async (i: number) => {
      while (!stop) {
        outcomes.push({ what: "whoami", o: await outcome(whoami()) });
        outcomes.push({ what: "createUserTag", o: await outcome(createTag()) });
        if (i === 0) {
          const r = await rawWhoami();
          if (r.status !== 200) {
            assert.equal(r.status, 503, JSON.stringify(r.json));
            assert.equal(r.json.code, 14);
            assert.equal(r.json.details?.[0]?.["@type"], DETAIL_TYPE);
            raw503++;
          }
        }
      }
    };
    const workers = Array.from({ length: 4 }, (_, i) => worker(i));
    let terminated = 0;
    try {
      for (let round = 0; round < 20; round++) {
        // Let some requests through between terminations, so each one hits live traffic.
        const seen = outcomes.length;
        await until(() => outcomes.length >= seen + 4 || server.proc.exitCode !== null, 20_000, "requests between terminations");
        assert.equal(server.proc.exitCode, null, `the server died after ${round} terminations:\n${server.output().slice(-3000)}`);
        const r = await admin.query(
          "SELECT pg_terminate_backend(pid) AS t FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
          [dbName],
        );
        terminated += r.rows.filter((x: { t: boolean }) => x.t).length;
      }
    } finally {
      stop = true;
      await Promise.allSettled(workers);
    }
    await Promise.all(workers); // a failed assertion in a worker fails the test
    assert.equal(server.proc.exitCode, null, `the server died:\n${server.output().slice(-3000)}`);
    for (const { what, o } of outcomes) assertAvailableOr503(o, what);
    const unavailable = outcomes.filter((x) => !x.o.ok).length;
    t.diagnostic(
      `20 rounds, ${terminated} backends terminated; ${outcomes.length} SDK calls: ${outcomes.length - unavailable} ok, ${unavailable} × 503; raw 503s ${raw503}`,
    );
    assert.ok(terminated >= 20, `only ${terminated} connections were terminated`);
    assert.match(server.output(), /database unavailable/, "some request met a terminated connection");
    await assertServesNormally();
  });

  it("answers 503 promptly while the database refuses connections, and recovers when it is back", async (t) => {
    await assertServesNormally();
    await proxy.cut();
    const started = Date.now();
    const [who, tag, raw, ready] = await Promise.all([outcome(whoami()), outcome(createTag()), rawWhoami(), readyz()]);
    const elapsed = Date.now() - started;
    for (const o of [who, tag]) {
      assert.equal(o.ok, false);
      assertAvailableOr503(o, "while away");
    }
    assert.equal(raw.status, 503);
    assert.equal(raw.json.code, 14);
    assert.equal(ready.status, 503);
    assert.ok(ready.ms < CONNECT_TIMEOUT_MS + 1_000, `/readyz took ${ready.ms} ms`);
    assert.ok(elapsed < MAX_UNAVAILABLE_MS, `answers took ${elapsed} ms`);
    t.diagnostic(`refused: all answered 503 within ${elapsed} ms (/readyz ${ready.ms} ms)`);

    const pid = server.proc.pid;
    await proxy.restore();
    await until(async () => (await readyz()).status === 200, 15_000, "readiness after the database came back");
    assert.equal(server.proc.pid, pid);
    await assertServesNormally();
  });

  it("answers 503 within the timeouts, not never, when the database hangs", async (t) => {
    await assertServesNormally();
    proxy.hang();
    try {
      const started = Date.now();
      const [who, tag, raw, ready] = await Promise.all([outcome(whoami()), outcome(createTag()), rawWhoami(), readyz()]);
      const elapsed = Date.now() - started;
      for (const o of [who, tag]) {
        assert.equal(o.ok, false);
        assertAvailableOr503(o, "while hung");
      }
      assert.equal(raw.status, 503);
      assert.equal(ready.status, 503);
      assert.ok(ready.ms < CONNECT_TIMEOUT_MS + 1_000, `/readyz took ${ready.ms} ms`);
      assert.ok(elapsed < MAX_UNAVAILABLE_MS, `answers took ${elapsed} ms`);
      t.diagnostic(`hung: all answered 503 within ${elapsed} ms (/readyz ${ready.ms} ms)`);
    } finally {
      await proxy.restore();
    }
    await until(async () => (await readyz()).status === 200, 15_000, "readiness after the database came back");
    await assertServesNormally();
  });

  it("answers 503 after the statement timeout while another session holds ACCESS EXCLUSIVE locks", async (t) => {
    await assertServesNormally();
    const locker = new pg.Client({ connectionString: directUrl });
    await locker.connect();
    try {
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE users, api_keys, organizations IN ACCESS EXCLUSIVE MODE");
      const started = Date.now();
      const [who, tag, ready] = await Promise.all([outcome(whoami()), outcome(createTag()), readyz()]);
      const elapsed = Date.now() - started;
      for (const o of [who, tag]) {
        assert.equal(o.ok, false);
        assertAvailableOr503(o, "while locked");
      }
      assert.ok(elapsed >= STATEMENT_TIMEOUT_MS - 100, `answered after ${elapsed} ms: before the statement timeout?`);
      assert.ok(elapsed < MAX_UNAVAILABLE_MS, `answers took ${elapsed} ms`);
      // The database itself answers: ready.
      assert.equal(ready.status, 200);
      t.diagnostic(`locked: 503 after ${elapsed} ms; /readyz ${ready.ms} ms`);
    } finally {
      await locker.query("ROLLBACK").catch(() => {});
      await locker.end();
    }
    await assertServesNormally();
  });
});
