// SIGIL_TEST_BUNDLE=1 (docs/testing.md §4): a job's test files bundled with esbuild into one
// module, the packages left to Node, so that the job's process runs without tsx. Through tsx
// every module a test process loads — the SDK clients, helpers and sources — is answered by
// tsx's loader thread; an end-to-end group of three files took 43.8 s of CPU that way and
// 37.0 s bundled. Each file keeps its own top-level suites, runs in the order given and fails
// alone as `<file> loads` when it does not load, as test/helpers/import-files.ts does.
// `import.meta` in each bundled file is rewritten to that file's own URL, directory and name,
// so paths computed from it (the repository's root, worker files, fixtures) are unchanged.
import { build } from "esbuild";
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const SOURCE = /\.(ts|mts|js|mjs)$/;

/** What `import.meta` reads in `file` once bundled: its own values, resolve() as seen from it. */
function importMetaOf(file) {
  const url = JSON.stringify(pathToFileURL(file).href);
  return (
    `({ url: ${url}, filename: ${JSON.stringify(file)}, dirname: ${JSON.stringify(path.dirname(file))}, ` +
    `resolve: (s) => (s.startsWith(".") ? new URL(s, ${url}).href : import.meta.resolve(s)) })`
  );
}

const importMeta = {
  name: "import-meta-per-file",
  setup(b) {
    b.onLoad({ filter: SOURCE }, (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const text = readFileSync(args.path, "utf8");
      if (!text.includes("import.meta")) return undefined;
      return { contents: text.replace(/\bimport\.meta\b/g, importMetaOf(args.path)), loader: /\.m?ts$/.test(args.path) ? "ts" : "js" };
    });
  },
};

/** Bundles `files` (absolute paths) into `outfile` under the repository `root`, the packages external. */
export async function bundleTestFiles(root, files, outfile) {
  mkdirSync(path.dirname(outfile), { recursive: true });
  const entry = [
    `import { it } from "node:test";`,
    ...files.map(
      (f) =>
        `try { await import(${JSON.stringify(f)}); } catch (err) { it(${JSON.stringify(`${path.relative(root, f)} loads`)}, () => { throw err; }); }`,
    ),
  ].join("\n");
  await build({
    stdin: { contents: entry, resolveDir: root, sourcefile: path.basename(outfile), loader: "js" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    outfile,
    plugins: [importMeta],
    sourcemap: "inline",
    logLevel: "error",
  });
  return outfile;
}
