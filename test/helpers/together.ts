// The test files of one tier in one process (docs/testing.md §4): `scripts/run-tests.mjs` runs
// this file once for the unit tier, once for the store tier and once for the in-process files
// beside the operations, naming the files in TEST_FILES (a JSON list of paths), instead of
// starting node and tsx once per file — about a second each before a single test ran. The
// files run in the order given, each with its own top-level suites, exactly as when run alone
// (`node --import tsx --test <file>`).
//
// This file is not itself named *.test.ts, so nothing runs it twice.
import { importEach } from "./import-files.ts";

const files = JSON.parse(process.env.TEST_FILES ?? "[]") as string[];
if (files.length === 0) throw new Error("TEST_FILES names no file: run through scripts/run-tests.mjs, or run a file alone");
await importEach(files);
