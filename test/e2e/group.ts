// Several end-to-end files in one process, one after another (docs/testing.md §4):
// `scripts/run-tests.mjs` packs the files into groups and runs this file once per group, naming
// the group's files in TEST_E2E_FILES (a JSON list of paths). A process per file cost about
// 1.3 s of CPU before its first test: node, tsx's loader thread, the SDK clients' imports.
// Each file still runs alone with `node --import tsx --test <file>`.
//
// This file is not itself named *.test.ts, so nothing runs it twice.
import { importEach } from "../helpers/import-files.ts";

const files = JSON.parse(process.env.TEST_E2E_FILES ?? "[]") as string[];
if (files.length === 0) throw new Error("TEST_E2E_FILES names no file: run through scripts/run-tests.mjs, or run a file alone");
await importEach(files);
