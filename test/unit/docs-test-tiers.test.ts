// The test tiers are named by what their tests touch (docs/testing.md §1), and this holds each
// file to its tier: a unit test that opens a store, or a store test that starts a process,
// fails here with the directory it belongs in. Read from the sources' text: what a file
// imports and the few calls that open a store, build the app or start a process.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "../helpers/doc-lists.ts";

interface Touch {
  what: string;
  /** Where a file that does this belongs, at the least. */
  tier: "store" | "ops" | "e2e";
  pattern: RegExp;
}

/** What each tier's files may not do (unit: any of these; store: the app or processes; ops: processes). */
const TOUCHES: readonly Touch[] = [
  { what: "a child process", tier: "e2e", pattern: /from "node:child_process"|\b(startServer|sigilInit|startProxyProcess)\(/ },
  { what: "the app in process (test/helpers/inproc.ts)", tier: "ops", pattern: /from "\.\.\/helpers\/inproc\.ts"|\bbuildApp\(/ },
  {
    what: "a store (a database file or server)",
    tier: "store",
    pattern:
      /from "\.\.\/helpers\/(store|server|engines|pg-template)\.ts"|from "(better-sqlite3|pg)"|\b(openStore|openService|scratchStore|newInstance)\(/,
  },
];
/**
 * Files that do what their tier otherwise may not, each with the reason. A repository check
 * run as its script over a fixture tree starts a process, but not the service's.
 */
const EXCEPTIONS: Record<string, { tier: Touch["tier"]; why: string }> = {
  "test/unit/layers.test.ts": { tier: "e2e", why: "runs scripts/check-import-cycles.mjs, as CI does, over a fixture tree" },
};
const SELF = "test/unit/docs-test-tiers.test.ts";

const ALLOWED: Record<string, readonly Touch["tier"][]> = {
  unit: [],
  store: ["store"],
  ops: ["store", "ops"],
};

function testFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, "test", dir))
    .filter((f) => f.endsWith(".test.ts") && f !== "all.test.ts")
    .map((f) => `test/${dir}/${f}`);
}

describe("test tiers (docs/testing.md §1)", () => {
  for (const [dir, allowed] of Object.entries(ALLOWED)) {
    it(`test/${dir}/ touches only what its tier may`, () => {
      const files = testFiles(dir);
      assert.ok(files.length > 0, `no test files under test/${dir}/`);
      const wrong: string[] = [];
      for (const f of files.filter((f) => f !== SELF)) {
        const text = readFileSync(path.join(ROOT, f), "utf8");
        for (const t of TOUCHES) {
          if (allowed.includes(t.tier) || EXCEPTIONS[f]?.tier === t.tier) continue;
          if (t.pattern.test(text)) wrong.push(`${f} opens ${t.what}: move it to test/${t.tier}/`);
        }
      }
      assert.deepEqual(wrong, [], wrong.join("\n"));
    });
  }

  it("the tiers are the directories docs/testing.md §1 names", () => {
    const dirs = readdirSync(path.join(ROOT, "test"), { withFileTypes: true })
      .filter((d) => d.isDirectory() && testFilesIn(d.name))
      .map((d) => d.name)
      .sort();
    assert.deepEqual(
      dirs,
      ["e2e", "ops", "store", "unit"],
      "a new directory of test files is a new tier: add it to docs/testing.md §1, scripts/run-tests.mjs and this test",
    );
    const doc = readFileSync(path.join(ROOT, "docs/testing.md"), "utf8");
    for (const d of dirs) assert.ok(doc.includes(`\`test/${d}/\``), `docs/testing.md does not name test/${d}/`);
  });
});

function testFilesIn(dir: string): boolean {
  return readdirSync(path.join(ROOT, "test", dir), { recursive: true }).some((f) => String(f).endsWith(".test.ts"));
}
