// Every list in docs/ that mirrors a list in code, held to the code (docs/testing.md §3): a
// later feature that adds a stamp kind, a pipeline step, a definition hook, a login method, an
// engine, a secret parameter or a query fails here until the doc names it. Each doc marks its
// list with <!-- list:<name> --> … <!-- /list --> (test/helpers/doc-lists.ts).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { STAMP_HEADERS, STRATEGIES } from "../../src/auth/strategies.ts";
import { corsAllowedHeaders } from "../../src/network/cors.ts";
import { KNOBS } from "../../src/config.ts";
import { ACTIVITIES, VOTES } from "../../src/activities/registry.ts";
import { LOGIN_METHODS } from "../../src/logins/index.ts";
import type { ParentStampableSpec } from "../../src/logins/define.ts";
import { ENGINES } from "../../src/store/engines.ts";
import { QUERIES } from "../../src/queries/registry.ts";
import {
  ROOT,
  assertSameList,
  calledNames,
  codeSpans,
  firstSpans,
  markedBlock,
  numberedItems,
  optionalMembers,
  tableRows,
  topLevelCalls,
} from "../helpers/doc-lists.ts";

/** How docs write a parent-stampable type: without `ACTIVITY_TYPE_`, `*` for every version. */
const parentType = (s: ParentStampableSpec) => s.type.replace(/^ACTIVITY_TYPE_/, "") + (s.everyVersion ? "*" : "");

describe("docs lists held by the code", () => {
  it("stamp kinds: docs/stamps.md §1.1 is STRATEGIES, in order", () => {
    const rows = tableRows(markedBlock("docs/stamps.md", "stamp-kinds"));
    assertSameList(
      "docs/stamps.md §1.1 (list:stamp-kinds)",
      firstSpans(
        rows.map((r) => r[0]!),
        "docs/stamps.md §1.1",
      ),
      STRATEGIES.map((s) => s.headerName),
      "Add a row for each strategy of src/auth/strategies.ts, in its order (docs/stamps.md §7.2).",
      { ordered: true },
    );
  });

  it("the headers CORS admits: docs/network.md §4 and the SIGIL_CORS_ORIGINS text are corsAllowedHeaders(STAMP_HEADERS)", () => {
    const admitted = corsAllowedHeaders(STAMP_HEADERS);
    assertSameList(
      "docs/network.md §4 (list:cors-headers)",
      codeSpans(markedBlock("docs/network.md", "cors-headers")),
      admitted,
      "List every header src/network/cors.ts corsAllowedHeaders admits, in its order.",
      { ordered: true },
    );
    const knob = KNOBS.find((k) => k.env === "SIGIL_CORS_ORIGINS");
    assert.ok(knob, "SIGIL_CORS_ORIGINS is a knob");
    const named = codeSpans(knob.doc.meaning).filter((s) => /^(content-type|x-[a-z-]+)$/.test(s));
    assertSameList(
      "the SIGIL_CORS_ORIGINS text in src/config.ts",
      named,
      admitted,
      "Edit the header list in its doc.meaning, then run `npm run docs:config` (docs/configuration.md §1 copies it).",
      { ordered: true },
    );
  });

  it("validation steps: docs/request-path.md §2.4 is validate()'s calls, in order", () => {
    const items = numberedItems(markedBlock("docs/request-path.md", "validate-steps"));
    assertSameList(
      "docs/request-path.md §2.4 (list:validate-steps)",
      firstSpans(items, "docs/request-path.md §2.4"),
      topLevelCalls("src/pipeline/validate.ts", "validate"),
      "Each numbered item starts with the call it describes, as src/pipeline/validate.ts validate() makes them.",
      { ordered: true },
    );
  });

  it("a new activity's steps: docs/request-path.md §2.6 is submitNew()'s named steps, in order", () => {
    const items = numberedItems(markedBlock("docs/request-path.md", "submit-steps"));
    assertSameList(
      "docs/request-path.md §2.6 (list:submit-steps)",
      firstSpans(items, "docs/request-path.md §2.6"),
      topLevelCalls("src/pipeline/submission.ts", "submitNew", { namedOnly: true }),
      "Each numbered item starts with the step it describes, as src/pipeline/submission.ts submitNew() calls them.",
      { ordered: true },
    );
  });

  it("every gate the pipeline calls (refuse…) is named in docs/request-path.md", () => {
    const dir = path.join(ROOT, "src/pipeline");
    const files = readdirSync(dir)
      .filter((f) => f.endsWith(".ts"))
      .map((f) => `src/pipeline/${f}`);
    const gates = calledNames(files, "refuse");
    assert.ok(gates.length >= 8, `only ${gates.join(", ")}: the pipeline's gates are no longer refuse… functions?`);
    const spans = new Set(codeSpans(readDoc("docs/request-path.md")));
    const undocumented = gates.filter((g) => !spans.has(g));
    assert.deepEqual(
      undocumented,
      [],
      `src/pipeline calls ${undocumented.join(", ")}, which docs/request-path.md (§2–4) does not name: describe the step where it runs`,
    );
  });

  it("definition hooks: docs/activities.md §9 is ActivityDefinition's optional members, in order", () => {
    const rows = tableRows(markedBlock("docs/activities.md", "definition-hooks"));
    assertSameList(
      "docs/activities.md §9 (list:definition-hooks)",
      rows.flatMap((r) => codeSpans(r[0]!)),
      optionalMembers("src/activities/define.ts", "ActivityDefinition"),
      "Add a row for each optional member of ActivityDefinition (src/activities/define.ts), in the type's order.",
      { ordered: true },
    );
  });

  it("parent-stampable types: docs/request-path.md §5.2 is every login method's, and the definitions that opt in", () => {
    assertSameList(
      "docs/request-path.md §5.2 (list:parent-stampable)",
      codeSpans(markedBlock("docs/request-path.md", "parent-stampable")),
      LOGIN_METHODS.flatMap((m) => m.parentStampable.map(parentType)),
      "PARENT_STAMPABLE is assembled from LOGIN_METHODS' parentStampable (src/logins/*/index.ts), in the methods' order.",
      { ordered: true },
    );
    assertSameList(
      "docs/request-path.md §5.2 (list:parent-may-stamp)",
      codeSpans(markedBlock("docs/request-path.md", "parent-may-stamp")),
      [...new Set([...ACTIVITIES, ...VOTES].filter((d) => d.route === "activity" && d.parentMayStamp).map((d) => d.op))],
      "List the op of every registered definition with parentMayStamp: true.",
    );
  });

  it("login methods: docs/logins.md §8.1 has one row per LOGIN_METHODS entry, in order, with the types it opens to parents", () => {
    const rows = tableRows(markedBlock("docs/logins.md", "login-methods"));
    assertSameList(
      "docs/logins.md §8.1 (list:login-methods)",
      firstSpans(
        rows.map((r) => r[0]!),
        "docs/logins.md §8.1",
      ),
      LOGIN_METHODS.map((m) => m.name),
      "One row per method of src/logins/index.ts LOGIN_METHODS, in its order (docs/logins.md §8.4).",
      { ordered: true },
    );
    for (const m of LOGIN_METHODS) {
      const row = rows.find((r) => codeSpans(r[0]!)[0] === m.name)!;
      assertSameList(
        `docs/logins.md §8.1, the "Opens to parents" cell of ${m.name}`,
        codeSpans(row[3] ?? "").filter((s) => /^[A-Z0-9_]+\*?$/.test(s)),
        m.parentStampable.map(parentType),
        `Name the types src/logins/${m.name}/index.ts declares in parentStampable.`,
      );
    }
  });

  it("secret parameters: docs/activities.md §10.1 is every definition's secretParams", () => {
    const rows = tableRows(markedBlock("docs/activities.md", "secret-params"));
    const doc = rows.map((r) => `${codeSpans(r[0]!)[0]}: ${codeSpans(r[1] ?? "").join(", ")}`);
    const code = ACTIVITIES.filter((d) => d.secretParams?.length).map((d) => `${d.type}: ${d.secretParams!.join(", ")}`);
    assertSameList(
      "docs/activities.md §10.1 (list:secret-params)",
      doc,
      code,
      "One row per registered type that declares secretParams, naming each path (src/activities/secret-params.ts checks them at startup).",
    );
  });

  it("storage engines: docs/storage.md §1 is ENGINES, in order, with each engine's folder and schemes", () => {
    const rows = tableRows(markedBlock("docs/storage.md", "engines"));
    assertSameList(
      "docs/storage.md §1 (list:engines)",
      firstSpans(
        rows.map((r) => r[0]!),
        "docs/storage.md §1",
      ),
      ENGINES.map((e) => e.name),
      "One row per engine of src/store/engines.ts ENGINES, in its order (docs/storage.md §2).",
      { ordered: true },
    );
    for (const e of ENGINES) {
      const row = rows.find((r) => codeSpans(r[0]!)[0] === e.name)!;
      assert.deepEqual(codeSpans(row[1] ?? ""), [`src/store/${e.name}/`], `docs/storage.md §1: the folder of ${e.name}`);
      assertSameList(
        `docs/storage.md §1, the DATABASE_URL cell of ${e.name}`,
        codeSpans(row[2] ?? "")
          .filter((s) => s.endsWith("//…"))
          .map((s) => s.slice(0, -"//…".length)),
        e.schemes,
        `Name each scheme of ${e.name} as \`<scheme>//…\`.`,
      );
    }
  });

  it("every file or folder of the repository a doc names in backticks exists", () => {
    const docs = [
      "README.md",
      ...readdirSync(path.join(ROOT, "docs"))
        .filter((f) => f.endsWith(".md"))
        .map((f) => `docs/${f}`),
    ];
    const missing: string[] = [];
    for (const doc of docs) {
      for (const span of codeSpans(readDoc(doc))) {
        // A path with a file extension or a trailing slash; no placeholders (`<op>`, `*`).
        if (!/^(src|test|scripts|bench|lib|examples|bin|docs)\/[\w./-]*(\.\w+|\/)$/.test(span)) continue;
        if (!existsSync(path.join(ROOT, span))) missing.push(`${doc}: ${span}`);
      }
    }
    assert.deepEqual(missing, [], `docs name files that do not exist (moved or removed? name the new path):\n${missing.join("\n")}`);
  });

  it("docs/README.md §1 indexes every note of docs/", () => {
    const index = readDoc("docs/README.md");
    const notes = readdirSync(path.join(ROOT, "docs")).filter((f) => f.endsWith(".md") && f !== "README.md");
    const missing = notes.filter((f) => !index.includes(`](${f})`));
    assert.deepEqual(missing, [], `add a line for ${missing.join(", ")} to the index of docs/README.md §1`);
  });

  it("queries: docs/api.md §3 names every registered query, and nothing else", () => {
    // Every snake_case name in the block, but the activities it mentions (`create_policy`).
    const activityOps = new Set([...ACTIVITIES, ...VOTES].map((d) => d.op));
    const named = codeSpans(markedBlock("docs/api.md", "queries")).filter(
      (s) => (/^[a-z][a-z0-9]*(_[a-z0-9]+)+$/.test(s) || s === "whoami") && !activityOps.has(s),
    );
    assertSameList(
      "docs/api.md §3 (list:queries)",
      [...new Set(named)],
      QUERIES.map((q) => q.op),
      "Describe each query of src/queries/registry.ts QUERIES in docs/api.md §3 (docs/activities.md §11).",
    );
  });
});

/** A doc whole, for names it gives outside its marked lists. */
function readDoc(file: string): string {
  return readFileSync(path.join(ROOT, file), "utf8");
}
