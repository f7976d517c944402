// What the evaluation bounds of docs/policy-language.md §11 buy: the CPU time of one decision
// pass over the worst policy sets a tenant can store, without the budget (as before it existed)
// and with the default one.
//
//   node --import tsx bench/policy-budget.ts [--runs N (21)] [--skip-defect]
//
// Kinds, each an organization's full 100 policies that all pass create_policy's static bound
// (SIGIL_POLICY_MAX_ITERATIONS), built to make the most work per policy:
//   nested    two nested lambdas over literal lists at the bound, a predicate as long as the
//             8,192-character limit allows
//   params    a lambda at the bound whose predicate scans `activity.params.user_ids` (100 ids)
//   string    a lambda whose predicate indexes a long string of surrogate pairs
//   cron      a `time` field of as many CronSpans as fit
//   wallets   `delete_wallets` naming 100 wallets, every policy reading `wallet` (judged per wallet)
// and "defect": the reported policy (four levels over 100 items), one policy, unbounded vs bounded.
// Printed: the median and slowest of N bounded passes (ms), and unbounded (every budget 10^15 steps: the
// engine as it was, plus the counting) one policy's evaluation times 100.
import { compileSubmitted, setEvaluationLimits, type ActivityFacts } from "../src/policy/index.ts";
import { DEFAULT_LIMITS } from "../src/policy/budget.ts";
import { compilePolicy, decide, policySet, type CompiledPolicy, type DecisionInput } from "../src/policy/engine.ts";

const runs = Number(process.argv[process.argv.indexOf("--runs") + 1] ?? 21) || 21;
const skipDefect = process.argv.includes("--skip-defect");
const UNBOUNDED = { steps: 1e15, passSteps: 1e15, iterations: 1e15 };

const list = (n: number, from = 0) => `[${Array.from({ length: n }, (_, i) => i + from).join(",")}]`;
const MAX_CHARS = 8192;

/** Fills `make(k)` with the largest k whose source fits 8,192 characters and the static bound. */
function largest(make: (k: number) => string, field: "condition" | "time" = "condition"): string {
  let best = "";
  for (let k = 1; k < 5000; k++) {
    const s = make(k);
    if (s.length > MAX_CHARS) break;
    try {
      compileSubmitted(field, s);
      best = s;
    } catch {
      break;
    }
  }
  if (!best) throw new Error("no legal policy of this kind");
  return best;
}

const N = DEFAULT_LIMITS.iterations;
const outer = 100;
const inner = Math.floor((N - outer) / outer); // outer + outer*inner <= N
const KINDS: Record<string, { condition?: string; time?: string; activity: ActivityFacts }> = {
  nested: {
    condition: largest(
      (k) =>
        `${list(outer)}.all(a, ${list(inner)}.all(b, ${Array.from({ length: k }, (_, i) => `(a == ${i} || b == ${i})`).join(" || ")}))`,
    ),
    activity: { type: "ACTIVITY_TYPE_CREATE_USERS_V4", kind: "CREATE_USERS", resource: "USER", action: "CREATE", params: {} },
  },
  params: {
    condition: largest((k) => `${list(k)}.all(a, 'u${0}' in activity.params.user_ids)`),
    activity: {
      type: "ACTIVITY_TYPE_DELETE_USERS",
      kind: "DELETE_USERS",
      resource: "USER",
      action: "DELETE",
      params: { user_ids: Array.from({ length: 100 }, (_, i) => `u${i}`) },
    },
  },
  string: {
    condition: largest((k) => `${list(k)}.all(a, '${"😀".repeat(1800)}'[1799] == 'x')`),
    activity: { type: "ACTIVITY_TYPE_CREATE_USERS_V4", kind: "CREATE_USERS", resource: "USER", action: "CREATE", params: {} },
  },
  cron: {
    time: largest((k) => Array.from({ length: k }, () => "CronSpan('0 0 29 2 *', '7d', 'Pacific/Chatham')").join(" || "), "time"),
    activity: { type: "ACTIVITY_TYPE_CREATE_USERS_V4", kind: "CREATE_USERS", resource: "USER", action: "CREATE", params: {} },
  },
  wallets: {
    condition: largest((k) => `${list(k)}.all(a, wallet.label != 'w' || a == 0)`),
    activity: {
      type: "ACTIVITY_TYPE_DELETE_WALLETS",
      kind: "DELETE_WALLETS",
      resource: "WALLET",
      action: "DELETE",
      params: {},
      wallets: Array.from({ length: 100 }, (_, i) => ({ id: `w${i}`, imported: false, exported: false, label: `w${i}` })),
    },
  },
};

function input(activity: ActivityFacts): DecisionInput {
  const u = { id: "u", tags: [], email: "", alias: "" };
  return {
    activity,
    rootOnly: false,
    quorum: { userIds: new Set(["root"]), threshold: 1 },
    approvers: [u],
    credentials: [{ id: "k", user_id: "u", type: "CREDENTIAL_TYPE_API_KEY_P256", credential_id: "", public_key: "02" }],
    rejection: false,
    implicitlyAllowed: false,
    nowMs: Date.parse("2026-03-02T15:00:00Z"),
  };
}

/** Median and slowest of `runs` passes, in ms (the machine is shared: the median is the figure), and the outcome counts of the last. */
function time(policies: CompiledPolicy[], activity: ActivityFacts): { ms: number; max: number; errors: number; outcome: string } {
  const set = policySet(policies);
  const samples: number[] = [];
  let last = decide(set, input(activity)); // plan cache warm
  for (let r = 0; r < runs; r++) {
    const t0 = process.hrtime.bigint();
    last = decide(set, input(activity));
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  samples.sort((a, b) => a - b);
  return {
    ms: samples[samples.length >> 1]!,
    max: samples.at(-1)!,
    errors: last.policies.filter((p) => p.outcome === "OUTCOME_ERROR").length,
    outcome: last.outcome,
  };
}

const fmt = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(2)).padStart(9);
console.log(
  `node ${process.version}; defaults: SIGIL_POLICY_MAX_STEPS=${DEFAULT_LIMITS.steps}, SIGIL_POLICY_MAX_PASS_STEPS=${DEFAULT_LIMITS.passSteps}, SIGIL_POLICY_MAX_ITERATIONS=${DEFAULT_LIMITS.iterations}; bounded: median (slowest) of ${runs} passes`,
);
console.log(
  `${"kind".padEnd(9)} ${"chars".padStart(6)} ${"unbounded ms".padStart(13)} ${"bounded ms".padStart(11)} ${"(slowest)".padStart(10)}  bounded outcome (100 policies)`,
);
for (const [name, kind] of Object.entries(KINDS)) {
  const policies = Array.from({ length: 100 }, (_, i) =>
    compilePolicy({ id: `${name}-${i}`, effect: "EFFECT_ALLOW", condition: kind.condition ?? "", consensus: "", time: kind.time ?? "" }),
  );
  // Unbounded, one policy once (a whole set can take minutes): the pass is 100 times that.
  setEvaluationLimits(UNBOUNDED);
  const t0 = process.hrtime.bigint();
  decide(policySet(policies.slice(0, 1)), input(kind.activity));
  const before = { ms: (100 * Number(process.hrtime.bigint() - t0)) / 1e6 };
  setEvaluationLimits(DEFAULT_LIMITS);
  const after = time(policies, kind.activity);
  const chars = (kind.condition ?? kind.time ?? "").length;
  console.log(
    `${name.padEnd(9)} ${String(chars).padStart(6)} ${fmt(before.ms)}    ${fmt(after.ms)} ${fmt(after.max)}    ${after.outcome}, ${after.errors} of 100 policies OUTCOME_ERROR`,
  );
}

if (!skipDefect) {
  // The reported policy is refused by create_policy now; stored before, it still runs, bounded.
  let four = "true";
  for (let d = 3; d >= 0; d--) four = `${list(100)}.all(v${d}, ${four})`;
  const policies = [compilePolicy({ id: "defect", effect: "EFFECT_ALLOW", condition: four, consensus: "", time: "" })];
  const activity = KINDS.nested!.activity;
  setEvaluationLimits(UNBOUNDED);
  const t0 = process.hrtime.bigint();
  decide(policySet(policies), input(activity));
  const before = Number(process.hrtime.bigint() - t0) / 1e6;
  setEvaluationLimits(DEFAULT_LIMITS);
  const after = time(policies, activity);
  console.log(
    `${"defect".padEnd(9)} ${String(four.length).padStart(6)} ${fmt(before)}    ${fmt(after.ms)} ${fmt(after.max)}    ${after.outcome} (one pass unbounded)`,
  );
}
