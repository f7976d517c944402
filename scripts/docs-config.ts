// `npm run docs:config`: writes the table of docs/configuration.md §1 from the knob list of
// src/config.ts, between its markers. test/unit/config-docs.test.ts fails when the file is
// not what this would write.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { KNOBS } from "../src/config.ts";
import { knobsTable } from "../src/config/define.ts";

export const CONFIG_DOC = path.resolve(import.meta.dirname, "../docs/configuration.md");
export const BEGIN =
  "<!-- knobs:begin — written by `npm run docs:config` from src/config.ts and the login methods in src/logins/; edit the lists there -->";
export const END = "<!-- knobs:end -->";

/** The document with the table between its markers replaced by the one the list yields. */
export function withKnobsTable(doc: string): string {
  const b = doc.indexOf(BEGIN);
  const e = doc.indexOf(END);
  if (b < 0 || e < b) throw new Error(`docs/configuration.md: the markers ${BEGIN} … ${END} are missing or out of order`);
  return doc.slice(0, b + BEGIN.length) + "\n" + knobsTable(KNOBS) + "\n" + doc.slice(e);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const before = readFileSync(CONFIG_DOC, "utf8");
  const after = withKnobsTable(before);
  if (after !== before) writeFileSync(CONFIG_DOC, after);
  process.stdout.write(`docs/configuration.md: ${after === before ? "up to date" : "table rewritten"} (${KNOBS.length} knobs)\n`);
}
