#!/usr/bin/env node
// Bundles the service for `npm start` and for the processes `npm test` spawns (dist/cli/main.mjs),
// with its dependencies: running through tsx costs every process a module-loader thread and its
// transpile caches — about 50 MB of RSS and over a second of start-up — and even a bundle that
// left the packages external spent 0.9 s of a start resolving and compiling hundreds of their
// files (0.35 s with them inside). The service has no need to compile at run time. bin/sigil.mjs runs the bundle only while it is newer than every
// source file, and otherwise the sources through tsx (what development does), so a stale bundle
// never runs (docs/testing.md §4).
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const out = path.join(root, "dist", "cli");
mkdirSync(out, { recursive: true });
// Packages that load files relative to themselves (native addons, WebAssembly, esbuild's binary —
// the frames are built at start, docs/frames.md §5.1) stay external.
// (bench/statements.ts, which hooks node_modules' pg from outside, runs its server from the sources.)
const EXTERNAL = ["better-sqlite3", "esbuild", "secp256k1", "tiny-secp256k1", "pg-native", "bufferutil", "utf-8-validate"];
const common = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external: EXTERNAL,
  // CommonJS packages inside an ESM bundle still call require() for Node's own modules.
  banner: {
    js: 'import { createRequire as __sigilCreateRequire } from "node:module"; const require = __sigilCreateRequire(import.meta.url);',
  },
  sourcemap: "linked",
  logLevel: "warning",
};
await build({ ...common, entryPoints: [path.join(root, "src/cli/main.ts")], outfile: path.join(out, "main.mjs") });
// The webhook delivery worker's thread: the dispatcher opens ./delivery-worker.mjs next to
// itself (src/webhooks: a bootstrap that registers tsx; here: this bundle).
await build({
  ...common,
  entryPoints: [path.join(root, "src/webhooks/delivery-worker-entry.ts")],
  outfile: path.join(out, "delivery-worker.mjs"),
});
// The PSBT thread (src/signing/psbt-thread.ts opens ./psbt-worker.mjs next to the bundle).
await build({ ...common, entryPoints: [path.join(root, "src/signing/psbt-worker-entry.ts")], outfile: path.join(out, "psbt-worker.mjs") });
// Files the sources open relative to themselves (import.meta.url): the bundle sits at the same
// depth (dist/cli ~ src/cli), so ../../package.json resolves; the checkpointer's worker is copied.
copyFileSync(path.join(root, "src/store/sqlite/checkpointer.worker.mjs"), path.join(out, "checkpointer.worker.mjs"));
// The PKCS#11 token's thread (src/crypto/pkcs11/token.ts opens ./token.worker.mjs next to the bundle).
copyFileSync(path.join(root, "src/crypto/pkcs11/token.worker.mjs"), path.join(out, "token.worker.mjs"));
// The export and import frames as static files for any web server, with config.js and _headers
// from SIGIL_FRAMES_API_URL / SIGIL_FRAMES_PARENT_ORIGINS (docs/frames.md §5.2). Their sources
// are TypeScript: tsx loads the builder.
const { tsImport } = await import("tsx/esm/api");
const frames = await tsImport("../src/frames/build.ts", import.meta.url);
await frames.writeFrames(path.join(root, "dist", "frames"), frames.staticSettings(process.env));
// The operator console's files and the headers to serve them with (docs/console.md §2): what
// `sigil serve` builds in memory at /console, for a reverse proxy that serves them itself.
const consoleBuild = await tsImport("../src/console/build.ts", import.meta.url);
await consoleBuild.writeConsole(path.join(root, "dist", "console"));
