#!/usr/bin/env node
// Launcher: loads the TypeScript sources through tsx so `npx sigil` and `npm start`
// run the same code the tests run, with no separate build step to forget.
import { register } from "tsx/esm/api";
register();
const { main } = await import("../src/cli/main.ts");
await main(process.argv.slice(2));
