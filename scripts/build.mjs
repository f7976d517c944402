#!/usr/bin/env node
// Bundles the service for `npm start` and for the processes `npm test` spawns (dist/cli/main.mjs;
// packages stay external). Running through tsx costs every process a module-loader thread and
// its transpile caches — about 50 MB of RSS and over a second of start-up — and the service has
// no need to compile at run time. bin/sigil.mjs runs the bundle only while it is newer than every
// source file, and otherwise the sources through tsx (what development does), so a stale bundle
// never runs (docs/testing.md §4).
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const out = path.join(root, "dist", "cli");
mkdirSync(out, { recursive: true });
const common = { bundle: true, platform: "node", format: "esm", target: "node20", packages: "external", sourcemap: "linked", logLevel: "warning" };
await build({ ...common, entryPoints: [path.join(root, "src/cli/main.ts")], outfile: path.join(out, "main.mjs") });
// The webhook delivery worker's thread: the dispatcher opens ./delivery-worker.mjs next to
// itself (src/webhooks: a bootstrap that registers tsx; here: this bundle).
await build({ ...common, entryPoints: [path.join(root, "src/webhooks/delivery-worker-entry.ts")], outfile: path.join(out, "delivery-worker.mjs") });
// Files the sources open relative to themselves (import.meta.url): the bundle sits at the same
// depth (dist/cli ~ src/cli), so ../../package.json resolves; the checkpointer's worker is copied.
copyFileSync(path.join(root, "src/store/sqlite/checkpointer.worker.mjs"), path.join(out, "checkpointer.worker.mjs"));
