// The PSBT thread's entry when the TypeScript sources run (tests, development): tsx's loader,
// registered on the main thread by bin/sigil.mjs, does not carry into worker threads, so it is
// registered here. The bundle (dist/cli) has its own psbt-worker.mjs, compiled from
// psbt-worker-entry.ts by scripts/build.mjs, next to main.mjs.
import { register } from "tsx/esm/api";

register();
await import("./psbt-worker-entry.ts");
