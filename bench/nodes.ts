// Several API nodes on one PostgreSQL: the same load (stamped `whoami`, stamped
// `create_user_tag`) sent to one `sigil serve` process, then spread over two, in the same run
// and on the same database, rounds interleaved. For each run it prints requests/s and p99, the
// CPU seconds each node process spent per request, the PostgreSQL processes' CPU per request
// (this database's backends, the server's background processes, and, apart, other databases'
// backends: other load on the box), the load generator's CPU, and each node's peak RSS; then a
// paper projection from 1 to 8 nodes, each on its own machine, from those per-request costs.
//
//   npm run bench:nodes [-- --postgres <url>] [--nodes N] [--connections N] [--duration S]
//                       [--warmup S] [--rounds R] [--no-baseline] [--timeout S]
//
//   --postgres URL / BENCH_DATABASE_URL  where to create the throw-away database
//                                        (default postgres://postgres@127.0.0.1:5432/test)
//   --nodes N / BENCH_NODES               API processes in the spread runs (default 2)
//   --connections N / BENCH_CONNECTIONS   keep-alive connections in all, spread evenly over the
//                                         nodes (default 32: the same as `npm run bench`)
//   --duration S / BENCH_DURATION         measured seconds per run (default 10)
//   --warmup S / BENCH_WARMUP             unmeasured seconds before each run (default 2)
//   --rounds R / BENCH_ROUNDS             1-node/N-node pairs per scenario, order alternating (default 2)
//   --db-cores C / BENCH_DB_CORES         database cores assumed by the projection (default: this box's)
//   --no-baseline                         skip the bare-fastify run
//   --timeout S / BENCH_TIMEOUT           abort (and clean up) after S seconds in all (default 300)
//
// CPU comes from /proc (utime + stime of each process, sampled every 200 ms so that a backend
// that exits mid-run still counts up to its last sample); Linux only. One autocannon instance
// drives all nodes: it hands out its connections round-robin over the node URLs (what an HTTP
// load balancer with least-connections does at steady state), so p99 is over every request.
import os from "node:os";
import { readFileSync, readdirSync } from "node:fs";
import { randomBytes, randomUUID } from "node:crypto";
import autocannon from "autocannon";
import {
  cleanupAll,
  guardRun,
  newSigilInstance,
  sigilInit,
  startBaseline,
  startSigil,
  tempDir,
  type InitResult,
  type Running,
  type SigilInstance,
} from "./procs.ts";
import { FastStamper, sdkStamp, newP256KeyPair, type Stamped } from "./stamp.ts";
import { num, option } from "./options.ts";

const POSTGRES_URL = option("--postgres", "BENCH_DATABASE_URL") ?? "postgres://postgres@127.0.0.1:5432/test";
const NODES = num("--nodes", "BENCH_NODES", 2, 2, 8);
const CONNECTIONS = num("--connections", "BENCH_CONNECTIONS", 32, 2, 1024);
const DURATION_S = num("--duration", "BENCH_DURATION", 10, 1, 60);
const WARMUP_S = num("--warmup", "BENCH_WARMUP", 2, 0, 30);
const ROUNDS = num("--rounds", "BENCH_ROUNDS", 2, 1, 10);
const DB_CORES = num("--db-cores", "BENCH_DB_CORES", os.cpus().length, 1, 256);
const NO_BASELINE = process.argv.includes("--no-baseline");
const TIMEOUT_S = num("--timeout", "BENCH_TIMEOUT", 300, 10, 3600);
const TICK_S = 1 / 100; // USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s on Linux

// ---------------------------------------------------------------- cleanup and watchdog

const { bail, watchdog } = guardRun(TIMEOUT_S);

const log = (msg: string) => process.stdout.write(`${msg}\n`);
const fmtInt = (n: number) => Math.round(n).toLocaleString("en-US");
const ms = (seconds: number) => (seconds * 1000).toFixed(3);

// ---------------------------------------------------------------- /proc accounting

/** utime + stime of a process in seconds, and its command line; undefined once it is gone. */
function procCpu(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: fields count from the last ')'.
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) * TICK_S; // fields 14 and 15
  } catch {
    return undefined;
  }
}

function procRssMb(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

type PgKind = "bench" | "background" | "other";

/** Every PostgreSQL server process on the box, by kind: this database's backends, the server's own background processes, other databases' backends. */
function postgresProcesses(database: string): Map<number, PgKind> {
  const out = new Map<number, PgKind>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let comm: string;
    let cmdline: string;
    try {
      comm = readFileSync(`/proc/${name}/comm`, "utf8").trim();
      if (comm !== "postgres") continue;
      cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8").replace(/\0/g, " ");
    } catch {
      continue;
    }
    // A backend's title: "postgres: <cluster>: <user> <database> <client> <state>".
    const backend = /\d+\.\d+\.\d+\.\d+\(\d+\)|\[local\]/.test(cmdline);
    out.set(Number(name), backend ? (cmdline.includes(` ${database} `) ? "bench" : "other") : "background");
  }
  return out;
}

/**
 * CPU spent by the node processes, PostgreSQL's processes and this one between start() and
 * stop(). Sampled every 200 ms: a backend that exits counts up to its last sample, one that
 * appears counts from zero.
 */
class CpuMeter {
  #first = new Map<number, number>();
  #last = new Map<number, number>();
  #kinds = new Map<number, PgKind>();
  #timer: NodeJS.Timeout | undefined;
  #self = process.cpuUsage();
  #t0 = 0;
  #nodeStart: number[] = [];

  constructor(
    private readonly database: string,
    private readonly nodePids: number[],
  ) {}

  #sample(initial: boolean): void {
    for (const [pid, kind] of postgresProcesses(this.database)) {
      const cpu = procCpu(pid);
      if (cpu === undefined) continue;
      if (!this.#first.has(pid)) this.#first.set(pid, initial ? cpu : 0);
      this.#last.set(pid, cpu);
      this.#kinds.set(pid, kind);
    }
  }

  start(): void {
    this.#self = process.cpuUsage();
    this.#t0 = performance.now();
    this.#nodeStart = this.nodePids.map((p) => procCpu(p) ?? 0);
    this.#sample(true);
    this.#timer = setInterval(() => this.#sample(false), 200);
  }

  stop(): { wallS: number; nodes: number[]; pg: Record<PgKind, number>; loadGenerator: number } {
    clearInterval(this.#timer);
    this.#sample(false);
    const wallS = (performance.now() - this.#t0) / 1000;
    const nodes = this.nodePids.map((p, i) => (procCpu(p) ?? 0) - this.#nodeStart[i]!);
    const pg: Record<PgKind, number> = { bench: 0, background: 0, other: 0 };
    for (const [pid, last] of this.#last) pg[this.#kinds.get(pid)!] += last - this.#first.get(pid)!;
    const self = process.cpuUsage(this.#self);
    return { wallS, nodes, pg, loadGenerator: (self.user + self.system) / 1e6 };
  }
}

/** Peak RSS of each node over the whole benchmark (goal: under 200 MB per API process). */
class RssWatch {
  readonly peakMb: number[];
  #timer: NodeJS.Timeout;
  constructor(pids: number[]) {
    this.peakMb = pids.map(() => 0);
    this.#timer = setInterval(() => pids.forEach((p, i) => (this.peakMb[i] = Math.max(this.peakMb[i]!, procRssMb(p) ?? 0))), 250);
    this.#timer.unref();
  }
  stop(): void {
    clearInterval(this.#timer);
  }
}

// ---------------------------------------------------------------- load

class BodyPool {
  #i = 0;
  dry = false;
  constructor(readonly items: Stamped[]) {}
  next(): Stamped | undefined {
    const s = this.items[this.#i];
    if (s) this.#i++;
    else this.dry = true;
    return s;
  }
}

function load(urls: string[], path: string, seconds: number, source: { fixed: Stamped } | { pool: BodyPool }): Promise<autocannon.Result> {
  let instance: autocannon.Instance | undefined;
  const request: autocannon.Request =
    "fixed" in source
      ? { method: "POST", path, body: source.fixed.body, headers: { "content-type": "application/json", "x-stamp": source.fixed.stamp } }
      : {
          method: "POST",
          path,
          setupRequest: (req) => {
            const s = source.pool.next();
            if (!s) {
              instance?.stop();
              return req;
            }
            req.body = s.body;
            req.headers = { ...req.headers, "content-type": "application/json", "x-stamp": s.stamp };
            return req;
          },
        };
  const opts: autocannon.Options = {
    // Several URLs: autocannon deals its connections out round-robin over them.
    url: (urls.length === 1 ? urls[0]! : urls) as unknown as string,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
    timeout: 10,
    requests: [request],
  };
  return new Promise((resolve, reject) => {
    instance = autocannon(opts, (err: unknown, r: autocannon.Result) => (err ? reject(err as Error) : resolve(r)));
  });
}

async function post(url: string, s: Stamped): Promise<{ status: number; json: unknown }> {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-stamp": s.stamp },
    body: new Uint8Array(s.body),
  });
  const text = await r.text();
  try {
    return { status: r.status, json: JSON.parse(text) };
  } catch {
    return { status: r.status, json: text };
  }
}

const RUN_TAG = randomBytes(4).toString("hex");
let tagCounter = 0;
const activityBody = (creds: InitResult) =>
  JSON.stringify({
    type: "ACTIVITY_TYPE_CREATE_USER_TAG",
    timestampMs: String(Date.now()),
    organizationId: creds.organizationId,
    parameters: { userTagName: `nodes-${RUN_TAG}-${++tagCounter}`, userIds: [] },
  });

// ---------------------------------------------------------------- runs

interface Run {
  scenario: "whoami" | "activity" | "baseline";
  nodes: number;
  rps: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  /** CPU seconds per request, per node process. */
  nodeCpuPerReq: number[];
  /** Node CPU over the run as a share of one core, per node. */
  nodeCores: number[];
  pgBenchPerReq: number;
  pgBackgroundPerReq: number;
  /** Other databases' backends over the run, in cores (load on the box, not ours). */
  pgOtherCores: number;
  loadGenPerReq: number;
  problems: string[];
}

async function measure(
  scenario: Run["scenario"],
  targets: Running[],
  meterFor: (pids: number[]) => CpuMeter,
  path: string,
  source: (seconds: number) => { fixed: Stamped } | { pool: BodyPool },
): Promise<Run> {
  const urls = targets.map((t) => t.url);
  if (WARMUP_S > 0) await load(urls, path, WARMUP_S, source(WARMUP_S));
  const src = source(DURATION_S);
  const meter = meterFor(targets.map((t) => t.proc.pid!));
  meter.start();
  const r = await load(urls, path, DURATION_S, src);
  const cpu = meter.stop();
  const n = Math.max(r.requests.total, 1);
  const problems: string[] = [];
  if (r.non2xx > 0) problems.push(`${r.non2xx} non-2xx`);
  if (r.errors > 0) problems.push(`${r.errors} errors (${r.timeouts} timeouts)`);
  if ("pool" in src && src.pool.dry) problems.push("ran out of pre-stamped bodies: run stopped early");
  return {
    scenario,
    nodes: targets.length,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    total: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    nodeCpuPerReq: cpu.nodes.map((c) => c / n),
    nodeCores: cpu.nodes.map((c) => c / cpu.wallS),
    pgBenchPerReq: cpu.pg.bench / n,
    pgBackgroundPerReq: cpu.pg.background / n,
    pgOtherCores: cpu.pg.other / cpu.wallS,
    loadGenPerReq: cpu.loadGenerator / n,
    problems,
  };
}

function describeRun(r: Run): string {
  const per = r.nodeCpuPerReq.map((c, i) => `${"ABCDEFGH"[i]} ${ms(c)} ms (${(100 * r.nodeCores[i]!).toFixed(0)}% of a core)`).join(", ");
  return (
    `  → ${fmtInt(r.rps)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ${fmtInt(r.total)} requests, non-2xx ${r.non2xx}, errors ${r.errors}\n` +
    `    CPU per request: node ${per}; PostgreSQL: this database's backends ${ms(r.pgBenchPerReq)} ms + background ${ms(r.pgBackgroundPerReq)} ms; ` +
    `load generator ${ms(r.loadGenPerReq)} ms; other databases' backends busy ${(100 * r.pgOtherCores).toFixed(0)}% of a core (other load on the box)` +
    (r.problems.length ? `\n    INVALID: ${r.problems.join("; ")}` : "")
  );
}

// ---------------------------------------------------------------- report

interface Summary {
  scenario: string;
  nodes: number;
  rps: number;
  p99: number;
  nodeMs: number;
  pgMs: number;
  loadGenMs: number;
}

function summarize(runs: Run[], scenario: Run["scenario"], nodes: number): Summary {
  const rs = runs.filter((r) => r.scenario === scenario && r.nodes === nodes);
  const mean = (f: (r: Run) => number) => rs.reduce((a, r) => a + f(r), 0) / rs.length;
  return {
    scenario,
    nodes,
    rps: mean((r) => r.rps),
    p99: Math.max(...rs.map((r) => r.p99)),
    // All node processes together: the API tier's CPU per request.
    nodeMs: 1000 * mean((r) => r.nodeCpuPerReq.reduce((a, c) => a + c, 0)),
    pgMs: 1000 * mean((r) => r.pgBenchPerReq + r.pgBackgroundPerReq),
    loadGenMs: 1000 * mean((r) => r.loadGenPerReq),
  };
}

function table(head: string[], rows: string[][], right: Set<number>): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

/**
 * Paper projection: N nodes, each on its own machine with as many cores as this one, in front
 * of one PostgreSQL with DB_CORES cores. Each tier's ceiling is its cores over its CPU per
 * request; throughput is the lower one. Ignores the network hop, lock waits and commit
 * latency (bounded by the connections, not CPU), so it is an upper bound.
 */
function projection(s: Summary): string {
  const nodeCores = os.cpus().length;
  const perNode = (nodeCores * 1000) / s.nodeMs;
  const db = (DB_CORES * 1000) / s.pgMs;
  const rows = Array.from({ length: 8 }, (_, i) => {
    const n = i + 1;
    const api = n * perNode;
    const rate = Math.min(api, db);
    return [
      String(n),
      fmtInt(api),
      fmtInt(db),
      fmtInt(rate),
      api < db ? "API nodes" : "the database",
      `${((100 * rate) / db).toFixed(0)}%`,
    ];
  });
  const knee = Math.ceil(db / perNode);
  const bigger = [...new Set([DB_CORES, 4, 8, 16, 32])]
    .sort((a, b) => a - b)
    .map((cores) => {
      const cap = (cores * 1000) / s.pgMs;
      return `${cores} cores → ${fmtInt(cap)} req/s, reached at ${Math.ceil(cap / perNode)} node(s)`;
    })
    .join("; ");
  return (
    `${s.scenario}: API node ${s.nodeMs.toFixed(3)} ms CPU/request (→ ${fmtInt(perNode)} req/s per ${nodeCores}-core node), ` +
    `PostgreSQL ${s.pgMs.toFixed(3)} ms CPU/request (→ ${fmtInt(db)} req/s on ${DB_CORES} cores)\n` +
    table(["nodes", "API tier req/s", "database req/s", "projected req/s", "bound by", "database busy"], rows, new Set([0, 1, 2, 3, 5])) +
    `\n  the database is the limit from ${knee} node(s) on (${knee} × ${fmtInt(perNode)} ≥ ${fmtInt(db)} req/s); beyond it more nodes add nothing` +
    `\n  a bigger database moves the limit, not the shape (CPU bound only; commit latency and lock waits come on top): ${bigger}`
  );
}

// ---------------------------------------------------------------- main

async function runBaseline(): Promise<Run> {
  const kp = newP256KeyPair();
  const fake: InitResult = {
    organizationId: randomUUID(),
    userId: randomUUID(),
    apiKeyId: "",
    apiPublicKey: kp.publicKey,
    apiPrivateKey: kp.privateKey,
  };
  const sample = new FastStamper(kp.publicKey, kp.privateKey).stamp(activityBody(fake));
  const server = await startBaseline();
  try {
    const meter = (pids: number[]) => new CpuMeter("-", pids);
    return await measure("baseline", [server], meter, "/echo", () => ({ fixed: sample }));
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  log(`Sigil several-nodes benchmark — node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "unknown CPU"})`);
  log(
    `load at start: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(", ")} (1/5/15 min; other work on the box weighs on every figure)`,
  );
  log(
    `autocannon: ${CONNECTIONS} connections in all (dealt round-robin over the nodes' URLs), ${WARMUP_S} s warm-up + ${DURATION_S} s measured per run, ` +
      `${ROUNDS} round(s) of 1 node vs ${NODES} nodes, alternating; load generator, nodes and PostgreSQL share this box's cores`,
  );
  const baseline = NO_BASELINE ? undefined : await runBaseline();
  if (baseline) log(`baseline: bare fastify POST /echo\n${describeRun(baseline)}`);

  const inst: SigilInstance = await newSigilInstance("postgres", POSTGRES_URL);
  const database = new URL(inst.databaseUrl!).pathname.slice(1);
  const creds = await sigilInit(inst, "Bench Nodes Org");
  // N processes on one database: same master key and configuration, a data dir each.
  const nodeEnv = (i: number): SigilInstance => ({
    ...inst,
    env: { ...inst.env, SIGIL_DATA_DIR: i === 0 ? inst.dataDir : tempDir("sigil-bench-node-"), SIGIL_TVC_INGRESS_PORT: "0" },
  });
  const nodes = await Promise.all(Array.from({ length: NODES }, (_, i) => startSigil(nodeEnv(i))));
  const rss = new RssWatch(nodes.map((n) => n.proc.pid!));
  log(
    `\nPostgreSQL database ${database} (dropped afterwards); ${NODES} × sigil serve (pids ${nodes.map((n) => n.proc.pid).join(", ")}), LOG_LEVEL=${inst.env.LOG_LEVEL}`,
  );
  const meterFor = (pids: number[]) => new CpuMeter(database, pids);

  // Both paths checked once at every node with the SDK's own stamper before anything is timed.
  const whoamiBody = JSON.stringify({ organizationId: creds.organizationId });
  const whoami = await sdkStamp(whoamiBody, creds.apiPublicKey, creds.apiPrivateKey);
  const stamper = new FastStamper(creds.apiPublicKey, creds.apiPrivateKey);
  for (const n of nodes) {
    const w = await post(`${n.url}/public/v1/query/whoami`, whoami);
    if (w.status !== 200 || (w.json as { userId?: string }).userId !== creds.userId)
      throw new Error(`whoami check at ${n.url} failed (${w.status}): ${JSON.stringify(w.json)}`);
    const a = await post(
      `${n.url}/public/v1/submit/create_user_tag`,
      await sdkStamp(activityBody(creds), creds.apiPublicKey, creds.apiPrivateKey),
    );
    const status = (a.json as { activity?: { status?: string } }).activity?.status;
    if (a.status !== 200 || status !== "ACTIVITY_STATUS_COMPLETED")
      throw new Error(`create_user_tag check at ${n.url} failed (${a.status}): ${JSON.stringify(a.json)}`);
  }
  log(`checked at every node: SDK-stamped whoami and create_user_tag answer 200`);

  // Fresh bodies for a run: enough for the fastest rate seen so far, stamped right before it.
  let fastestActivity = 1500;
  const activityPool = (seconds: number) => {
    const count = Math.ceil(fastestActivity * 1.6 * seconds) + 2000;
    return { pool: new BodyPool(Array.from({ length: count }, () => stamper.stamp(activityBody(creds)))) };
  };

  const runs: Run[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [1, NODES] : [NODES, 1];
    for (const scenario of ["whoami", "activity"] as const) {
      for (const n of order) {
        const targets = nodes.slice(0, n);
        log(
          `\nround ${round + 1}: stamped ${scenario === "whoami" ? "query whoami (one stamp replayed)" : "activity create_user_tag (a fresh body per request)"}, ${n} node(s)`,
        );
        const r =
          scenario === "whoami"
            ? await measure("whoami", targets, meterFor, "/public/v1/query/whoami", () => ({ fixed: whoami }))
            : await measure("activity", targets, meterFor, "/public/v1/submit/create_user_tag", activityPool);
        if (scenario === "activity") fastestActivity = Math.max(fastestActivity, r.rps);
        log(describeRun(r));
        runs.push(r);
      }
    }
  }
  rss.stop();

  const summaries = (["whoami", "activity"] as const).flatMap((s) => [summarize(runs, s, 1), summarize(runs, s, NODES)]);
  const base = baseline?.rps;
  log(
    `\n${table(
      [
        "scenario (PostgreSQL)",
        "nodes",
        "req/s",
        "p99 ms",
        "vs baseline",
        "vs 1 node",
        "node CPU ms/req",
        "PG CPU ms/req",
        "PG share",
        "loadgen ms/req",
      ],
      summaries.map((s) => {
        const one = summaries.find((o) => o.scenario === s.scenario && o.nodes === 1)!;
        return [
          s.scenario === "whoami" ? "stamped query (whoami)" : "stamped activity (create_user_tag)",
          String(s.nodes),
          fmtInt(s.rps),
          String(s.p99),
          base ? `${((100 * s.rps) / base).toFixed(1)}%` : "-",
          `${((100 * s.rps) / one.rps).toFixed(0)}%`,
          s.nodeMs.toFixed(3),
          s.pgMs.toFixed(3),
          `${((100 * s.pgMs) / (s.pgMs + s.nodeMs)).toFixed(0)}%`,
          s.loadGenMs.toFixed(3),
        ];
      }),
      new Set([1, 2, 3, 4, 5, 6, 7, 8, 9]),
    )}`,
  );
  log(
    `(means over ${ROUNDS} round(s); p99 the worst round; node CPU summed over the node processes; PG = this database's backends + the server's ` +
      `background processes; PG share = the database's part of the server-side CPU, node + PG)`,
  );
  if (base) log(`baseline (bare fastify, same run): ${fmtInt(base)} req/s, p99 ${baseline!.p99} ms`);
  log(
    `peak RSS per node over the run: ${rss.peakMb.map((m, i) => `${"ABCDEFGH"[i]} ${m.toFixed(0)} MB`).join(", ")} (goal: under 200 MB per API process)`,
  );

  log(
    `\nprojection on paper: 1 → 8 nodes, each on its own ${os.cpus().length}-core machine, one PostgreSQL on ${DB_CORES} cores (--db-cores), CPU per request as measured at ${NODES} nodes:`,
  );
  for (const s of summaries.filter((x) => x.nodes === NODES)) log(`\n${projection(s)}`);

  const invalid = runs.filter((r) => r.problems.length);
  for (const r of invalid) log(`INVALID: ${r.scenario} at ${r.nodes} node(s): ${r.problems.join("; ")}`);
  log(
    `\ndone in ${((performance.now() - started) / 1000).toFixed(0)} s; load at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(", ")}`,
  );
  await Promise.all(nodes.map((n) => n.stop()));
  await cleanupAll();
  clearTimeout(watchdog);
  process.exitCode = invalid.length ? 1 : 0;
}

main().catch((e: unknown) => void bail(1, `benchmark failed: ${(e as Error).stack ?? String(e)}`));
