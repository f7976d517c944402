#!/usr/bin/env node
// Launcher. `npm start` and `npm test` build dist/cli/main.mjs first (scripts/build.mjs) and it
// runs while it is newer than every file under src/; otherwise (development, `npx sigil` without
// a build, a source edited since the build) the TypeScript sources run through tsx — the same
// code either way, never a stale bundle (docs/testing.md §4). SIGIL_NO_BUNDLE=1 forces the sources;
// SIGIL_BUNDLE_PINNED=1 (set by `npm test` for its own processes) runs the bundle the run built
// even once a source is edited during the run: through tsx a process costs about seven times the CPU.
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const bundle = path.join(root, "dist", "cli", "main.mjs");

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(p) : statSync(p).mtimeMs);
  }
  return newest;
}

const useBundle =
  process.env.SIGIL_NO_BUNDLE !== "1" &&
  existsSync(bundle) &&
  (process.env.SIGIL_BUNDLE_PINNED === "1" || statSync(bundle).mtimeMs >= newestSource(path.join(root, "src")));
let main;
if (useBundle) {
  ({ main } = await import(pathToFileURL(bundle).href));
} else {
  const { register } = await import("tsx/esm/api");
  register();
  ({ main } = await import("../src/cli/main.ts"));
}
await main(process.argv.slice(2));
