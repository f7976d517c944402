// Summarises a V8 .cpuprofile (node --cpu-prof): self time by function, by package/module,
// and inclusive time of Sigil's own functions, as percentages of busy (non-idle) time.
//
//   node --import tsx bench/profile-summary.ts <file.cpuprofile> [--top 25] [--after authenticate]
//
// --after <name>: ignore samples before the first stack containing a function of that name
// (skips process start-up and module compilation; default "authenticate", i.e. the first
// request through the pipeline). Pass --after "" to keep everything.
import { existsSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Row {
  name: string;
  ms: number;
  pct: number;
}

export interface Summary {
  file: string;
  windowMs: number;
  busyMs: number;
  idlePct: number;
  byFunction: Row[];
  byPackage: Row[];
  inclusiveSigil: Row[];
}

const THIS_ROOT = path.resolve(import.meta.dirname, "..");
const SPECIAL = new Set(["(garbage collector)", "(program)", "(idle)", "(root)"]);

// The Sigil tree a profile was taken of: this one, or another (bench --before) whose sources
// sit at <root>/src/. Set per profile by summarize().
let ROOT = THIS_ROOT;

/** The tree whose src/pipeline/ the profile ran (defaults to this one). */
function sigilRootOf(prof: CpuProfile): string {
  for (const n of prof.nodes) {
    // Sources run by tsx sit at <root>/src/; `npm start` runs the esbuild bundle <root>/dist/cli/.
    const m = /^file:\/\/(.*)\/(?:src\/pipeline\/|dist\/cli\/)/.exec(n.callFrame.url);
    if (m && !m[1]!.includes("/node_modules/")) return decodeURIComponent(m[1]!);
  }
  return THIS_ROOT;
}

function shortUrl(url: string): string {
  let u = url.startsWith("file://") ? decodeURIComponent(url.slice("file://".length)) : url;
  const nm = u.lastIndexOf("/node_modules/");
  if (nm >= 0) return u.slice(nm + "/node_modules/".length);
  if (u.startsWith(ROOT + "/")) u = u.slice(ROOT.length + 1);
  return u;
}

/** npm package, Sigil source directory, or node core module group. */
function packageOf(url: string): string {
  const u = url.startsWith("file://") ? decodeURIComponent(url.slice("file://".length)) : url;
  const nm = u.lastIndexOf("/node_modules/");
  if (nm >= 0) {
    const parts = u.slice(nm + "/node_modules/".length).split("/");
    return parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  if (u.startsWith("node:")) {
    const parts = u.slice(5).split("/");
    return `node:${parts.slice(0, parts[0] === "internal" ? 2 : 1).join("/")}`;
  }
  if (u.startsWith(ROOT + "/")) {
    const rel = u.slice(ROOT.length + 1).split("/");
    return rel[0] === "src" ? `sigil ${rel.slice(0, rel.length > 2 ? 2 : 1).join("/")}` : `sigil ${rel[0]}`;
  }
  return u || "(native)";
}

/**
 * Frames in a bundle (dist/cli/main.mjs holds the dependencies too) named by the file and line
 * they were bundled from, through the bundle's linked source map: packages and Sigil's
 * directories are told apart as if the sources had run.
 */
function unbundle(prof: CpuProfile): void {
  const maps = new Map<string, SourceMap | undefined>();
  const mapOf = (url: string): SourceMap | undefined => {
    if (!maps.has(url)) {
      let m: SourceMap | undefined;
      if (url.startsWith("file://")) {
        const file = `${fileURLToPath(url)}.map`;
        if (existsSync(file)) m = new SourceMap(JSON.parse(readFileSync(file, "utf8")));
      }
      maps.set(url, m);
    }
    return maps.get(url);
  };
  for (const node of prof.nodes) {
    const f = node.callFrame;
    const map = f.url ? mapOf(f.url) : undefined;
    if (!map) continue;
    const entry = map.findEntry(f.lineNumber, f.columnNumber) as { originalSource?: string; originalLine?: number };
    if (!entry.originalSource) continue;
    const source = entry.originalSource.startsWith("file://")
      ? entry.originalSource
      : pathToFileURL(path.resolve(path.dirname(fileURLToPath(f.url)), entry.originalSource)).href;
    f.url = source;
    f.lineNumber = entry.originalLine ?? f.lineNumber;
  }
}

export function summarize(file: string, opts: { top?: number; after?: string } = {}): Summary {
  const top = opts.top ?? 25;
  const after = opts.after ?? "authenticate";
  const prof = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  ROOT = sigilRootOf(prof);
  unbundle(prof);
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of prof.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  // Duration of sample i: time until the next sample (the last one gets the mean).
  const n = prof.samples.length;
  const dur = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n - 1; i++) {
    dur[i] = prof.timeDeltas[i + 1]!;
    sum += dur[i]!;
  }
  if (n > 0) dur[n - 1] = n > 1 ? sum / (n - 1) : 0;

  const stackOf = (id: number): ProfileNode[] => {
    const out: ProfileNode[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) out.push(byId.get(cur)!);
    return out;
  };
  let start = 0;
  if (after) {
    start = prof.samples.findIndex((id) => stackOf(id).some((f) => f.callFrame.functionName === after));
    if (start < 0) start = 0;
  }

  const pkgCache = new Map<number, string>();
  const pkgOfNode = (id: number): string => {
    const hit = pkgCache.get(id);
    if (hit) return hit;
    const node = byId.get(id)!;
    const { url, functionName } = node.callFrame;
    let p: string;
    if (SPECIAL.has(functionName)) p = functionName;
    else if (url) p = packageOf(url);
    else {
      // Builtins and native code carry no url: count them for whoever called them.
      const up = parent.get(id);
      p = up === undefined || SPECIAL.has(byId.get(up)!.callFrame.functionName) ? "(native)" : pkgOfNode(up);
    }
    pkgCache.set(id, p);
    return p;
  };
  const fnName = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName || "(anonymous)";
    return url ? `${name}  ${shortUrl(url)}:${lineNumber + 1}` : SPECIAL.has(name) ? name : `${name}  (native)`;
  };

  const self = new Map<string, number>();
  const pkg = new Map<string, number>();
  const incl = new Map<string, number>();
  let idle = 0;
  let windowUs = 0;
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  for (let i = start; i < n; i++) {
    const id = prof.samples[i]!;
    const d = dur[i]!;
    windowUs += d;
    const node = byId.get(id)!;
    if (node.callFrame.functionName === "(idle)") {
      idle += d;
      continue;
    }
    add(self, fnName(node), d);
    add(pkg, pkgOfNode(id), d);
    const seen = new Set<string>();
    for (const f of stackOf(id)) {
      const u = f.callFrame.url;
      if (!u.includes(`${ROOT}/src/`) && !u.includes(`${ROOT}/dist/`)) continue;
      const k = fnName(f);
      if (seen.has(k)) continue;
      seen.add(k);
      add(incl, k, d);
    }
  }
  const busy = windowUs - idle;
  const rows = (m: Map<string, number>, k: number): Row[] =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, k)
      .map(([name, us]) => ({ name, ms: us / 1000, pct: busy > 0 ? (100 * us) / busy : 0 }));
  return {
    file,
    windowMs: windowUs / 1000,
    busyMs: busy / 1000,
    idlePct: windowUs > 0 ? (100 * idle) / windowUs : 0,
    byFunction: rows(self, top),
    byPackage: rows(pkg, top),
    inclusiveSigil: rows(incl, Math.min(top, 20)),
  };
}

export function formatSummary(s: Summary): string {
  const table = (title: string, rows: Row[]) =>
    [`  ${title}`, ...rows.map((r) => `    ${r.pct.toFixed(1).padStart(5)}%  ${r.ms.toFixed(0).padStart(7)} ms  ${r.name}`)].join("\n");
  return [
    `${path.basename(s.file)}: ${(s.windowMs / 1000).toFixed(1)} s profiled after the first request, ${(s.busyMs / 1000).toFixed(1)} s busy (${s.idlePct.toFixed(1)}% idle); percentages are of busy time`,
    table("self time by package / module (native code counted for its JS caller):", s.byPackage),
    table("self time by function:", s.byFunction),
    table("inclusive time of Sigil functions:", s.inclusiveSigil),
  ].join("\n");
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const args = process.argv.slice(2);
  const opt = (name: string) => {
    const i = args.indexOf(name);
    if (i < 0) return undefined;
    const v = args[i + 1];
    args.splice(i, 2);
    return v;
  };
  const top = opt("--top");
  const after = opt("--after");
  if (args.length === 0) {
    console.error("usage: node --import tsx bench/profile-summary.ts <file.cpuprofile>... [--top N] [--after fn]");
    process.exit(2);
  }
  for (const f of args) console.log(formatSummary(summarize(f, { top: top ? Number(top) : undefined, after })) + "\n");
}
