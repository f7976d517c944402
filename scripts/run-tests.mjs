#!/usr/bin/env node
// `npm test`: every test/**/*.test.ts through node's own test runner (TypeScript via tsx).
// Node 20's runner does not glob by itself, hence this file list.
//
// node scripts/run-tests.mjs [--node-test-flag …] [files…]: flags (e.g. --test-reporter=tap)
// go to every runner process, files narrow the run to them (docs/testing.md §4). `--list`
// prints the jobs and their files instead of running them.
import { readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return find(p);
    return name.endsWith(".test.ts") ? [p] : [];
  });
}
const args = process.argv.slice(2);
const listOnly = args.includes("--list");
const flags = args.filter((a) => a.startsWith("--") && a !== "--list");
const only = args.filter((a) => !a.startsWith("--"));
const files = (only.length ? only.map((f) => path.resolve(f)) : find(path.join(root, "test"))).sort();
// TEST_DATABASE_URL: the database servers the engines that need one run on, one URL or several
// separated by commas (test/helpers/engines.ts); the PostgreSQL one also holds the run's template.
const pgServer = (process.env.TEST_DATABASE_URL ?? "")
  .split(",")
  .map((u) => u.trim())
  .find((u) => /^postgres(ql)?:\/\//.test(u));
if (!process.env.TEST_DATABASE_URL) {
  console.log(
    "note: TEST_DATABASE_URL is not set; the tests of engines with a database server (PostgreSQL) will be skipped (they run in CI).",
  );
}
// The service's bundle, built from the current sources before any test runs (docs/testing.md §4):
// every server and CLI process an end-to-end test spawns (bin/sigil.mjs) then starts from it,
// for about 1.2 s of CPU where tsx, which loads the whole service through its loader thread in
// each process, took 8–9 s. The run pins it (SIGIL_BUNDLE_PINNED): bin/sigil.mjs otherwise falls
// back to tsx as soon as a file under src/ is newer than the bundle, and a source edited during
// a run then made every later process seven times dearer — on a loaded machine a server printed
// nothing for over a minute. SIGIL_NO_BUNDLE=1 keeps the tests on tsx throughout.
if (process.env.SIGIL_NO_BUNDLE !== "1" && !listOnly) {
  const b = spawnSync(process.execPath, [path.join(root, "scripts/build.mjs")], { stdio: "inherit", cwd: root });
  if (b.status !== 0) {
    console.error("scripts/build.mjs failed: the sources do not bundle");
    process.exit(b.status ?? 1);
  }
  process.env.SIGIL_BUNDLE_PINNED = "1";
}

// Files that measure wall-clock deadlines tight enough (a few hundred milliseconds, or an event
// loop that must not stall for 100 ms) that a busy machine could miss them: they run after the
// others, one at a time (docs/testing.md §4).
const SERIAL = [
  "test/e2e/shutdown.test.ts",
  "test/e2e/sqlite-lock.test.ts",
  "test/e2e/postgres-outage.test.ts",
  "test/store/sqlite-lock-wait.test.ts",
].map((f) => path.join(root, f));
// Expected seconds of each long file in a full run (measured with three jobs side by side;
// anything unlisted counts 8 s). Jobs start longest first, so that none is left to run alone
// at the end, and the end-to-end groups below are packed by them.
const SECONDS = {
  "test/ops/all.test.ts": 160, // in two shards of about 80 s each
  "test/e2e/fuzz.test.ts": 64,
  "test/e2e/webhook-retries.test.ts": 46,
  "test/e2e/auth-proxy-browser.test.ts": 41,
  "test/e2e/webhooks.test.ts": 36,
  "test/e2e/cli-and-ops.test.ts": 34,
  "test/e2e/auth-proxy.test.ts": 32,
  "test/e2e/tvc.test.ts": 25,
  "test/e2e/security-tvc.test.ts": 23,
  "test/e2e/network-rate-limit.test.ts": 21,
  "test/e2e/security-proxy-signups.test.ts": 40, // waits out a 4 s window twice per engine
  "test/e2e/oauth-flow.test.ts": 18,
  "test/e2e/otp-flow.test.ts": 15,
  "test/e2e/wallet-kit-browser.test.ts": 135, // Chromium, both engines; the kit waits 5 s for a captcha token at each passkey sign-up and OTP start
  "test/e2e/client-otp-alias.test.ts": 35, // Chromium, both engines
  "test/e2e/client-pack.test.ts": 30, // npm pack and npm install, three times
  "test/e2e/console.test.ts": 70, // Chromium, both engines, nine steps each
  "test/e2e/console-shell.test.ts": 35, // Chromium
};
const seconds = (f) => SECONDS[path.relative(root, f)] ?? 8;

// The tiers, named by what their tests touch (docs/testing.md §1). The files of each "together"
// tier run in one process (test/helpers/together.ts), taking about the seconds given in a full
// run; the op files of test/ops/ run through test/ops/all.test.ts, the end-to-end files in groups.
const e2eDir = path.join(root, "test", "e2e") + path.sep;
const opsAll = path.join(root, "test", "ops", "all.test.ts");
const TOGETHER = [
  { name: "unit", dir: path.join(root, "test", "unit") + path.sep, seconds: 22 },
  { name: "store", dir: path.join(root, "test", "store") + path.sep, seconds: 20 },
  { name: "in-process", dir: path.join(root, "test", "ops") + path.sep, seconds: 15 },
];
const tierOf = (f) => (f === opsAll || !f.endsWith(".test.ts") ? undefined : TOGETHER.find((t) => f.startsWith(t.dir)));
const isE2e = (f) => f.startsWith(e2eDir) && f.endsWith(".test.ts");

/** Packs files into at most `n` groups of about equal expected time (longest first, each to the lightest group). */
function pack(list, n) {
  const groups = Array.from({ length: Math.min(n, list.length) }, () => ({ files: [], seconds: 0 }));
  for (const f of [...list].sort((a, b) => seconds(b) - seconds(a))) {
    const g = groups.reduce((a, b) => (b.seconds < a.seconds ? b : a));
    g.files.push(f);
    g.seconds += seconds(f);
  }
  return groups;
}

/**
 * The jobs of a phase, each one `node --test` process (docs/testing.md §4):
 * - the files of each tier that runs together — unit, store, the in-process files beside the
 *   operations — in one process per tier (test/helpers/together.ts, TEST_FILES): they are
 *   quick, and a process each cost about a second of start-up per file;
 * - the end-to-end files packed into groups run one after another in a process
 *   (test/e2e/group.ts, TEST_E2E_FILES): a process per file cost 1.3 s of CPU before its
 *   first test (node, tsx's loader thread, the SDK clients' imports), 45 times a run;
 * - the in-process op tests in two shards (TEST_OPS_SHARD), the longest jobs, started first;
 * - any other file alone.
 */
function jobsOf(list, { groups, opsShards }) {
  const jobs = [];
  for (const tier of TOGETHER) {
    const files = list.filter((f) => tierOf(f) === tier);
    if (files.length)
      jobs.push({
        name: tier.name,
        file: path.join(root, "test", "helpers", "together.ts"),
        env: { TEST_FILES: JSON.stringify(files) },
        seconds: tier.seconds,
      });
  }
  const e2e = list.filter(isE2e);
  for (const [i, g] of pack(e2e, groups).entries()) {
    const names = g.files.map((f) => path.basename(f, ".test.ts")).join(", ");
    jobs.push({
      name: `e2e group ${i + 1} (${names})`,
      file: path.join(e2eDir, "group.ts"),
      env: { TEST_E2E_FILES: JSON.stringify(g.files) },
      seconds: g.seconds,
    });
  }
  for (const f of list.filter((f) => !tierOf(f) && !isE2e(f))) {
    if (f === opsAll && opsShards > 1) {
      for (let i = 0; i < opsShards; i++)
        jobs.push({
          name: `ops shard ${i + 1}/${opsShards}`,
          file: f,
          env: { TEST_OPS_SHARD: `${i}/${opsShards}` },
          seconds: seconds(f) / opsShards,
        });
    } else jobs.push({ name: path.relative(root, f), file: f, env: {}, seconds: seconds(f) });
  }
  return jobs.sort((a, b) => b.seconds - a.seconds);
}
const parallel = jobsOf(
  files.filter((f) => !SERIAL.includes(f)),
  { groups: Number(process.env.SIGIL_TEST_E2E_GROUPS) || 10, opsShards: 2 },
);
const serial = jobsOf(
  files.filter((f) => SERIAL.includes(f)),
  { groups: 1, opsShards: 1 },
);

if (listOnly) {
  const filesOf = (job) => JSON.parse(job.env.TEST_FILES ?? job.env.TEST_E2E_FILES ?? JSON.stringify([job.file]));
  for (const job of [...parallel, ...serial]) {
    console.log(job.name);
    for (const f of filesOf(job)) console.log(`  ${path.relative(root, f)}`);
  }
  console.log(`# ${files.length} test files in ${parallel.length + serial.length} jobs`);
  process.exit(0);
}

// SIGIL_TEST_BUNDLE=1: the jobs that import their files (the tiers run together, the end-to-end
// groups) run them bundled, without tsx (scripts/test-bundles.mjs); the op shards stay on tsx.
const bundleDir = path.join(root, ".tmp", `test-bundles-${process.pid}`);
if (process.env.SIGIL_TEST_BUNDLE === "1") {
  const { bundleTestFiles } = await import("./test-bundles.mjs");
  for (const [i, job] of [...parallel, ...serial].entries()) {
    const list = job.env.TEST_FILES ?? job.env.TEST_E2E_FILES;
    if (list) job.bundle = await bundleTestFiles(root, JSON.parse(list), path.join(bundleDir, `job-${i}.mjs`));
  }
}

const env = { ...process.env };
// One migrated PostgreSQL template for the whole run, dropped at the end (test/helpers/pg-template.ts).
const template = pgServer ? `sigil_tpl_run_${randomBytes(6).toString("hex")}` : undefined;
if (template) env.SIGIL_TEST_PG_TEMPLATE = template;

// A terminal gets node's readable reporter; a pipe (CI) gets TAP, as node --test itself chooses.
const reporter = flags.some((f) => f.startsWith("--test-reporter")) ? [] : [`--test-reporter=${process.stdout.isTTY ? "spec" : "tap"}`];
const totals = new Map();

/**
 * CPU seconds (user + system) of this process's children that have ended, all their own
 * descendants included (Linux: /proc/self/stat's cutime and cstime, in clock ticks of 1/100 s),
 * or undefined without /proc. A job's CPU is its growth while the job's process is reaped: what
 * the servers, CLI commands, browsers and the test process itself spent, the figure that bounds
 * a run on two cores (docs/testing.md §4).
 */
function childrenCpu() {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return undefined;
  }
}
let cpuSeen = childrenCpu();
const cpuStart = cpuSeen;
/** The CPU that ended since the last call: the job just reaped (jobs end one at a time). */
function cpuOfEnded() {
  const now = childrenCpu();
  if (now === undefined || cpuSeen === undefined) return undefined;
  const spent = now - cpuSeen;
  cpuSeen = now;
  return spent;
}

/**
 * Runs one job; its output is held and printed whole when it ends, so that jobs side by side
 * do not interleave their reports. A test that waits forever (a hang) fails after 15 minutes
 * instead of holding the run until CI's deadline: the report then names it. The limit is on a
 * job's file, and a job is a whole shard or group (100–280 s on a quiet machine): 5 minutes
 * failed whole shards on a machine loaded by other work.
 */
function runJob(job) {
  return new Promise((resolve) => {
    const started = Date.now();
    const runner = ["--test", "--test-concurrency=1", "--test-timeout=900000", ...reporter, ...flags];
    const args = job.bundle ? ["--enable-source-maps", ...runner, job.bundle] : ["--import", "tsx", ...runner, job.file];
    const p = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], cwd: root, env: { ...env, ...job.env } });
    const out = [];
    p.stdout.on("data", (c) => out.push(c));
    p.stderr.on("data", (c) => out.push(c));
    // Read as soon as the process is reaped, before another job can end.
    let cpu;
    p.on("exit", () => (cpu = cpuOfEnded()));
    p.on("close", (code, signal) => {
      const text = Buffer.concat(out).toString();
      // The job's own summary lines (TAP "# pass 12", spec "ℹ pass 12"), added up for the run's.
      for (const m of text.matchAll(/^(?:#|ℹ) (tests|suites|pass|fail|cancelled|skipped|todo) (\d+)$/gm))
        totals.set(m[1], (totals.get(m[1]) ?? 0) + Number(m[2]));
      const status = code ?? (signal ? 1 : 0);
      process.stdout.write(
        `\n### ${job.name}: ${status === 0 ? "passed" : `FAILED (exit ${code ?? signal})`} in ${((Date.now() - started) / 1000).toFixed(1)} s${cpu === undefined ? "" : `, cpu ${cpu.toFixed(1)} s`}\n${text}`,
      );
      resolve(status);
    });
  });
}

/** Runs the jobs `n` at a time, in their order (longest first); resolves with the first failing status, or 0. */
async function runJobs(jobs, n) {
  let status = 0;
  let next = 0;
  const worker = async () => {
    for (let job = jobs[next++]; job; job = jobs[next++]) status = (await runJob(job)) || status;
  };
  await Promise.all(Array.from({ length: Math.min(n, jobs.length) }, worker));
  return status;
}

// Jobs run side by side (SIGIL_TEST_CONCURRENCY, default 3): most of an end-to-end file's time
// is spent waiting on its servers, receivers and databases, each its own (docs/testing.md §4).
const concurrency = Number(process.env.SIGIL_TEST_CONCURRENCY) || 3;
const runStarted = Date.now();
let status = await runJobs(parallel, concurrency);
status = (await runJobs(serial, 1)) || status;

if (process.env.SIGIL_TEST_BUNDLE === "1") rmSync(bundleDir, { recursive: true, force: true });
if (template) {
  const { default: pg } = await import("pg");
  const admin = new pg.Client({ connectionString: pgServer });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
  await admin.end();
}
const summary = ["tests", "pass", "fail", "cancelled", "skipped", "todo"].map((k) => `${k} ${totals.get(k) ?? 0}`).join(", ");
const cpuEnd = childrenCpu();
const cpuTotal = cpuEnd === undefined || cpuStart === undefined ? "" : `, cpu ${(cpuEnd - cpuStart).toFixed(0)} s`;
console.log(
  `\n# all jobs: ${summary}; ${status === 0 ? "passed" : "FAILED"} in ${((Date.now() - runStarted) / 1000).toFixed(0)} s${cpuTotal}`,
);
process.exit(status);
