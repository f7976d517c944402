// Cost as data grows (docs/benchmarks.md §4): request latency in a large organization next to the
// same requests in an (almost) empty one, same run, same machine, rounds interleaved.
//
//   npm run bench:data [-- --postgres <url>] [--skip-sqlite] [--scale F] [--requests N]
//                      [--concurrency C] [--rounds R] [--plans] [--timeout S]
//
//   --postgres URL / BENCH_DATABASE_URL   also on PostgreSQL, in fresh databases created next to
//                                         URL's and dropped afterwards
//   --skip-sqlite                         only PostgreSQL (with --postgres)
//   --scale F / BENCH_SCALE               size of the large organization, as `sigil seed --scale`
//                                         (default 1: 1,000,000 sub-organizations, 1,000,000
//                                         activities, 10,000 users)
//   --requests N / BENCH_REQUESTS         measured requests per scenario, database and round (default 300)
//   --concurrency C / BENCH_CONCURRENCY   requests in flight (default 4)
//   --rounds R / BENCH_ROUNDS             rounds; each alternates empty / seeded (default 2)
//   --plans                               also print the plan of every statement the requests
//                                         run, on the seeded database (PostgreSQL: EXPLAIN
//                                         (ANALYZE, BUFFERS) inside a rolled-back transaction;
//                                         SQLite: EXPLAIN QUERY PLAN), flagging full scans
//   --timeout S / BENCH_TIMEOUT           abort (and clean up) after S seconds (default 3600)
//
// The "empty" organization is seeded by the same command at 100 sub-organizations, 100
// activities and 20 users, so that every filter and cursor has a hit there too. Every figure
// is the server's answer time seen by the client (keep-alive HTTP on loopback), p50 / p99 over
// all rounds; the ratios are seeded / empty (goal: p99 ≤ 2×). On a loaded machine p99 is a
// handful of samples: compare p50 too, and raise --requests for a steadier p99.
import path from "node:path";
import { spawn } from "node:child_process";
import { Agent } from "node:http";
import { request } from "node:http";
import SQLite from "better-sqlite3";
import pg from "pg";
import pino from "pino";
import { guardRun, newSigilInstance, ROOT, SIGIL_BIN, startSigil, type Engine, type Running, type SigilInstance } from "./procs.ts";
import { FastStamper, type Stamped } from "./stamp.ts";
import { num, option } from "./options.ts";
import type { SeedResult } from "../src/cli/seed.ts";

const POSTGRES_URL = option("--postgres", "BENCH_DATABASE_URL");
const SKIP_SQLITE = process.argv.includes("--skip-sqlite");
const SCALE = num("--scale", "BENCH_SCALE", 1, 0.0001, 10);
const REQUESTS = num("--requests", "BENCH_REQUESTS", 300, 10, 100_000);
const CONCURRENCY = num("--concurrency", "BENCH_CONCURRENCY", 4, 1, 256);
const ROUNDS = num("--rounds", "BENCH_ROUNDS", 2, 1, 20);
const PLANS = process.argv.includes("--plans");
const TIMEOUT_S = num("--timeout", "BENCH_TIMEOUT", 3600, 10, 24 * 3600);
const EMPTY_SEED = ["--suborgs", "100", "--activities", "100", "--users", "20", "--wallet-every", "10"];
// Sigil's own OIDC issuer: the seeded identities name it, and the bench mints tokens for them.
const PUBLIC_URL = "https://sigil-bench.invalid";
const GOAL_RATIO = 2;

// ---------------------------------------------------------------- cleanup and watchdog

const { bail } = guardRun(TIMEOUT_S);

const log = (m: string) => process.stdout.write(`${m}\n`);

// ---------------------------------------------------------------- seeding

async function seedInstance(inst: SigilInstance, args: string[]): Promise<SeedResult> {
  const child = spawn(process.execPath, [SIGIL_BIN, "seed", "--json", "--name", "Bench Seeded Org", "--oidc-issuer", PUBLIC_URL, ...args], {
    env: inst.env,
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`sigil seed failed (${code}): ${err}`);
  return JSON.parse(out) as SeedResult;
}

// ---------------------------------------------------------------- requests

interface Req {
  path: string;
  /** A fixed stamped body (replayed), or a fresh one per request (activities). */
  body: () => Stamped;
}

interface Scenario {
  name: string;
  /** The request for a database: its credentials and samples. */
  make(s: SeedResult, stamper: FastStamper, oidcToken: string | undefined): Req | undefined;
  /** What a correct answer holds (checked once per database before measuring). */
  check(s: SeedResult, json: Record<string, unknown>): string | undefined;
}

const fixed = (b: Stamped) => () => b;
const queryReq = (op: string, s: SeedResult, stamper: FastStamper, body: Record<string, unknown>): Req => ({
  path: `/public/v1/query/${op}`,
  body: fixed(stamper.stamp(JSON.stringify({ organizationId: s.organizationId, ...body }))),
});
const ids = (j: Record<string, unknown>) => (j.organizationIds as string[] | undefined) ?? [];

function filterScenario(filter: string): Scenario {
  return {
    name: `list_suborgs ${filter}`,
    make(s, stamper, token) {
      const value = filter === "OIDC_TOKEN" ? token : s.samples.filters[filter]?.value;
      if (!value) return undefined;
      return queryReq("list_suborgs", s, stamper, { filterType: filter, filterValue: value });
    },
    check(s, j) {
      const want = filter === "OIDC_TOKEN" ? s.samples.oidcIdentity?.suborgId : s.samples.filters[filter]?.suborgId;
      return ids(j).includes(want!) ? undefined : `expected sub-organization ${want} in ${JSON.stringify(j).slice(0, 300)}`;
    },
  };
}

let tagCounter = 0;
const SCENARIOS: Scenario[] = [
  {
    name: "list_suborgs (no filter), first page",
    make: (s, st) => queryReq("list_suborgs", s, st, { paginationOptions: { limit: "10" } }),
    check: (_, j) => (ids(j).length === 10 ? undefined : `expected 10 ids, got ${ids(j).length}`),
  },
  {
    name: "list_suborgs (no filter), after a cursor 90% deep",
    make: (s, st) => queryReq("list_suborgs", s, st, { paginationOptions: { limit: "10", after: s.samples.deepSuborgId } }),
    check: (_, j) => (ids(j).length === 10 ? undefined : `expected 10 ids, got ${ids(j).length}`),
  },
  ...["NAME", "USERNAME", "EMAIL", "PHONE_NUMBER", "CREDENTIAL_ID", "PUBLIC_KEY", "WALLET_ACCOUNT_ADDRESS", "OIDC_TOKEN"].map(
    filterScenario,
  ),
  {
    name: "list_activities, first page",
    make: (s, st) => queryReq("list_activities", s, st, { paginationOptions: { limit: "10" } }),
    check: (_, j) => ((j.activities as unknown[]).length === 10 ? undefined : "expected 10 activities"),
  },
  {
    name: "list_activities, after a cursor 90% deep",
    make: (s, st) => queryReq("list_activities", s, st, { paginationOptions: { limit: "10", after: s.samples.deepActivityId } }),
    check: (_, j) => ((j.activities as unknown[]).length === 10 ? undefined : "expected 10 activities"),
  },
  {
    name: "get_user",
    make: (s, st) => queryReq("get_user", s, st, { userId: s.samples.userId }),
    check: (s, j) => ((j.user as { userId?: string } | undefined)?.userId === s.samples.userId ? undefined : "wrong user"),
  },
  {
    name: "stamped activity (create_user_tag)",
    make: (s, st) => ({
      path: "/public/v1/submit/create_user_tag",
      body: () =>
        st.stamp(
          JSON.stringify({
            parameters: { userTagName: `bench-data-${process.pid}-${++tagCounter}`, userIds: [] },
            organizationId: s.organizationId,
            timestampMs: String(Date.now()),
            type: "ACTIVITY_TYPE_CREATE_USER_TAG",
          }),
        ),
    }),
    check: (_, j) =>
      (j.activity as { status?: string } | undefined)?.status === "ACTIVITY_STATUS_COMPLETED" ? undefined : "not completed",
  },
];

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

function post(base: string, r: Req): Promise<{ status: number; json: Record<string, unknown>; ms: number }> {
  const s = r.body();
  const url = new URL(r.path, base);
  const t = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "x-stamp": s.stamp, "content-length": s.body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const ms = performance.now() - t;
          const text = Buffer.concat(chunks).toString();
          let json: Record<string, unknown>;
          try {
            json = JSON.parse(text) as Record<string, unknown>;
          } catch {
            json = { text };
          }
          resolve({ status: res.statusCode ?? 0, json, ms });
        });
        res.on("error", reject);
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error("request timed out")));
    req.on("error", reject);
    req.end(s.body);
  });
}

/** `n` requests, `CONCURRENCY` in flight; every answer must be a 200. */
async function measure(base: string, r: Req, n: number): Promise<number[]> {
  const times: number[] = [];
  let next = 0;
  const failures: string[] = [];
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, n) }, async () => {
      while (next < n) {
        next++;
        const res = await post(base, r);
        if (res.status !== 200) failures.push(`${res.status} ${JSON.stringify(res.json).slice(0, 300)}`);
        times.push(res.ms);
      }
    }),
  );
  if (failures.length) throw new Error(`${failures.length} requests to ${r.path} failed, first: ${failures[0]}`);
  return times;
}

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

// ---------------------------------------------------------------- one engine

interface Side {
  label: "empty" | "seeded";
  inst: SigilInstance;
  seed: SeedResult;
  server: Running;
  stamper: FastStamper;
  token?: string;
}

/** A Sigil OIDC token for the seeded identity, signed with the server's OIDC_TOKEN key. */
async function oidcTokenFor(inst: SigilInstance, s: SeedResult): Promise<string | undefined> {
  const id = s.samples.oidcIdentity;
  if (!id) return undefined;
  const { openService } = await import("../src/service.ts");
  const { activeServiceKey, ServiceKeyCache } = await import("../src/auth/service-keys.ts");
  const { mintOidcToken } = await import("../src/logins/oauth/oidc-issuer.ts");
  const service = await openService([], inst.env);
  try {
    const key = await activeServiceKey(new ServiceKeyCache(), service.store.db, service.masterKey, "OIDC_TOKEN");
    return await mintOidcToken(key, {
      issuer: id.issuer,
      audience: id.audience,
      identity: { sub: id.subject },
      nonce: "bench",
      iat: Math.floor(Date.now() / 1000),
    });
  } finally {
    await service.store.close();
  }
}

async function prepareSide(engine: Engine, label: Side["label"], seedArgs: string[]): Promise<Side> {
  const inst = await newSigilInstance(engine, POSTGRES_URL);
  inst.env.SIGIL_PUBLIC_URL = PUBLIC_URL;
  const t = performance.now();
  const seed = await seedInstance(inst, seedArgs);
  const c = seed.counts;
  log(
    `  ${label}: sigil seed ${seedArgs.join(" ") || "(full size)"} → ${c.suborgs.toLocaleString("en-US")} sub-organizations, ${c.activities.toLocaleString("en-US")} activities, ` +
      `${c.users.toLocaleString("en-US")} users, ${c.rows.toLocaleString("en-US")} rows in ${((performance.now() - t) / 1000).toFixed(1)} s ` +
      `(sub-organizations ${seed.seconds.suborgs.toFixed(1)} s, activities ${seed.seconds.activities.toFixed(1)} s, users ${seed.seconds.users.toFixed(1)} s, indexes/statistics ${seed.seconds.finish.toFixed(1)} s)`,
  );
  const server = await startSigil(inst);
  const side: Side = { label, inst, seed, server, stamper: new FastStamper(seed.apiPublicKey, seed.apiPrivateKey) };
  side.token = await oidcTokenFor(inst, seed);
  return side;
}

interface Row {
  scenario: string;
  empty: number[];
  seeded: number[];
}

async function runEngine(engine: Engine): Promise<Row[]> {
  log(`\n== ${engine} ==`);
  const seedArgs = SCALE === 1 ? [] : ["--scale", String(SCALE)];
  const empty = await prepareSide(engine, "empty", EMPTY_SEED);
  const seeded = await prepareSide(engine, "seeded", seedArgs);
  const sides = [empty, seeded];
  const rows: Row[] = [];
  for (const sc of SCENARIOS) {
    const reqs = sides.map((s) => sc.make(s.seed, s.stamper, s.token));
    if (reqs.some((r) => !r)) {
      log(`  ${sc.name}: skipped (no sample value)`);
      continue;
    }
    // One checked request each, then a short warm-up.
    for (const [i, s] of sides.entries()) {
      const r = await post(s.server.url, reqs[i]!);
      const problem = r.status !== 200 ? `${r.status} ${JSON.stringify(r.json).slice(0, 300)}` : sc.check(s.seed, r.json);
      if (problem) throw new Error(`${engine} ${s.label} ${sc.name}: ${problem}`);
      await measure(s.server.url, reqs[i]!, Math.min(50, REQUESTS));
    }
    const row: Row = { scenario: sc.name, empty: [], seeded: [] };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const i of order) row[sides[i]!.label].push(...(await measure(sides[i]!.server.url, reqs[i]!, REQUESTS)));
    }
    rows.push(row);
    log(`  ${line(row)}`);
  }
  if (PLANS) {
    await seeded.server.stop();
    await printPlans(engine, seeded);
  }
  for (const s of sides) {
    await s.server.stop();
    await s.inst.cleanup();
  }
  return rows;
}

function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: pct(s, 50), p99: pct(s, 99) };
}

function line(r: Row): string {
  const e = stats(r.empty);
  const s = stats(r.seeded);
  const ratio = s.p99 / e.p99;
  return (
    `${r.scenario.padEnd(52)} empty p50 ${e.p50.toFixed(2).padStart(7)} p99 ${e.p99.toFixed(2).padStart(7)} ms | seeded p50 ${s.p50.toFixed(2).padStart(7)} p99 ${s.p99.toFixed(2).padStart(7)} ms | ` +
    `p50 ratio ${(s.p50 / e.p50).toFixed(2).padStart(5)}× | p99 ratio ${ratio.toFixed(2).padStart(5)}× ${ratio <= GOAL_RATIO ? "ok" : `ABOVE ${GOAL_RATIO}×`}`
  );
}

// ---------------------------------------------------------------- plans

interface Captured {
  sql: string;
  params: unknown[];
  scenario: string;
}

/**
 * Runs each scenario's request once in-process (the real app over the seeded store) while
 * recording every statement the drivers receive, then prints the plan of each distinct one.
 */
async function printPlans(engine: Engine, side: Side): Promise<void> {
  log(`\n  plans on the seeded ${engine} database (each distinct statement, under the first scenario that ran it):`);
  const captured = new Map<string, Captured>();
  let current: string | undefined;
  const record = (sql: string, params: unknown[]) => {
    if (current === undefined || captured.has(sql)) return;
    captured.set(sql, { sql, params, scenario: current });
  };
  // Driver-level recording: every statement, whichever module issued it.
  const restore: (() => void)[] = [];
  const probe = new SQLite(":memory:");
  const stmtProto = Object.getPrototypeOf(probe.prepare("select 1")) as Record<string, unknown>;
  probe.close();
  for (const m of ["run", "get", "all", "iterate"]) {
    const orig = stmtProto[m] as (...a: unknown[]) => unknown;
    stmtProto[m] = function (this: { source: string }, ...args: unknown[]) {
      record(this.source, args.length === 1 && Array.isArray(args[0]) ? (args[0] as unknown[]) : args);
      return orig.apply(this, args);
    };
    restore.push(() => (stmtProto[m] = orig));
  }
  const clientProto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const origQuery = clientProto.query;
  clientProto.query = function (this: unknown, ...args: unknown[]) {
    const [q, v] = args;
    if (typeof q === "string") record(q, Array.isArray(v) ? v : []);
    else if (q && typeof q === "object" && typeof (q as { text?: unknown }).text === "string") {
      const o = q as { text: string; values?: unknown[] };
      record(o.text, o.values ?? (Array.isArray(v) ? v : []));
    }
    return origQuery.apply(this, args);
  };
  restore.push(() => (clientProto.query = origQuery));

  const { openService } = await import("../src/service.ts");
  const { buildApp } = await import("../src/server/app.ts");
  const { loginSettingsFrom } = await import("../src/logins/configure.ts");
  const service = await openService([], side.inst.env);
  try {
    const logger = pino({ level: "silent" });
    const app = buildApp({
      logins: loginSettingsFrom(service.config, logger),
      store: service.store,
      state: service.state,
      masterKey: service.masterKey,
      logger,
      bodyLimitBytes: service.config.bodyLimitBytes,
      timestampMaxAgeMs: service.config.timestampMaxAgeMs,
      timestampMaxFutureMs: service.config.timestampMaxFutureMs,
      version: "bench",
    });
    await app.ready();
    try {
      for (const sc of SCENARIOS) {
        const r = sc.make(side.seed, side.stamper, side.token);
        if (!r) continue;
        const b = r.body();
        current = sc.name;
        const res = await app.inject({
          method: "POST",
          url: r.path,
          headers: { "content-type": "application/json", "x-stamp": b.stamp },
          payload: b.body,
        });
        current = undefined;
        if (res.statusCode !== 200) log(`    (${sc.name}: in-process answer ${res.statusCode} ${res.body.slice(0, 200)})`);
      }
    } finally {
      await app.close();
    }
  } finally {
    for (const f of restore) f();
    await service.store.close();
  }

  const statements = [...captured.values()].filter((c) => /^\s*(select|insert|update|delete|with)\b/i.test(c.sql));
  let flagged = 0;
  // A plan, the tables it scans in full and their sizes: printed, and counted when a large one is scanned.
  const judge = (c: Captured, plan: string[], sizes: readonly (readonly [string, number])[]) => {
    const bad = sizes.filter(([, n]) => n > SMALL_TABLE);
    if (bad.length) flagged++;
    printPlan(c, plan, bad, sizes);
  };
  if (engine === "postgres") {
    const client = new pg.Client({ connectionString: side.inst.databaseUrl });
    await client.connect();
    try {
      for (const c of statements) {
        await client.query("BEGIN");
        try {
          const r = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) ${c.sql}`, c.params as unknown[]);
          const plan = r.rows.map((x) => x["QUERY PLAN"]);
          const scanned = [...new Set(plan.flatMap((l) => [...(/Seq Scan on (\w+)/.exec(l)?.slice(1) ?? [])]))];
          judge(
            c,
            plan,
            await Promise.all(
              scanned.map(
                async (t) =>
                  [t, Number((await client.query<{ n: string }>("select count(*) as n from " + quoteIdent(t))).rows[0]?.n)] as const,
              ),
            ),
          );
        } catch (e) {
          log(`    [${c.scenario}] ${c.sql}\n      (no plan: ${(e as Error).message})`);
        } finally {
          await client.query("ROLLBACK");
        }
      }
    } finally {
      await client.end();
    }
  } else {
    const db = new SQLite(path.join(side.inst.dataDir, "sigil.db"), { readonly: true, fileMustExist: true });
    try {
      for (const c of statements) {
        try {
          const plan = (db.prepare(`EXPLAIN QUERY PLAN ${c.sql}`).all(...(c.params as unknown[])) as { detail: string }[]).map(
            (x) => x.detail,
          );
          // SCAN of a table without an index is a full scan; SEARCH (and SCAN of an index
          // walked in order under a LIMIT) is not, nor a scan of a subquery's result.
          const scanned = [...new Set(plan.flatMap((l) => [...(/^SCAN (\w+)(?! USING)(?:\s|$)/.exec(l.trim())?.slice(1) ?? [])]))].filter(
            (t) => t !== "CONSTANT",
          );
          judge(
            c,
            plan,
            scanned.map((t) => [t, (db.prepare(`select count(*) as n from ${quoteIdent(t)}`).get() as { n: number }).n] as const),
          );
        } catch (e) {
          log(`    [${c.scenario}] ${c.sql}\n      (no plan: ${(e as Error).message})`);
        }
      }
    } finally {
      db.close();
    }
  }
  log(
    `  ${statements.length} statements, ${flagged} with a full scan of a table over ${SMALL_TABLE} rows${flagged ? " (marked FULL SCAN above)" : ""}`,
  );
}

/** A full scan of a table this small is the planner's right choice, not a missing index. */
const SMALL_TABLE = 1000;
const quoteIdent = (t: string) => `"${t.replace(/"/g, '""')}"`;

function printPlan(
  c: Captured,
  plan: string[],
  bad: readonly (readonly [string, number])[],
  scanned: readonly (readonly [string, number])[],
): void {
  const note = bad.length
    ? ` FULL SCAN of ${bad.map(([t, n]) => `${t} (${n} rows)`).join(", ")}`
    : scanned.length
      ? ` (full scan only of small tables: ${scanned.map(([t, n]) => `${t} ${n} rows`).join(", ")})`
      : "";
  log(`    [${c.scenario}]${note} ${c.sql.replace(/\s+/g, " ").slice(0, 400)}`);
  for (const l of plan) log(`      ${l}`);
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const engines: Engine[] = [...(SKIP_SQLITE ? [] : (["sqlite"] as const)), ...(POSTGRES_URL ? (["postgres"] as const) : [])];
  if (engines.length === 0) throw new Error("nothing to run: --skip-sqlite without --postgres");
  const os = await import("node:os");
  log(
    `data-size benchmark: scale ${SCALE}, ${REQUESTS} requests × ${ROUNDS} rounds per scenario and database, ${CONCURRENCY} in flight; ` +
      `${os.cpus().length} cores, load average ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(" ")}`,
  );
  const results = new Map<Engine, Row[]>();
  for (const e of engines) results.set(e, await runEngine(e));
  log(`\n== summary (p99 goal: seeded ≤ ${GOAL_RATIO}× empty) ==`);
  for (const [e, rows] of results) {
    log(`${e}:`);
    for (const r of rows) log(`  ${line(r)}`);
  }
  log(
    `load average at the end: ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
  );
}

main().then(
  () => bail(0),
  (e: unknown) => bail(1, `data-size benchmark failed: ${(e as Error).stack ?? String(e)}`),
);
