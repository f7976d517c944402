#!/usr/bin/env node
// `npm test`: every test/**/*.test.ts through node's own test runner (TypeScript via tsx).
// Node 20's runner does not glob by itself, hence this file list.
//
// node scripts/run-tests.mjs [--node-test-flag …] [files…]: flags (e.g. --test-reporter=tap)
// go to both runner processes, files narrow the run to them (docs/testing.md §4).
import { readdirSync, statSync } from "node:fs";
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
const flags = args.filter((a) => a.startsWith("--"));
const only = args.filter((a) => !a.startsWith("--"));
const files = (only.length ? only.map((f) => path.resolve(f)) : find(path.join(root, "test"))).sort();
if (!process.env.TEST_DATABASE_URL) {
  console.log("note: TEST_DATABASE_URL is not set; PostgreSQL tests will be skipped (they run in CI).");
}
// The service's bundle, built from the current sources before any test runs (docs/testing.md §4):
// every server and CLI process an end-to-end test spawns (bin/sigil.mjs) then starts from it,
// about 1.4 s sooner than through tsx, which transpiles the whole service again in each process.
// bin/sigil.mjs runs the bundle only while it is newer than every file under src/, so a source
// edited during the run falls back to tsx rather than a stale bundle; SIGIL_NO_BUNDLE=1 keeps
// the tests on tsx throughout.
if (process.env.SIGIL_NO_BUNDLE !== "1") {
  const b = spawnSync(process.execPath, [path.join(root, "scripts/build.mjs")], { stdio: "inherit", cwd: root });
  if (b.status !== 0) {
    console.error("scripts/build.mjs failed: the sources do not bundle");
    process.exit(b.status ?? 1);
  }
}

// Files that measure wall-clock deadlines tight enough (a few hundred milliseconds, or an event
// loop that must not stall for 100 ms) that a busy machine could miss them: they run after the
// others, one at a time (docs/testing.md §4).
const SERIAL = [
  "test/e2e/shutdown.test.ts",
  "test/e2e/sqlite-lock.test.ts",
  "test/e2e/postgres-outage.test.ts",
  "test/unit/sqlite-lock-wait.test.ts",
].map((f) => path.join(root, f));
// The longest files start first, so that none of them is left to run alone at the end.
const LONGEST = [
  "test/ops/all.test.ts",
  "test/unit/all.ts",
  "test/e2e/webhooks.test.ts",
  "test/e2e/webhook-retries.test.ts",
  "test/e2e/tvc.test.ts",
  "test/e2e/security-otp.test.ts",
  "test/e2e/fuzz.test.ts",
  "test/e2e/network-rate-limit.test.ts",
  "test/e2e/security-tvc.test.ts",
  "test/e2e/cli-and-ops.test.ts",
  "test/e2e/two-nodes.test.ts",
].map((f) => path.join(root, f));
const rank = (f) => (LONGEST.includes(f) ? LONGEST.indexOf(f) : LONGEST.length);

// The unit files run together in one process per phase, through test/unit/all.ts
// (docs/testing.md §4): node's runner otherwise starts node and tsx once per file, about a
// second each before any test. TEST_UNIT_FILES tells all.ts which.
const unitDir = path.join(root, "test", "unit") + path.sep;
const isUnit = (f) => f.startsWith(unitDir) && f.endsWith(".test.ts");
function phase(list) {
  const unit = list.filter(isUnit);
  const rest = list.filter((f) => !isUnit(f));
  return { files: (unit.length ? [...rest, path.join(unitDir, "all.ts")] : rest).sort((a, b) => rank(a) - rank(b)), unit };
}
const parallel = phase(files.filter((f) => !SERIAL.includes(f)));
const serial = phase(files.filter((f) => SERIAL.includes(f)));

const env = { ...process.env };
// One migrated PostgreSQL template for the whole run, dropped at the end (test/helpers/pg-template.ts).
const template = process.env.TEST_DATABASE_URL ? `sigil_tpl_run_${randomBytes(6).toString("hex")}` : undefined;
if (template) env.SIGIL_TEST_PG_TEMPLATE = template;

// Files run side by side (SIGIL_TEST_CONCURRENCY, default 3): most of an end-to-end file's time
// is spent waiting on its servers, receivers and databases, each its own (docs/testing.md §4).
const concurrency = Number(process.env.SIGIL_TEST_CONCURRENCY) || 3;
const runNodeTest = ({ files: list, unit }, n) =>
  new Promise((resolve) => {
    if (!list.length) return resolve(0);
    // A test that waits forever (a hang) fails after 5 minutes instead of holding the run
    // until CI's deadline: the report then names it (docs/testing.md §4).
    const args = ["--import", "tsx", "--test", `--test-concurrency=${n}`, "--test-timeout=300000", ...flags, ...list];
    const p = spawn(process.execPath, args, { stdio: "inherit", cwd: root, env: { ...env, TEST_UNIT_FILES: JSON.stringify(unit) } });
    p.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });

let status = await runNodeTest(parallel, concurrency);
status = (await runNodeTest(serial, 1)) || status;

if (template) {
  const { default: pg } = await import("pg");
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
  await admin.end();
}
process.exit(status);
