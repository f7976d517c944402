// Code cites the protocol notes in docs/ (docs/README.md §2): every citation must
// name a file and a section that exist, and nothing outside the repository (a clone has nothing
// behind such a name) or an issue number (history belongs in git).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "../..");
const SCANNED = ["src", "test", "scripts", "bench", "lib"];
const CODE = /\.(ts|mts|mjs|js|cjs)$/;

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (name === "node_modules") return [];
    return statSync(p).isDirectory() ? walk(p) : CODE.test(name) ? [p] : [];
  });
}

const files = SCANNED.flatMap((d) => walk(path.join(ROOT, d)));
const THIS_FILE = path.resolve(import.meta.filename);

/** Section numbers a note's headings define: `## 2. Title`, `### 2.1 Title`, `## §3 Title`. */
function sectionsOf(doc: string): { numbers: Set<string>; titles: Set<string> } {
  const numbers = new Set<string>();
  const titles = new Set<string>();
  for (const line of doc.split("\n")) {
    const h = /^#{1,6}\s+(.*)$/.exec(line);
    if (!h) continue;
    const text = h[1]!.trim();
    const n = /^§?\s*(\d+(?:\.\d+)*)\.?(?:\s|$)/.exec(text);
    if (n) numbers.add(n[1]!);
    titles.add(
      text
        .replace(/^§?\s*\d+(?:\.\d+)*\.?\s*/, "")
        .replace(/`/g, "")
        .toLowerCase(),
    );
  }
  return { numbers, titles };
}

const docCache = new Map<string, ReturnType<typeof sectionsOf> | null>();
function docSections(rel: string): ReturnType<typeof sectionsOf> | null {
  if (!docCache.has(rel)) {
    const p = path.join(ROOT, rel);
    docCache.set(rel, existsSync(p) ? sectionsOf(readFileSync(p, "utf8")) : null);
  }
  return docCache.get(rel)!;
}

interface Finding {
  where: string;
  what: string;
}

/** Every problem with the citations of one file's text. */
export function citationProblems(text: string, where: string): Finding[] {
  const found: Finding[] = [];
  const lines = text.split("\n");
  // Names of documents that are not in the repository (assembled so this file does not match itself).
  const outside = new RegExp(
    [
      "WIRE" + "-NOTES",
      "POLICY" + "-LANGUAGE",
      "interface" + "-spec",
      "ARCHITECTURE" + "\\.md",
      "\\.\\./shared/",
      "ROADMAP" + "\\.md",
    ].join("|"),
  );
  const issue = new RegExp("\\b" + "issues?" + "\\s+#?\\d+", "i");
  lines.forEach((line, i) => {
    const at = `${where}:${i + 1}`;
    const o = outside.exec(line);
    if (o) found.push({ where: at, what: `names ${o[0]}, which is outside the repository` });
    const n = issue.exec(line);
    if (n) found.push({ where: at, what: `names an issue number (${n[0]})` });
  });
  // A bare section sign must belong to a named document a little before it (docs/<file>.md, an
  // RFC, OIDC Core, or a list of sections that starts with one): "§6.8" alone names nothing.
  // A file may say once which note its bare sections are ("§ alone in this file: docs/x.md");
  // they are then checked against that note.
  const declared = /§ alone in this file: (docs\/[A-Za-z0-9_./-]+\.md)/.exec(text)?.[1];
  for (const m of text.matchAll(/§\s*(\d+(?:\.\d+)*)/g)) {
    const before = text.slice(Math.max(0, m.index - 160), m.index);
    if (/docs\/[A-Za-z0-9_./-]+\.md|RFC\s*\d+|OIDC Core|Core\s*$/.test(before)) continue;
    const line = text.slice(0, m.index).split("\n").length;
    if (!declared) {
      found.push({ where: `${where}:${line}`, what: "cites a section without naming its document (docs/<file>.md §n)" });
    } else if (!docSections(declared)?.numbers.has(m[1]!)) {
      found.push({ where: `${where}:${line}`, what: `cites ${declared} §${m[1]} (the file's note), which has no such section` });
    }
  }
  // docs/<file>.md, then optionally § sections ("§2", "§2.1, §4", "§1–2") or a quoted heading.
  const cite =
    /docs\/([A-Za-z0-9_./-]+?\.md)((?:\s*(?:§\s*\d+(?:\.\d+)*(?:\s*[–-]\s*\d+(?:\.\d+)*)?)(?:\s*(?:,|and|&)\s*)?)*)(?:,\s*"([^"]+)")?/g;
  for (const m of text.matchAll(cite)) {
    const line = text.slice(0, m.index).split("\n").length;
    const at = `${where}:${line}`;
    const rel = `docs/${m[1]}`;
    const doc = docSections(rel);
    if (!doc) {
      found.push({ where: at, what: `cites ${rel}, which does not exist` });
      continue;
    }
    for (const s of (m[2] ?? "").matchAll(/§\s*(\d+(?:\.\d+)*)(?:\s*[–-]\s*(\d+(?:\.\d+)*))?/g)) {
      for (const num of [s[1], s[2]].filter((x): x is string => !!x)) {
        if (!doc.numbers.has(num)) found.push({ where: at, what: `cites ${rel} §${num}, which has no such section` });
      }
    }
    // A quoted heading may run over a comment's line break ("…\n * rest" or "…\n// rest").
    const title = m[3]
      ?.replace(/\s*\n\s*(?:\/\/|\*)?\s*/g, " ")
      .replace(/`/g, "")
      .trim();
    if (title && !doc.titles.has(title.toLowerCase())) {
      found.push({ where: at, what: `cites ${rel} "${title}", which has no such heading` });
    }
  }
  return found;
}

describe("citations in code point into docs/", () => {
  it("scans the code", () => {
    assert.ok(files.length > 100, `expected the source tree, found ${files.length} files`);
  });

  it("every citation names an existing docs/ file and section; none names a file outside the repository or an issue number", () => {
    const problems = files.filter((f) => f !== THIS_FILE).flatMap((f) => citationProblems(readFileSync(f, "utf8"), path.relative(ROOT, f)));
    assert.deepEqual(
      problems.map((p) => `${p.where}: ${p.what}`),
      [],
    );
  });

  it("the checker itself catches each kind of problem", () => {
    const probe = [
      "// see docs/no-such-note.md §1",
      `// see ${"WIRE" + "-NOTES"} §3`,
      `// (${"issue"} 14)`,
      "// docs/login-lookups.md §99",
      '// docs/login-lookups.md, "No such heading"',
    ].join("\n");
    const whats = citationProblems(probe, "probe").map((p) => p.what);
    assert.equal(whats.length, 5, whats.join("\n"));
    assert.match(whats.join("\n"), /does not exist/);
    assert.match(whats.join("\n"), /outside the repository/);
    assert.match(whats.join("\n"), /issue number/);
    assert.match(whats.join("\n"), /§99, which has no such section/);
    assert.match(whats.join("\n"), /no such heading/);
    assert.deepEqual(citationProblems("// docs/login-lookups.md §1, §2 and docs/tvc-isolation.md §1–2", "ok"), []);
    // A bare section names nothing, unless the file says whose sections it means (then checked).
    assert.match(
      citationProblems("// (" + "§6.8: a bare section)", "bare")
        .map((p) => p.what)
        .join(),
      /without naming its document/,
    );
    const declared = "// § alone in this file: docs/login-lookups.md\n" + "\n".repeat(5) + "x".repeat(200) + "\n// (§2) and (§98)";
    assert.deepEqual(
      citationProblems(declared, "declared").map((p) => p.what),
      ["cites docs/login-lookups.md §98 (the file's note), which has no such section"],
    );
  });
});
