// Micro-benchmark of Sigil's policy engine against Cedar (@cedar-policy/cedar-wasm, Node.js build),
// then the dry-run replay figure (bench/policy-dry-run.ts, docs/benchmarks.md §5.1).
//
//   npm run bench:policy [-- --duration S] [--dry-run-activities N] [--skip-dry-run]
//     S = measured seconds per engine and size (default 2); N = recorded activities seeded and
//     replayed through dry_run_policies over HTTP (default 100,000; BENCH_DATABASE_URL also on PostgreSQL)
//
// Per organization size (10, 100, 1,000 policies) it generates, from a seeded PRNG, one policy set
// written twice, in Sigil's language and in Cedar, plus a rotating set of requests; checks that both
// engines reach the same decision (and name the same determining policies) on every request; then
// measures decisions/s of each, and per-decision latency at 1,000 policies.
//
// What one timed decision is:
//   Sigil  decide(set, input): an outcome for every policy, the per-policy outcome array and reason
//          built; policies whose condition cannot match this activity type are skipped through the
//          engine's per-set plan cache (warm after warm-up; the cold cost is printed separately).
//          `input` (activity facts, approvers) is built beforehand.
//   Cedar  statefulIsAuthorized(call) against a policy set pre-parsed once (preparsePolicySet):
//          request, context and entities passed from JS into wasm, every policy evaluated, the
//          response passed back. `call` is built beforehand, including the flattened approver tag
//          set and per-tag counts that Cedar needs (see below): that translation is not timed.
import * as cedar from "@cedar-policy/cedar-wasm/nodejs";
import { compilePolicy, decide, policySet, type DecisionInput, type PolicySet } from "../src/policy/engine.ts";
import { cedarCall, cedarDecide, compareWithCedar, generateOrg, preparseCedarSet, prng, type Org } from "./policy-vs-cedar.ts";
import { benchDryRun, printDryRun } from "./policy-dry-run.ts";
import { cleanupAll } from "./procs.ts";

const SIZES = [10, 100, 1000] as const;
const REQUESTS_PER_SIZE = 240;
const SEED = 0x5161_11;

function durationArg(): number {
  const i = process.argv.indexOf("--duration");
  if (i < 0) return 2;
  const n = Number(process.argv[i + 1]);
  if (!Number.isFinite(n) || n <= 0 || n > 60) throw new Error(`--duration must be seconds in (0, 60], got ${process.argv[i + 1]}`);
  return n;
}

// ------------------------------------------------------------------------------ measurement

let sink = 0;

/** Calls fn over the requests for `seconds`, reading the clock every 16 calls. Returns calls/s. */
function throughput(fn: (i: number) => boolean, n: number, seconds: number): number {
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(seconds * 1e9));
  let calls = 0;
  let now: bigint;
  do {
    for (let k = 0; k < 16; k++, calls++) if (fn(calls % n)) sink++;
    now = process.hrtime.bigint();
  } while (now < end);
  return calls / (Number(now - start) / 1e9);
}

/** Times every call separately for `seconds`; returns [p50, p99] in µs. */
function latency(fn: (i: number) => boolean, n: number, seconds: number): [number, number] {
  const samples: number[] = [];
  const end = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
  for (let i = 0; ; i++) {
    const t0 = process.hrtime.bigint();
    if (fn(i % n)) sink++;
    const t1 = process.hrtime.bigint();
    samples.push(Number(t1 - t0) / 1000);
    if (t1 >= end) break;
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  return [at(0.5), at(0.99)];
}

// ------------------------------------------------------------------------------ main

const duration = durationArg();
const warmup = Math.min(1, duration / 4);
const fmt = (n: number, d = 0) => n.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });

console.log(`Sigil policy engine vs Cedar ${cedar.getCedarVersion()} (@cedar-policy/cedar-wasm, Node.js build), node ${process.version}`);
console.log(`${duration} s measured + ${warmup} s warm-up per engine and size; ${REQUESTS_PER_SIZE} rotating requests per size\n`);

interface Prepared {
  org: Org;
  set: PolicySet;
  inputs: DecisionInput[];
  calls: cedar.StatefulAuthorizationCall[];
}
const prepared: Prepared[] = [];
let disagreements = 0;
const rng = prng(SEED);
// Warm both compilers up (JIT, wasm tier-up) on a throwaway organization, so the compile costs
// printed below are not first-call costs. Expressions already compiled are served from Sigil's
// compile cache: the printed count of new sources says how many were really compiled.
const seen = new Set<string>();
{
  const warm = generateOrg(100, prng(SEED + 1), REQUESTS_PER_SIZE);
  for (const p of warm.policies) {
    compilePolicy(p.source);
    seen.add(p.source.condition).add(p.source.consensus);
  }
  preparseCedarSet(warm, "warm-up");
}
for (const size of SIZES) {
  const org = generateOrg(size, rng, REQUESTS_PER_SIZE);

  const t0 = process.hrtime.bigint();
  const compiled = org.policies.map((p) => compilePolicy(p.source));
  const set = policySet(compiled);
  const compileUs = Number(process.hrtime.bigint() - t0) / 1000;
  const sources = new Set(org.policies.flatMap((p) => [p.source.condition, p.source.consensus]));
  const fresh = [...sources].filter((s) => !seen.has(s)).length;
  for (const s of sources) seen.add(s);

  const setId = `org-${size}`;
  const t1 = process.hrtime.bigint();
  preparseCedarSet(org, setId);
  const cedarPrepUs = Number(process.hrtime.bigint() - t1) / 1000;

  // Equivalence first: timing two engines that decide differently would compare nothing.
  const calls = org.requests.map((r) => cedarCall(setId, r));
  const { agree, disagreements: differ, tally } = compareWithCedar(org, set, calls);
  for (const d of differ) {
    if (disagreements++ < 5)
      console.log(
        `  DISAGREE (${size}) request ${d.request}: sigil ${d.sigil.outcome} (${d.sigil.reason}), cedar ${JSON.stringify(d.cedar)}`,
      );
  }
  const denyPolicies = org.policies.filter((p) => p.source.effect === "EFFECT_DENY").length;
  console.log(
    `${fmt(size).padStart(5)} policies (${denyPolicies} DENY), ${org.users.length} users: equivalence ${agree}/${org.requests.length} agree` +
      ` | Sigil outcomes: ${tally.allow} allow, ${tally.denyExplicit} explicit deny, ${tally.denyImplicit} implicit deny,` +
      ` ${tally.requiresConsensus} requires consensus (Cedar: deny)`,
  );
  console.log(
    `        compile: Sigil compilePolicy ${fmt(compileUs / size, 1)} µs/policy (${fresh} of ${2 * size} condition/consensus sources` +
      ` new, ≈${fmt(compileUs / Math.max(1, fresh), 0)} µs each; the rest from its compile cache) | Cedar preparsePolicySet ${fmt(cedarPrepUs / 1000, 2)} ms once` +
      ` (${fmt(cedarPrepUs / size, 1)} µs/policy)`,
  );
  prepared.push({ org, set, inputs: org.requests, calls });
}
if (disagreements > 0) {
  console.error(`\nABORT: the engines disagree on ${disagreements} request(s); the two policy sets are not equivalent.`);
  process.exit(1);
}

console.log("\n  size | Sigil decisions/s | Cedar decisions/s | Sigil/Cedar | Sigil µs/decision | Cedar µs/decision");
console.log("-------|-------------------|-------------------|-------------|-------------------|------------------");
const ratios: number[] = [];
let sigilUs1000 = 0;
const engines = (p: Prepared) => ({
  sigil: (i: number) => decide(p.set, p.inputs[i]!).outcome === "OUTCOME_ALLOW",
  cedar: (i: number) => cedarDecide(p.calls[i]!).decision === "allow",
});
for (const p of prepared) {
  const { sigil, cedar: ced } = engines(p);
  const n = p.inputs.length;
  throughput(sigil, n, warmup);
  const s = throughput(sigil, n, duration);
  throughput(ced, n, warmup);
  const c = throughput(ced, n, duration);
  ratios.push(s / c);
  if (p.org.size === 1000) sigilUs1000 = 1e6 / s;
  console.log(
    `${fmt(p.org.size).padStart(6)} | ${fmt(s).padStart(17)} | ${fmt(c).padStart(17)} | ${(fmt(s / c, 1) + "×").padStart(11)} |` +
      ` ${fmt(1e6 / s, 2).padStart(17)} | ${fmt(1e6 / c, 2).padStart(17)}`,
  );
}

const big = prepared.find((p) => p.org.size === 1000)!;
const { sigil, cedar: ced } = engines(big);
const [sp50, sp99] = latency(sigil, big.inputs.length, duration);
const [cp50, cp99] = latency(ced, big.inputs.length, duration);
console.log(
  `\nper-decision latency at 1,000 policies: Sigil p50 ${fmt(sp50, 1)} µs, p99 ${fmt(sp99, 1)} µs | Cedar p50 ${fmt(cp50, 1)} µs, p99 ${fmt(cp99, 1)} µs`,
);

// Sigil's engine remembers, per policy set and activity identity (type/kind/resource/action), which
// policies cannot apply; the figures above reuse those plans (the requests cover a few dozen
// identities). The first decision of an identity pays for its plan: time that on fresh sets.
const firstOfType = [...new Map(big.inputs.map((r) => [r.activity.type, r])).values()];
const cold: number[] = [];
for (let round = 0; round < 5; round++) {
  for (const input of firstOfType) {
    const fresh = policySet(big.set.policies);
    const t0 = process.hrtime.bigint();
    if (decide(fresh, input).outcome === "OUTCOME_ALLOW") sink++;
    cold.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
}
console.log(
  `Sigil first decision of an activity type (plan not yet cached), 1,000 policies: mean ${fmt(cold.reduce((a, b) => a + b) / cold.length, 1)} µs,` +
    ` max ${fmt(Math.max(...cold), 1)} µs (${cold.length} decisions over ${firstOfType.length} types)`,
);

const minRatio = Math.min(...ratios);
console.log(`\naim: Sigil ≥ 2× Cedar's decisions/s at every size: ${minRatio >= 2 ? "met" : "MISSED"} (lowest ratio ${fmt(minRatio, 1)}×)`);
console.log(
  `aim: < 1 ms per activity at 1,000 policies: mean ${fmt(sigilUs1000, 1)} µs ${sigilUs1000 < 1000 ? "met" : "MISSED"},` +
    ` p50 ${fmt(sp50, 1)} µs ${sp50 < 1000 ? "met" : "MISSED"}, p99 ${fmt(sp99, 1)} µs ${sp99 < 1000 ? "met" : "MISSED"}`,
);
console.log(
  "\nnotes: Cedar has no count-of-matching-members: `approvers.filter(u, u.tags.contains(T)).count() >= 2` is written as\n" +
    "`context.tagCounts has T && context.tagCounts[T] >= 2`, with the per-tag approver counts computed into the request\n" +
    "(untimed); `approvers.any(user, user.tags.contains(T))` reads a flattened tag set `context.approverTags`, and\n" +
    "`approvers.any(user, user.id == U)` reads `context.approvers`, a Set of User entities. REQUIRES_CONSENSUS counts as\n" +
    "not allowed (Cedar: deny). Cedar's timing includes passing request, context and entities into wasm and the\n" +
    "response back; Sigil's includes building the per-policy outcome array and reason, and reuses its per-activity-type\n" +
    "plans of inapplicable policies (Cedar evaluates all policies on every call).",
);
if (sink < 0) console.log(sink); // keep the results observable

// ------------------------------------------------------------------------------ dry-run replay

if (!process.argv.includes("--skip-dry-run")) {
  const i = process.argv.indexOf("--dry-run-activities");
  const n = i < 0 ? 100_000 : Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n < 1 || n > 1_000_000)
    throw new Error(`--dry-run-activities must be an integer in [1, 1000000], got ${process.argv[i + 1]}`);
  console.log("");
  try {
    printDryRun(await benchDryRun("sqlite", n));
    const pgUrl = process.env.BENCH_DATABASE_URL;
    if (pgUrl) printDryRun(await benchDryRun("postgres", n, pgUrl));
  } finally {
    await cleanupAll();
  }
}
