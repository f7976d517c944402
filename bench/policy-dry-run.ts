// The dry-run replay figure of `npm run bench:policy` (docs/benchmarks.md §5.1): a store seeded
// with N recorded activities (`sigil seed`, create_user_tag records with their votes and
// evaluation records), a served Sigil, ten policies created through the API, then
// dry_run_policies over the whole window — stamped by @turnkey/api-key-stamper, sent over
// HTTP, following nextCursor until complete — timed from the first request to the last answer.
import path from "node:path";
import { spawn } from "node:child_process";
import { newSigilInstance, ROOT, SIGIL_BIN, startSigil, type Engine } from "./procs.ts";
import { sdkStamp } from "./stamp.ts";
import type { SeedResult } from "../src/cli/seed.ts";

async function seed(env: NodeJS.ProcessEnv, activities: number): Promise<SeedResult> {
  const child = spawn(
    process.execPath,
    [SIGIL_BIN, "seed", "--json", "--suborgs", "0", "--users", "10", "--activities", String(activities)],
    {
      env,
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`sigil seed failed (${code}): ${err}`);
  return JSON.parse(out) as SeedResult;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answer's JSON, read field by field
async function post(url: string, op: string, body: Record<string, unknown>, s: SeedResult): Promise<Record<string, any>> {
  const text = JSON.stringify(body);
  const stamped = await sdkStamp(text, s.apiPublicKey, s.apiPrivateKey);
  const r = await fetch(`${url}/public/v1/${op}`, {
    method: "POST",
    body: text,
    headers: { "content-type": "application/json", "X-Stamp": stamped.stamp },
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as post() answers it
  const json = (await r.json()) as Record<string, any>;
  if (r.status !== 200) throw new Error(`${op}: ${r.status} ${JSON.stringify(json).slice(0, 500)}`);
  return json;
}

export interface DryRunFigure {
  engine: Engine;
  activities: number;
  replayed: number;
  changed: number;
  requests: number;
  seconds: number;
  seedSeconds: number;
}

/** Seeds `activities`, serves, and times one whole-window dry run. */
export async function benchDryRun(engine: Engine, activities: number, adminUrl?: string): Promise<DryRunFigure> {
  const inst = await newSigilInstance(engine, adminUrl);
  try {
    const t0 = performance.now();
    const s = await seed(inst.env, activities);
    const seedSeconds = (performance.now() - t0) / 1000;
    const server = await startSigil(
      inst,
      process.env.BENCH_DRY_RUN_PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_DRY_RUN_PROFILE}`] : [],
    );
    try {
      // Today's set: ten policies of the shapes the policy benchmark generates — conditions on the activity's
      // type, resource and action (a condition reading a param the activity lacks would be an OUTCOME_ERROR for
      // every other type, docs/policy-language.md §2.5), consensus on approvers' tags and counts.
      const kinds = [
        "'WALLET' && activity.action == 'EXPORT'",
        "'USER' && activity.action == 'CREATE'",
        "'POLICY'",
        "'PRIVATE_KEY' && activity.action == 'SIGN'",
        "'ORGANIZATION'",
      ];
      const policies = Array.from({ length: 10 }, (_, i) => ({
        policyName: `bench ${i}`,
        effect: i % 3 === 0 ? "EFFECT_DENY" : "EFFECT_ALLOW",
        condition: `activity.resource == ${kinds[i % kinds.length]}`,
        consensus: i % 2 ? `approvers.any(u, u.tags.contains('tag-${i}'))` : `approvers.count() >= ${2 + (i % 3)}`,
        notes: "",
      }));
      await post(
        server.url,
        "submit/create_policies",
        {
          type: "ACTIVITY_TYPE_CREATE_POLICIES",
          timestampMs: String(Date.now()),
          organizationId: s.organizationId,
          parameters: { policies },
        },
        s,
      );
      // The proposal: the seeded type needs two approvers, and one of today's policies is deleted.
      const listed = await post(server.url, "query/list_policies", { organizationId: s.organizationId }, s);
      const proposal = {
        add: [
          {
            policyName: "two for tags",
            effect: "EFFECT_ALLOW",
            condition: "activity.type == 'ACTIVITY_TYPE_CREATE_USER_TAG'",
            consensus: "approvers.count() >= 2",
          },
        ],
        delete: [(listed.policies as { policyId: string }[])[0]!.policyId],
      };
      const window = { last: Math.min(activities + 1, 100_000) };
      // One warm-up request (JIT, statement caches), not timed.
      await post(server.url, "query/dry_run_policies", { organizationId: s.organizationId, proposal, window: { last: 1000 } }, s);
      let replayed = 0,
        changed = 0,
        requests = 0;
      let after: string | undefined;
      const t1 = performance.now();
      for (;;) {
        const r = await post(
          server.url,
          "query/dry_run_policies",
          {
            organizationId: s.organizationId,
            proposal,
            window,
            paginationOptions: { limit: "1000", ...(after ? { after } : {}) },
          },
          s,
        );
        requests++;
        replayed += r.replayed as number;
        changed += (r.changed as unknown[]).length;
        if (r.complete) break;
        after = r.nextCursor as string;
      }
      const seconds = (performance.now() - t1) / 1000;
      return { engine, activities, replayed, changed, requests, seconds, seedSeconds };
    } finally {
      await server.stop(process.env.BENCH_DRY_RUN_PROFILE ? "SIGINT" : "SIGTERM");
    }
  } finally {
    await inst.cleanup();
  }
}

export function printDryRun(f: DryRunFigure): void {
  const rate = Math.round(f.replayed / f.seconds).toLocaleString("en-US");
  console.log(
    `dry_run_policies replay (${f.engine}): ${f.replayed.toLocaleString("en-US")} recorded activities through today's set (10 policies) and a proposed one` +
      ` in ${f.seconds.toFixed(2)} s over ${f.requests} HTTP request(s) (${rate} activities/s; ${f.changed} changed: the seeded submitter is the root quorum)` +
      ` | seeding ${f.seedSeconds.toFixed(1)} s | aim: 100,000 in <= 10 s: ${f.replayed >= 100_000 ? (f.seconds <= 10 ? "met" : "MISSED") : "not measured at 100,000"}`,
  );
}

// Alone: `node --import tsx bench/policy-dry-run.ts [--activities N] [--postgres URL]`.
if (path.resolve(process.argv[1] ?? "") === path.resolve(import.meta.filename)) {
  const i = process.argv.indexOf("--activities");
  const n = i > 0 ? Number(process.argv[i + 1]) : 100_000;
  const p = process.argv.indexOf("--postgres");
  const url = p > 0 ? process.argv[p + 1] : undefined;
  printDryRun(await benchDryRun(url ? "postgres" : "sqlite", n, url));
}
