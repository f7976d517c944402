#!/usr/bin/env node
// `npm test`: every test/**/*.test.ts through node's own test runner (TypeScript via tsx).
// Node 20's runner does not glob by itself, hence this file list.
import { readdirSync, statSync } from "node:fs";
import { spawnSync } from "node:child_process";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return find(p);
    return name.endsWith(".test.ts") ? [p] : [];
  });
}
const only = process.argv.slice(2);
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
// The unit files run together in one process, through test/unit/all.ts (docs/testing.md §4):
// node's runner otherwise starts node and tsx once per file, about a second each before any test.
const unitDir = path.join(root, "test", "unit") + path.sep;
const unit = files.filter((f) => f.startsWith(unitDir) && f.endsWith(".test.ts"));
const entries = unit.length > 1 ? [...files.filter((f) => !unit.includes(f)), path.join(unitDir, "all.ts")] : files;
const r = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=1", ...entries], {
  stdio: "inherit",
  cwd: root,
  env: unit.length > 1 ? { ...process.env, TEST_UNIT_FILES: JSON.stringify(unit) } : process.env,
});
process.exit(r.status ?? 1);
