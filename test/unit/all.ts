// The unit tier in one process (docs/testing.md §4): `scripts/run-tests.mjs` runs this file
// instead of starting node and tsx once per test/unit/*.test.ts, which cost about a second a file
// before a single test ran. TEST_UNIT_FILES (a JSON list of paths, set by run-tests.mjs)
// names the files; without it, every test/unit/*.test.ts. The files run in sorted order, each
// its own top-level suites, exactly as when run alone (`node --import tsx --test <file>`).
//
// This file is not itself named *.test.ts, so nothing runs it twice.
import { readdirSync } from "node:fs";
import path from "node:path";
import { importEach } from "../helpers/import-files.ts";

const dir = import.meta.dirname;
const listed = process.env.TEST_UNIT_FILES;
const files = listed
  ? (JSON.parse(listed) as string[])
  : readdirSync(dir)
      .filter((f) => f.endsWith(".test.ts"))
      .sort()
      .map((f) => path.join(dir, f));

await importEach(files);
