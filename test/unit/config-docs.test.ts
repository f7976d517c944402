// docs/configuration.md §1 is written from the knob list of src/config.ts (npm run docs:config,
// docs/configuration.md §2): the file must be what the script would write, and what the table
// says must be what the code does.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { KNOBS, loadConfig, DEFAULTS } from "../../src/config.ts";
import { defaultText } from "../../src/config/define.ts";
import { CONFIG_DOC, withKnobsTable } from "../../scripts/docs-config.ts";

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
      rows.set(name, envOnly ? undefined : (flags[i] ?? flags[0]));
    });
  }
  return rows;
}

/** The value a Default text starts with, in backticks: what an operator would set. */
function documentedValue(text: string): string | undefined {
  return /^`([^`]*)`/.exec(text)?.[1];
}

describe(`${DOC} and src/config.ts`, () => {
  const text = readFileSync(CONFIG_DOC, "utf8");
  const documented = documentedKnobs(text);

  it("the table is what `npm run docs:config` writes", () => {
    assert.ok(text === withKnobsTable(text), "docs/configuration.md §1 is not what the knob list yields: run npm run docs:config");
  });

  it("the table names every knob with its flag, or as env-only, and nothing else", () => {
    assert.ok(documented.size >= 40, `expected the configuration table in ${DOC}, found ${documented.size} rows`);
    assert.deepEqual(
      [...documented],
      KNOBS.map((k) => [k.env, k.cliFlag]),
    );
  });

  it("variables, flags and fields are unique; a flag is the variable's name in kebab case", () => {
    for (const field of ["env", "flag", "key"] as const) {
      const names = KNOBS.map((k) => k[field]).filter((n) => n !== undefined);
      assert.deepEqual(
        names.filter((n, i) => names.indexOf(n) !== i),
        [],
        `duplicate ${field}`,
      );
    }
    for (const k of KNOBS) {
      if (k.flag === undefined) continue;
      assert.equal(
        k.flag,
        "--" +
          k.env
            .replace(/^SIGIL_/, "")
            .toLowerCase()
            .replace(/_/g, "-"),
        k.env,
      );
    }
  });

  it("a default documented as a value parses to the code's default, from the environment and the flag", () => {
    let checked = 0;
    for (const k of KNOBS) {
      const value = documentedValue(defaultText(k));
      if (k.default === undefined || value === undefined) continue;
      checked++;
      assert.deepEqual(k.parse(value), k.default, `${k.env}: ${DOC} says ${value}`);
      assert.deepEqual(DEFAULTS[k.key], k.default, k.env);
      const fromEnv: Record<string, unknown> = loadConfig({ [k.env]: value }, []);
      assert.deepEqual(fromEnv[k.key], k.key === "dataDir" ? loadConfig({}, []).dataDir : k.default, k.env);
      if (k.cliFlag) {
        const fromFlag: Record<string, unknown> = loadConfig({}, ["serve", k.cliFlag, value]);
        assert.deepEqual(fromFlag[k.key], fromEnv[k.key], k.cliFlag);
      }
    }
    assert.ok(checked >= 30, `only ${checked} defaults checked`);
  });

  it("a secret is read from the environment only: its flag is refused, or not looked at", () => {
    const secrets = KNOBS.filter((k) => k.secret);
    assert.deepEqual(secrets.map((k) => k.env).sort(), [
      "REDIS_URL",
      "SIGIL_AUTH_PROXY_SECRET",
      "SIGIL_CAPTCHA_SECRET",
      "SIGIL_MASTER_KEY",
      "SIGIL_MASTER_KEY_PREVIOUS",
      "SIGIL_PKCS11_PIN",
      "SIGIL_SMS_PASSWORD",
      "SIGIL_SMS_USERNAME",
      "SMTP_URL",
    ]);
    for (const k of secrets) {
      assert.equal(k.cliFlag, undefined, k.env);
      if (k.flag) assert.throws(() => loadConfig({}, [k.flag!, "x"]), new RegExp(`${k.env} may hold a secret; set it in the environment`));
    }
  });

  it("a computed default is undefined in Config and names what computes it", () => {
    for (const k of KNOBS) {
      if (k.computedBy === undefined) continue;
      assert.equal(k.default, undefined, k.env);
      const [, fn, file] = /^(\w+) \((src\/[\w/.-]+\.ts)\)/.exec(k.computedBy) ?? [];
      assert.ok(fn && file, `${k.env}: computedBy names a function and its module`);
      assert.match(
        readFileSync(path.join(ROOT, file), "utf8"),
        new RegExp(`function ${fn}\\b|const ${fn}\\b`),
        `${k.env}: ${file} has no ${fn}`,
      );
      assert.notEqual(defaultText(k), "—", `${k.env}: the docs say what an unset value becomes`);
    }
  });

  it("the parser reads env-only rows and shared rows", () => {
    const probe = documentedKnobs(["| `A_B` | `--a-b` | x | y |", "| `C` / `D` | (env only) | — | z |"].join("\n"));
    assert.deepEqual(
      [...probe],
      [
        ["A_B", "--a-b"],
        ["C", undefined],
        ["D", undefined],
      ],
    );
  });
});
