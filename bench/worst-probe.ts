// The other tenant of `npm run bench:worst` (docs/benchmarks.md §8), in its own process so that
// nothing the attacking side does (building megabyte bodies, stamping) delays it: every
// `--interval` ms it sends GET /healthz and a stamped `whoami` of its own organization, whether
// or not the previous ones have come back (a stalled server then shows as one long wait and
// the ones queued behind it, not as a gap with no samples), and times each from the moment it
// was due.
//
// Driven over IPC by bench/worst.ts: {type: "config", …} once, then {type: "start"} and
// {type: "stop"}; the answer to a stop is {type: "samples", healthz, whoami, errors} (ms).
import { Agent, request } from "node:http";
import { FastStamper } from "./stamp.ts";

interface Config {
  type: "config";
  url: string;
  organizationId: string;
  apiPublicKey: string;
  apiPrivateKey: string;
  intervalMs: number;
}

type Message = Config | { type: "start" } | { type: "stop" } | { type: "exit" };

// A few kept-alive connections: requests due while they are all busy wait for one, and that
// wait is part of what they measure.
const agent = new Agent({ keepAlive: true, maxSockets: 16 });
let config: Config | undefined;
let whoamiBody: Buffer | undefined;
let whoamiStamp = "";
let timer: NodeJS.Timeout | undefined;
let healthz: number[] = [];
let whoami: number[] = [];
let errors: string[] = [];
const inFlight = new Set<Promise<void>>();

function send(path: string, method: "GET" | "POST", into: number[]): void {
  const c = config!;
  const url = new URL(path, c.url);
  const due = performance.now();
  const p = new Promise<void>((resolve) => {
    const headers: Record<string, string | number> =
      method === "POST" ? { "content-type": "application/json", "content-length": whoamiBody!.length, "x-stamp": whoamiStamp } : {};
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method, agent, headers }, (res) => {
      res.resume();
      res.on("end", () => {
        into.push(performance.now() - due);
        if (res.statusCode !== 200) errors.push(`${path}: ${res.statusCode}`);
        resolve();
      });
      res.on("error", (e) => {
        errors.push(`${path}: ${e.message}`);
        resolve();
      });
    });
    req.setTimeout(60_000, () => req.destroy(new Error("no answer in 60 s")));
    req.on("error", (e) => {
      // A request that never got an answer still waited: it counts as its wait.
      into.push(performance.now() - due);
      errors.push(`${path}: ${e.message}`);
      resolve();
    });
    req.end(method === "POST" ? whoamiBody : undefined);
  });
  inFlight.add(p);
  void p.then(() => inFlight.delete(p));
}

function tick(): void {
  send("/healthz", "GET", healthz);
  send("/public/v1/query/whoami", "POST", whoami);
}

// Never outlive the benchmark, however it ended.
process.on("disconnect", () => process.exit(0));

process.on("message", (m: Message) => {
  switch (m.type) {
    case "config": {
      config = m;
      const stamped = new FastStamper(m.apiPublicKey, m.apiPrivateKey).stamp(JSON.stringify({ organizationId: m.organizationId }));
      whoamiBody = stamped.body;
      whoamiStamp = stamped.stamp;
      process.send!({ type: "ready" });
      break;
    }
    case "start":
      healthz = [];
      whoami = [];
      errors = [];
      timer = setInterval(tick, config!.intervalMs);
      process.send!({ type: "started" });
      break;
    case "stop":
      clearInterval(timer);
      void Promise.all([...inFlight]).then(() =>
        process.send!({ type: "samples", healthz, whoami, errors: errors.slice(0, 20), errorCount: errors.length }),
      );
      break;
    case "exit":
      agent.destroy();
      process.disconnect();
      break;
  }
});
