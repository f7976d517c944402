// SIGTERM with clients holding keep-alive connections: the request in flight completes,
// idle connections are closed, the process exits 0 well within the grace period, and no
// new connection is accepted afterwards.
import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { once } from "node:events";
import type { Socket } from "node:net";
import { engines, newInstance, startServer, type Instance, type RunningServer } from "../helpers/server.ts";

const GRACE_MS = 5_000;

/** Resolves once `cond()` holds, checking every 10 ms; fails after `ms`. */
async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function get(agent: http.Agent, url: string, sockets: Set<Socket>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode!));
    });
    req.on("socket", (s) => sockets.add(s));
    req.on("error", reject);
  });
}

for (const engine of engines()) {
  describe(`graceful shutdown (${engine.name})`, { skip: engine.skip, timeout: 60_000 }, () => {
    let inst: Instance;
    let server: RunningServer | undefined;
    after(async () => {
      await server?.kill();
      await inst?.cleanup();
    });

    it("drains the request in flight, closes idle keep-alive connections and exits 0 within the grace period", async (t) => {
      inst = await newInstance(engine.name, { SIGIL_SHUTDOWN_GRACE_MS: String(GRACE_MS) });
      server = await startServer(inst);
      const srv = server;

      // Several keep-alive connections that each made a request and now sit idle.
      const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
      const idle = new Set<Socket>();
      const statuses = await Promise.all(Array.from({ length: 4 }, () => get(agent, `${srv.url}/healthz`, idle)));
      assert.deepEqual(statuses, [200, 200, 200, 200]);
      assert.equal(idle.size, 4, "four distinct keep-alive connections");
      const idleClosed = [...idle].map((s) => once(s, "close"));

      // One request in flight: headers and half of the body sent, the rest after SIGTERM.
      const body = JSON.stringify({ organizationId: "00000000-0000-4000-8000-000000000000" });
      const inflightAgent = new http.Agent({ keepAlive: true });
      const inflight = http.request(`${srv.url}/public/v1/query/whoami?inflight=1`, {
        method: "POST",
        agent: inflightAgent,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      });
      const answered = new Promise<{ status: number; connection: string | undefined; json: { code?: number } }>((resolve, reject) => {
        inflight.on("response", (res) => {
          let text = "";
          res.on("data", (c: Buffer) => (text += c.toString()));
          res.on("end", () => resolve({ status: res.statusCode!, connection: res.headers.connection, json: JSON.parse(text) }));
        });
        inflight.on("error", reject);
      });
      inflight.write(body.slice(0, 10));
      // The server has the request once it logged it.
      await until(() => srv.output().includes("/public/v1/query/whoami?inflight=1"), 10_000, "the in-flight request to reach the server");

      const exited = once(srv.proc, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
      const signalled = Date.now();
      srv.proc.kill("SIGTERM");
      await until(() => srv.output().includes('"shutting down"'), 5_000, "the shutdown to begin");
      // Idle connections are closed by the server at once, not after the keep-alive timeout.
      await Promise.all(idleClosed);
      const idleClosedMs = Date.now() - signalled;

      // The in-flight request is still answered (here: 401, it carries no stamp), and told
      // that its connection ends.
      inflight.end(body.slice(10));
      const res = await answered;
      assert.equal(res.status, 401);
      assert.equal(typeof res.json.code, "number", "the SDK error body");
      assert.equal(res.connection, "close");

      const [code, signal] = await exited;
      const exitMs = Date.now() - signalled;
      t.diagnostic(`idle keep-alive connections closed after ${idleClosedMs} ms; exit after ${exitMs} ms (grace ${GRACE_MS} ms)`);
      assert.equal(signal, null);
      assert.equal(code, 0, srv.output().slice(-2000));
      assert.ok(exitMs < GRACE_MS, `exited after ${exitMs} ms`);
      assert.match(srv.output(), /"msg":"stopped"/);

      // Nothing listens any more.
      const refused = await new Promise<string>((resolve) => {
        const s = net.connect(srv.port, "127.0.0.1");
        s.on("connect", () => {
          s.destroy();
          resolve("connected");
        });
        s.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
      });
      assert.equal(refused, "ECONNREFUSED");
      agent.destroy();
      inflightAgent.destroy();
    });

    it("cuts a request still in flight when the grace period is over, and exits 1", async () => {
      await inst?.cleanup();
      const graceMs = 1_000;
      inst = await newInstance(engine.name, { SIGIL_SHUTDOWN_GRACE_MS: String(graceMs) });
      server = await startServer(inst);
      const srv = server;
      // A client that sends half a request and never the rest.
      const stuck = net.connect(srv.port, "127.0.0.1");
      await once(stuck, "connect");
      stuck.write(
        "POST /public/v1/query/whoami?stuck=1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
      );
      await until(() => srv.output().includes("/public/v1/query/whoami?stuck=1"), 10_000, "the stuck request to reach the server");
      const cut = once(stuck, "close");
      const exited = once(srv.proc, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
      const signalled = Date.now();
      srv.proc.kill("SIGTERM");
      const [code] = await exited;
      const exitMs = Date.now() - signalled;
      await cut;
      assert.equal(code, 1);
      assert.ok(exitMs >= graceMs - 50 && exitMs < graceMs + 2_000, `exited after ${exitMs} ms`);
      assert.match(srv.output(), /shutdown grace period over/);
    });
  });
}
