// Preload (`node --import <this file> bin/sigil.mjs serve`): counts the statements node-postgres
// sends, so that round trips per request can be measured without touching the server's code.
// Each statement is written to stderr as `pg-trace <n> <sql>` (n counts from 1). Used by
// bench/statements.ts; load it into a server you start yourself to see its statements.
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.cwd(), "package.json"));
const pg = require("pg");
let n = 0;
const original = pg.Client.prototype.query;
pg.Client.prototype.query = function traced(config, values, callback) {
  const text = typeof config === "string" ? config : config?.text;
  if (typeof text === "string") process.stderr.write(`pg-trace ${++n} ${text.replace(/\s+/g, " ").slice(0, 300)}\n`);
  return original.call(this, config, values, callback);
};
