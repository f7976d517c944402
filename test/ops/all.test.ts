// The in-process tier (docs/testing.md §1): one file per operation, test/ops/<op>.ts, all run in
// this one process. A process per file would spend ~2 s each starting node, tsx and the app's
// imports — about nine tenths of the tier's time; each file still gets its own app and
// scratch database (inproc.ts). One file alone: node --import tsx --test test/ops/<op>.ts
//
// Adding an operation forces adding its test: every activity and query in the registries
// must have test/ops/<op>.ts that sends that op, and every file here must name a registered
// op (a renamed or removed op leaves no orphan behind).
import { it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { ACTIVITIES, VOTES } from "../../src/activities/registry.ts";
import { QUERIES } from "../../src/queries/registry.ts";

const dir = new URL(".", import.meta.url);
const ops = new Set([...ACTIVITIES, ...VOTES, ...QUERIES].map((d) => d.op));
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
  .sort();
// TEST_OPS_SHARD="i/n" (set by scripts/run-tests.mjs, docs/testing.md §4): this process runs
// every n-th file from the i-th, so that the tier can run in n processes side by side; the
// registry checks below run in shard 0. Unset, one process runs everything.
const [shard = 0, shards = 1] = (process.env.TEST_OPS_SHARD ?? "0/1").split("/").map(Number);
if (!(Number.isInteger(shards) && shards >= 1 && Number.isInteger(shard) && shard >= 0 && shard < shards)) {
  throw new Error(`TEST_OPS_SHARD must be i/n with 0 <= i < n, not ${JSON.stringify(process.env.TEST_OPS_SHARD)}`);
}

if (shard === 0)
  it("every registered operation has test/ops/<op>.ts, and that file sends it", () => {
    const missing = [...ops].filter((op) => !files.includes(`${op}.ts`));
    assert.deepEqual(missing, [], `operations without a test file under test/ops/: ${missing.join(", ")}`);
    for (const op of ops) {
      const text = readFileSync(new URL(`${op}.ts`, dir), "utf8");
      assert.ok(text.includes(`"${op}"`), `test/ops/${op}.ts never names "${op}"`);
    }
  });

if (shard === 0)
  it("every file under test/ops/ is named for a registered operation", () => {
    const orphans = files.filter((f) => !ops.has(f.replace(/\.ts$/, "")));
    assert.deepEqual(orphans, [], `files for operations that are not registered: ${orphans.join(", ")}`);
  });

for (const [i, f] of files.entries()) if (i % shards === shard) await import(new URL(f, dir).href);
