// Round trips to PostgreSQL per request: starts `sigil serve` on a fresh database with
// bench/pg-trace.mjs preloaded, sends a few stamped whoami queries and create_user_tag
// activities (after one warm-up of each), and prints the statements each one sent.
//
//   node --import tsx bench/statements.ts [--postgres URL] [--tree DIR] [--quiet]
//
//   --postgres URL / BENCH_DATABASE_URL   where the throw-away database is created (required)
//   --tree DIR                            the Sigil tree whose server runs (default: this one;
//                                         e.g. /tmp/sigil-before for the "before" count)
//   --quiet                               counts only, not the statements
import path from "node:path";
import { randomBytes } from "node:crypto";
import { cleanupAll, cleanupSync, newSigilInstance, sigilInit, startSigil } from "./procs.ts";
import { sdkStamp } from "./stamp.ts";
import { option } from "./options.ts";

const URL_ = option("--postgres", "BENCH_DATABASE_URL");
const TREE = option("--tree", "BENCH_TREE");
const QUIET = process.argv.includes("--quiet");
const TRACE = path.join(import.meta.dirname, "pg-trace.mjs");

export interface StatementCounts {
  whoami: number;
  activity: number;
}

/** Statements per stamped whoami and per stamped activity (steady state: the second of each). */
export async function countStatements(adminUrl: string, tree?: string, print: (s: string) => void = () => {}): Promise<StatementCounts> {
  const inst = await newSigilInstance("postgres", adminUrl, tree);
  try {
    const creds = await sigilInit(inst, "Statements Org");
    // From the sources (SIGIL_NO_BUNDLE): the bundle carries its own copy of pg, which the trace cannot reach.
    const server = await startSigil({ ...inst, env: { ...inst.env, SIGIL_NO_BUNDLE: "1" } }, ["--import", TRACE]);
    try {
      const lines = () =>
        server
          .output()
          .split("\n")
          .filter((l) => l.startsWith("pg-trace "));
      const once = async (label: string, send: () => Promise<void>, tries = 1): Promise<number> => {
        // The server's own background statements (sweepers, webhook workers) would count too:
        // settle first, take only what arrived while the request ran, and keep the least of
        // a few tries.
        let best: string[] | undefined;
        for (let i = 0; i < tries; i++) {
          await new Promise((r) => setTimeout(r, 150));
          const before = lines().length;
          await send();
          const got = lines().slice(before);
          if (!best || got.length < best.length) best = got;
        }
        print(`  ${label}: ${best!.length} statements`);
        for (const l of best!) print(`      ${l.replace(/^pg-trace \d+ /, "").slice(0, 160)}`);
        return best!.length;
      };
      const post = async (p: string, body: string) => {
        const s = await sdkStamp(body, creds.apiPublicKey, creds.apiPrivateKey);
        const r = await fetch(`${server.url}${p}`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-stamp": s.stamp },
          body: new Uint8Array(s.body),
        });
        if (r.status !== 200) throw new Error(`${p} answered ${r.status}: ${await r.text()}`);
        await r.arrayBuffer();
      };
      const whoami = () => post("/public/v1/query/whoami", JSON.stringify({ organizationId: creds.organizationId }));
      const activity = () =>
        post(
          "/public/v1/submit/create_user_tag",
          JSON.stringify({
            type: "ACTIVITY_TYPE_CREATE_USER_TAG",
            timestampMs: String(Date.now()),
            organizationId: creds.organizationId,
            parameters: { userTagName: `stmt-${randomBytes(4).toString("hex")}`, userIds: [] },
          }),
        );
      await once("whoami (first, warms caches)", whoami);
      const w = await once("whoami", whoami, 3);
      await once("activity (first, warms caches)", activity);
      const a = await once("activity", activity, 3);
      return { whoami: w, activity: a };
    } finally {
      await server.stop();
    }
  } finally {
    await inst.cleanup();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  process.on("exit", cleanupSync);
  if (!URL_) {
    console.error("statements: pass --postgres URL or set BENCH_DATABASE_URL");
    process.exit(2);
  }
  countStatements(URL_, TREE, QUIET ? undefined : (s) => console.log(s))
    .then((c) => console.log(`${TREE ?? "this tree"}: stamped whoami ${c.whoami} statements, stamped activity ${c.activity} statements`))
    .catch(async (e: unknown) => {
      console.error((e as Error).stack ?? e);
      await cleanupAll();
      process.exit(1);
    });
}
