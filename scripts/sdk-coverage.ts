// `npm run docs:coverage`: how much of the SDK's API this service answers. Reads the paths of
// `@turnkey/http` (the version package.json pins and the tests use: its generated
// public_api.types.d.ts lists every `/public/v1/submit/<op>` and `/public/v1/query/<op>`) and
// the operation registries (imported, not parsed), and writes the README table and the list of
// unserved paths in docs/api.md §4, each between its markers. Idempotent: a second run changes
// nothing. test/unit/sdk-coverage.test.ts fails when either file is not what this would write.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ACTIVITIES, VOTES } from "../src/activities/registry.ts";
import { QUERIES } from "../src/queries/registry.ts";

const root = path.resolve(import.meta.dirname, "..");
export const README = path.join(root, "README.md");
export const API_DOC = path.join(root, "docs/api.md");
const NOTE = "written by `npm run docs:coverage` from the SDK's paths and the registries; do not edit";
export const MARKERS = {
  readme: { begin: `<!-- sdk-coverage:begin — ${NOTE} -->`, end: "<!-- sdk-coverage:end -->" },
  api: { begin: `<!-- sdk-unserved:begin — ${NOTE} -->`, end: "<!-- sdk-unserved:end -->" },
};

export interface SdkPaths {
  version: string;
  submit: string[];
  query: string[];
}

/** The SDK's submit and query operations, sorted. */
export function sdkPaths(): SdkPaths {
  // The installed package (its exports map hides package.json from require.resolve).
  const pkgPath = path.join(root, "node_modules/@turnkey/http/package.json");
  const version = (JSON.parse(readFileSync(pkgPath, "utf8")) as { version: string }).version;
  const types = readFileSync(
    path.join(path.dirname(pkgPath), "dist/__generated__/services/coordinator/public/v1/public_api.types.d.ts"),
    "utf8",
  );
  const submit = new Set<string>();
  const query = new Set<string>();
  for (const m of types.matchAll(/^\s*"\/public\/v1\/(submit|query)\/([a-z0-9_]+)": \{/gm)) (m[1] === "submit" ? submit : query).add(m[2]!);
  if (submit.size === 0 || query.size === 0) throw new Error(`@turnkey/http ${version}: no /public/v1 paths found in its generated types`);
  return { version, submit: [...submit].sort(), query: [...query].sort() };
}

export interface Coverage {
  version: string;
  submit: { served: string[]; unserved: string[] };
  query: { served: string[]; unserved: string[] };
  /** Served here, not a path of the SDK. */
  extra: string[];
}

export function coverage(sdk: SdkPaths = sdkPaths()): Coverage {
  const submitOps = new Set([...ACTIVITIES, ...VOTES].map((d) => d.op));
  const queryOps = new Set(QUERIES.map((q) => q.op));
  const split = (paths: string[], ours: Set<string>) => ({
    served: paths.filter((p) => ours.has(p)),
    unserved: paths.filter((p) => !ours.has(p)),
  });
  const sdkSubmit = new Set(sdk.submit);
  const sdkQuery = new Set(sdk.query);
  return {
    version: sdk.version,
    submit: split(sdk.submit, submitOps),
    query: split(sdk.query, queryOps),
    extra: [
      ...[...submitOps].filter((o) => !sdkSubmit.has(o)).map((o) => `submit/${o}`),
      ...[...queryOps].filter((o) => !sdkQuery.has(o)).map((o) => `query/${o}`),
    ].sort(),
  };
}

const code = (ops: string[]) => (ops.length ? ops.map((o) => `\`${o}\``).join(", ") : "none");

export function readmeBlock(c: Coverage): string {
  return [
    `| \`@turnkey/http\` ${c.version} | Served | SDK paths |`,
    "|---|--:|--:|",
    `| Activities (\`/public/v1/submit/…\`) | ${c.submit.served.length} | ${c.submit.served.length + c.submit.unserved.length} |`,
    `| Queries (\`/public/v1/query/…\`) | ${c.query.served.length} | ${c.query.served.length + c.query.unserved.length} |`,
    "",
    `The paths not served are listed in [docs/api.md](docs/api.md) §4. Served, not an SDK path: ${code(c.extra)}.`,
  ].join("\n");
}

export function apiBlock(c: Coverage): string {
  return [
    `Not served, of \`@turnkey/http\` ${c.version}'s paths (each answers \`unknown activity operation\` / \`unknown query operation\`):`,
    "",
    `- \`/public/v1/submit/…\` (${c.submit.unserved.length}): ${code(c.submit.unserved)}.`,
    `- \`/public/v1/query/…\` (${c.query.unserved.length}): ${code(c.query.unserved)}.`,
  ].join("\n");
}

function replaceBetween(doc: string, file: string, m: { begin: string; end: string }, block: string): string {
  const b = doc.indexOf(m.begin);
  const e = doc.indexOf(m.end);
  if (b < 0 || e < b) throw new Error(`${file}: the markers ${m.begin} … ${m.end} are missing or out of order`);
  return doc.slice(0, b + m.begin.length) + "\n" + block + "\n" + doc.slice(e);
}

/** The README and docs/api.md with their coverage blocks as the registries and the SDK yield. */
export function withCoverage(readme: string, api: string, c: Coverage = coverage()): { readme: string; api: string } {
  return {
    readme: replaceBetween(readme, "README.md", MARKERS.readme, readmeBlock(c)),
    api: replaceBetween(api, "docs/api.md", MARKERS.api, apiBlock(c)),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const before = { readme: readFileSync(README, "utf8"), api: readFileSync(API_DOC, "utf8") };
  const c = coverage();
  const after = withCoverage(before.readme, before.api, c);
  if (after.readme !== before.readme) writeFileSync(README, after.readme);
  if (after.api !== before.api) writeFileSync(API_DOC, after.api);
  const changed = after.readme !== before.readme || after.api !== before.api;
  process.stdout.write(
    `SDK coverage (@turnkey/http ${c.version}): submit ${c.submit.served.length}/${c.submit.served.length + c.submit.unserved.length}, ` +
      `query ${c.query.served.length}/${c.query.served.length + c.query.unserved.length}; ${changed ? "README.md and docs/api.md rewritten" : "up to date"}\n`,
  );
}
