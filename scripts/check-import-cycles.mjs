#!/usr/bin/env node
// Fails when the modules under src/ import each other in a cycle, or when an import runs up
// the layer list of scripts/layers.mjs (docs/layers.md).
//
// Every relative `import … from`, `export … from`, side-effect `import "…"` and dynamic
// `import("…")` is an edge, `import type` included: a type-only cycle still means two modules
// that cannot be understood (or moved, or split) one without the other, and keeping the tree
// clean of them costs nothing at run time. Bare specifiers (packages, node:*) are not
// followed. Comments are stripped first so an example in a comment is not an edge.
//
//   node scripts/check-import-cycles.mjs [dir]     (default: src)
import { readFileSync, readdirSync, statSync, existsSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { layerViolations } from "./layers.mjs";

const root = resolve(process.argv[2] ?? "src");
const SOURCE = /\.(?:ts|mts|cts|js|mjs|cjs)$/;

function sourceFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (SOURCE.test(name) && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** Removes comments, keeping string literals (specifiers live in them) intact. */
function stripComments(text) {
  return text.replace(/("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`)|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (m, str) => str ?? "");
}

const SPECIFIERS = [
  /\bimport\s+(?:type\s+)?[^"';]*?\sfrom\s*["']([^"']+)["']/g, // import x / { x } / * as x / type { x } from "…"
  /\bexport\s+(?:type\s+)?(?:\*|\{[^}]*\})(?:\s+as\s+\w+)?\s*from\s*["']([^"']+)["']/g, // export … from "…"
  /\bimport\s*["']([^"']+)["']/g, // import "…"
  /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g, // import("…")
];

/** The file a relative specifier names, trying the extensions TypeScript would. */
function resolveSpecifier(from, spec) {
  const base = resolve(dirname(from), spec);
  const candidates = [base, base.replace(/\.js$/, ".ts"), `${base}.ts`, `${base}.mjs`, `${base}.js`, join(base, "index.ts")];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile());
}

const files = sourceFiles(root);
const edges = new Map();
const imports = [];
const underRoot = (f) => relative(root, f).split(sep).join("/");
for (const file of files) {
  const text = stripComments(readFileSync(file, "utf8"));
  const targets = new Set();
  for (const re of SPECIFIERS) {
    for (const m of text.matchAll(re)) {
      const spec = m[1];
      if (!spec.startsWith(".")) continue;
      const target = resolveSpecifier(file, spec);
      if (!target) {
        console.error(`${relative(process.cwd(), file)}: cannot resolve ${JSON.stringify(spec)}`);
        process.exitCode = 1;
        continue;
      }
      if (!target.startsWith(root + sep)) continue;
      targets.add(target);
      imports.push({ from: underRoot(file), to: underRoot(target), specifier: spec });
    }
  }
  edges.set(file, [...targets].sort());
}

// Tarjan's strongly connected components: every component of more than one module (or a
// module importing itself) is a cycle.
let index = 0;
const stack = [];
const state = new Map();
const components = [];
function connect(v) {
  const s = { index, low: index, onStack: true };
  index++;
  state.set(v, s);
  stack.push(v);
  for (const w of edges.get(v) ?? []) {
    const t = state.get(w);
    if (!t) {
      connect(w);
      s.low = Math.min(s.low, state.get(w).low);
    } else if (t.onStack) {
      s.low = Math.min(s.low, t.index);
    }
  }
  if (s.low === s.index) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      state.get(w).onStack = false;
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (edges.get(v) ?? []).includes(v)) components.push(component);
  }
}
for (const file of files) if (!state.has(file)) connect(file);

/** One concrete cycle through the component, to show where to cut. */
function cycleIn(component) {
  const members = new Set(component);
  const start = component.sort()[0];
  const prev = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const w of edges.get(v) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [v];
        for (let p = prev.get(v); p; p = prev.get(p)) path.unshift(p);
        return [...path, start];
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return component;
}

const rel = (f) => relative(process.cwd(), f);
if (components.length) {
  console.error(`import cycles in ${rel(root) || "."}/: ${components.length}`);
  for (const c of components) {
    console.error(`  ${c.length} modules: ${cycleIn(c).map(rel).join(" → ")}`);
  }
  process.exitCode = 1;
}

const layerProblems = layerViolations(imports, files.map(underRoot));
if (layerProblems.length) {
  console.error(`imports against the layers (scripts/layers.mjs, docs/layers.md): ${layerProblems.length}`);
  for (const p of layerProblems) console.error(`  ${p}`);
  process.exitCode = 1;
}
if (!process.exitCode) {
  console.log(`no import cycles among ${files.length} modules in ${rel(root) || "."}/, and no import runs up the layers`);
}
