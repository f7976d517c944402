// Lists in docs/ that mirror a list in code, held to it by a test (docs/testing.md §3). The
// doc marks the list — a table, a numbered list or an inline run of `code` spans — between
// `<!-- list:<name> -->` and `<!-- /list -->`; the test reads what the block names and compares
// it with the code's own list, telling the developer what to add or remove, or which command
// rewrites it. Where the code's list is a TypeScript type or a function body rather than a
// value, `optionalMembers` and `topLevelCalls` read it from the source with the compiler.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

export const ROOT = path.resolve(import.meta.dirname, "../..");

/** The text between `<!-- list:<name> -->` and the next `<!-- /list -->` in `file` (relative to the repository). */
export function markedBlock(file: string, name: string): string {
  const text = readFileSync(path.join(ROOT, file), "utf8");
  const open = `<!-- list:${name} -->`;
  const start = text.indexOf(open);
  assert.ok(start >= 0, `${file} has no ${open} … <!-- /list --> block: mark the list that mirrors the code with it`);
  assert.equal(text.indexOf(open, start + 1), -1, `${file} marks ${open} twice`);
  const end = text.indexOf("<!-- /list -->", start);
  assert.ok(end > start, `${file}: ${open} is never closed with <!-- /list -->`);
  return text.slice(start + open.length, end);
}

/** Every `code` span of `text`, in order, without its backticks. */
export function codeSpans(text: string): string[] {
  return [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
}

/** The rows of a markdown table in `block` (header and separator left out), each as its cells. */
export function tableRows(block: string): string[][] {
  const rows = block
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.startsWith("|"))
    .map((l) =>
      l
        .replace(/^\||\|$/g, "")
        .split("|")
        .map((c) => c.trim()),
    );
  return rows.filter((r, i) => i > 0 && !r.every((c) => /^:?-+:?$/.test(c)));
}

/** The items of a numbered list in `block`, each with its continuation lines. */
export function numberedItems(block: string): string[] {
  return block
    .split(/\n(?=\s*\d+\.\s)/)
    .map((s) => s.trim())
    .filter((s) => /^\d+\.\s/.test(s));
}

/** The first `code` span of each string (a row's first cell, a list item), failing on one without. */
export function firstSpans(items: readonly string[], where: string): string[] {
  return items.map((item) => {
    const span = codeSpans(item)[0];
    assert.ok(span !== undefined, `${where}: an entry names nothing in backticks: ${item.slice(0, 120)}`);
    return span;
  });
}

/**
 * Fails unless the doc's list is the code's: the same entries, and in the same order when
 * `ordered`. The message names what is missing, what is stale, and `fix` (what to edit or run).
 */
export function assertSameList(
  where: string,
  doc: readonly string[],
  code: readonly string[],
  fix: string,
  { ordered = false } = {},
): void {
  const missing = code.filter((c) => !doc.includes(c));
  const stale = doc.filter((d) => !code.includes(d));
  const dupes = doc.filter((d, i) => doc.indexOf(d) !== i);
  const problems = [
    missing.length ? `missing ${missing.join(", ")}` : "",
    stale.length ? `not in the code: ${stale.join(", ")}` : "",
    dupes.length ? `listed twice: ${dupes.join(", ")}` : "",
    !missing.length && !stale.length && !dupes.length && ordered && doc.join("\n") !== code.join("\n")
      ? `order differs: the code's is ${code.join(", ")}`
      : "",
  ].filter(Boolean);
  assert.deepEqual(problems, [], `${where} no longer mirrors the code (${problems.join("; ")}). ${fix}`);
}

function sourceOf(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(path.join(ROOT, file), "utf8"), ts.ScriptTarget.Latest, true);
}

/** The optional members (`name?:`, `name?()`) of the interface `name` in `file`, in declaration order. */
export function optionalMembers(file: string, name: string): string[] {
  const decl = sourceOf(file).statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === name);
  assert.ok(decl, `${file} declares no interface ${name}`);
  return decl.members.filter((m) => m.questionToken !== undefined && m.name !== undefined).map((m) => (m.name as ts.Identifier).text);
}

/**
 * The calls the function `name` of `file` makes as its steps: every call in its body, in
 * source order, that is neither an argument of another call nor inside a nested function —
 * each as its callee's text (`refuseTvc`, `def.validator.parse`). `namedOnly`: only calls of a
 * function by its name (a step), not of a method (`createHash(…).update(…).digest`).
 */
export function topLevelCalls(file: string, name: string, { namedOnly = false } = {}): string[] {
  const src = sourceOf(file);
  const fn = src.statements.find((s): s is ts.FunctionDeclaration => ts.isFunctionDeclaration(s) && s.name?.text === name);
  assert.ok(fn?.body, `${file} declares no function ${name}`);
  const calls: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node)) return;
    if (ts.isCallExpression(node)) {
      if (!namedOnly || ts.isIdentifier(node.expression)) calls.push(node.expression.getText(src));
      return;
    }
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(fn.body, visit);
  return calls;
}

/** Every function whose name starts with `prefix` that the files call, as a sorted set. */
export function calledNames(files: readonly string[], prefix: string): string[] {
  const names = new Set<string>();
  for (const file of files) {
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text.startsWith(prefix))
        names.add(node.expression.text);
      ts.forEachChild(node, visit);
    };
    visit(sourceOf(file));
  }
  return [...names].sort();
}
