// docs/configuration.md §1 lists every knob of src/config.ts, and nothing else: each variable
// with its flag, or "(env only)" where the code reads only the environment (a secret).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { CONFIG_KNOBS } from "../../src/config.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const DOC = "docs/configuration.md";

/** The table's rows: variable → flag (undefined for "(env only)"). A row may name several variables ("`A` / `B`"). */
export function documentedKnobs(markdown: string): Map<string, string | undefined> {
  const rows = new Map<string, string | undefined>();
  for (const line of markdown.split("\n")) {
    if (!line.startsWith("| `")) continue;
    const cells = line.split("|").map((c) => c.trim());
    const names = [...cells[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!);
    const flags = [...cells[2]!.matchAll(/`(--[a-z0-9-]+)`/g)].map((m) => m[1]!);
    const envOnly = /\(env only\)/.test(cells[2]!);
    names.forEach((name, i) => {
      assert.ok(!rows.has(name), `${DOC} lists ${name} twice`);
      rows.set(name, envOnly ? undefined : flags[i] ?? flags[0]);
    });
  }
  return rows;
}

describe(`${DOC} and src/config.ts`, () => {
  const documented = documentedKnobs(readFileSync(path.join(ROOT, DOC), "utf8"));

  it("the table is there", () => {
    assert.ok(documented.size >= 40, `expected the configuration table in ${DOC}, found ${documented.size} rows`);
  });

  it("every knob of the code is in the table, with its flag or as env-only", () => {
    const problems: string[] = [];
    for (const k of CONFIG_KNOBS) {
      if (!documented.has(k.env)) problems.push(`${k.env} (${k.flag ?? "env only"}) is read by src/config.ts but not in ${DOC}`);
      else if (documented.get(k.env) !== k.flag) {
        problems.push(`${k.env}: the code's flag is ${k.flag ?? "(env only)"}, ${DOC} says ${documented.get(k.env) ?? "(env only)"}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it("every variable in the table is a knob of the code", () => {
    const known = new Set(CONFIG_KNOBS.map((k) => k.env));
    assert.deepEqual([...documented.keys()].filter((name) => !known.has(name)), []);
  });

  it("the parser reads env-only rows and shared rows", () => {
    const probe = documentedKnobs(["| `A_B` | `--a-b` | x | y |", "| `C` / `D` | (env only) | — | z |"].join("\n"));
    assert.deepEqual([...probe], [["A_B", "--a-b"], ["C", undefined], ["D", undefined]]);
  });
});
