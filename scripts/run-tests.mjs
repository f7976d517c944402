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
const r = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=1", ...files], {
  stdio: "inherit",
  cwd: root,
});
process.exit(r.status ?? 1);
