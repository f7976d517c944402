// Several end-to-end files in one process, one after another (docs/testing.md §4):
// `scripts/run-tests.mjs` packs the files into groups and runs this file once per group, naming
// the group's files in TEST_E2E_FILES (a JSON list of paths). A process per file cost about
// 1.3 s of CPU before its first test: node, tsx's loader thread, the SDK clients' imports.
// Each file keeps its own top-level suites, as when run alone (`node --import tsx --test <file>`);
// one that does not load fails by name and the others still run.
//
// This file is not itself named *.test.ts, so nothing runs it twice.
import { it } from "node:test";
import path from "node:path";
import { pathToFileURL } from "node:url";

const files = JSON.parse(process.env.TEST_E2E_FILES ?? "[]") as string[];
if (files.length === 0) throw new Error("TEST_E2E_FILES names no file: run through scripts/run-tests.mjs, or run a file alone");
for (const f of files) {
  try {
    await import(pathToFileURL(f).href);
  } catch (err) {
    it(`${path.relative(process.cwd(), f)} loads`, () => {
      throw err;
    });
  }
}
