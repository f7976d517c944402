// The policy engine: given an organization's compiled policies, its root quorum and the
// votes so far, decide an activity. Pure: no I/O, no clock (the caller passes `nowMs`).
// § alone in this file: docs/policy-language.md
// The order of the rules is docs/policy-language.md §6.3 (per policy) and §6.4 (aggregate);
// the other § numbers in this file are that note's too.
import {
  compileExpression,
  isBudgetError,
  meterOf,
  PassBudget,
  PolicyRuntimeError,
  type CompiledExpression,
  type CompileOptions,
  type Meter,
} from "./index.ts";
import type { ActivityFacts, CredentialFacts, EvalEnv, UserFacts } from "./facts.ts";

export type Outcome =
  | "OUTCOME_ALLOW"
  | "OUTCOME_DENY_EXPLICIT"
  | "OUTCOME_DENY_IMPLICIT"
  | "OUTCOME_REQUIRES_CONSENSUS"
  | "OUTCOME_REJECTED"
  | "OUTCOME_ERROR"
  | "OUTCOME_TIME_INACTIVE"
  // Never a policy's own outcome: the decision while the submitter's MFA is unmet (docs/mfa.md §3).
  | "OUTCOME_REQUIRES_AUTHENTICATORS";

export type Effect = "EFFECT_ALLOW" | "EFFECT_DENY";

export interface PolicySource {
  id: string;
  effect: Effect;
  condition: string;
  consensus: string;
  time: string;
}

export interface CompiledPolicy {
  readonly id: string;
  readonly effect: Effect;
  readonly condition: CompiledExpression | null;
  readonly consensus: CompiledExpression | null;
  readonly time: CompiledExpression | null;
}

/** Compiles a stored or submitted policy. Throws PolicyCompileError naming field, line and column. */
export function compilePolicy(p: PolicySource, options?: CompileOptions): CompiledPolicy {
  return {
    id: p.id,
    effect: p.effect,
    condition: compileExpression("condition", p.condition, options),
    consensus: compileExpression("consensus", p.consensus, options),
    time: compileExpression("time", p.time, options),
  };
}

export interface PolicySet {
  readonly policies: readonly CompiledPolicy[];
  /** Some consensus reads user tags: only then must evaluators load approvers' tags. */
  readonly readsTags: boolean;
  /** Per activity identity: which policies are known not to apply (see `inapplicable`). */
  readonly plans: Map<string, Uint8Array>;
}

export function policySet(policies: readonly CompiledPolicy[]): PolicySet {
  return { policies, readsTags: policies.some((p) => p.consensus?.userFields.has("tags") ?? false), plans: new Map() };
}

const IDENTITY = new Set(["type", "kind", "resource", "action"]);

/**
 * A policy whose outcome for this kind of activity is OUTCOME_DENY_IMPLICIT whoever
 * approves: always active, a condition that reads only the activity's type, kind,
 * resource and action and is false for them, and nothing that can raise a runtime error
 * (so skipping it cannot hide an OUTCOME_ERROR — the no-short-circuit rule still holds).
 * Most policies of a realistic set do not apply to a given activity; this is what lets a
 * pass over 1,000 policies cost little more than the few that do.
 */
function inapplicable(p: CompiledPolicy, identity: EvalEnv, budget: PassBudget): boolean {
  const c = p.condition;
  if (p.time || !c || c.mayFail || p.consensus?.mayFail) return false;
  for (const f of c.activityFields) if (!IDENTITY.has(f)) return false;
  for (const r of c.roots) if (r !== "activity") return false;
  // Out of budget is an error, so not known inapplicable: the policy is judged in full.
  return budget.run((m) => run(c, identity, m)) === false;
}

const MAX_PLANS = 1_000;

function planFor(set: PolicySet, activity: ActivityFacts): Uint8Array {
  const key = `${activity.type}\u0000${activity.kind}\u0000${activity.resource}\u0000${activity.action}`;
  let plan = set.plans.get(key);
  if (!plan) {
    const identity: EvalEnv = { activity: { ...activity, params: {} } };
    // A plan is made once per set and activity identity, under a pass budget of its own.
    const budget = new PassBudget();
    plan = Uint8Array.from(set.policies, (p) => (inapplicable(p, identity, budget) ? 1 : 0));
    if (set.plans.size >= MAX_PLANS) set.plans.clear();
    set.plans.set(key, plan);
  }
  return plan;
}

export interface RootQuorum {
  readonly userIds: ReadonlySet<string>;
  readonly threshold: number;
}

export interface DecisionInput {
  activity: ActivityFacts;
  /** Governed by the root quorum alone (UPDATE_ROOT_QUORUM, ...): policies are not consulted. */
  rootOnly: boolean;
  quorum: RootQuorum;
  /** Distinct users with a live APPROVED vote, in order of first approval. */
  approvers: readonly UserFacts[];
  /** The credentials behind those approvals, in the same order. */
  credentials: readonly CredentialFacts[];
  /** The vote being evaluated is an accepted rejection. */
  rejection: boolean;
  /** An implicit permission (§6.8, e.g. a user managing its own credentials) applies. */
  implicitlyAllowed: boolean;
  nowMs: number;
}

export interface PolicyOutcome {
  policyId: string;
  outcome: Outcome;
  /** The runtime error behind OUTCOME_ERROR, for logs and explanations. */
  error?: string;
  /** The error is an exhausted evaluation budget: the activity is refused (docs/policy-language.md §11.2). */
  overBudget?: true;
}

export interface Decision {
  outcome: Outcome;
  policies: PolicyOutcome[];
  /** Why, in a sentence a caller can act on. */
  reason: string;
}

type Verdict = boolean | PolicyRuntimeError;

function run(expr: CompiledExpression | null, env: EvalEnv, meter: Meter): Verdict {
  if (!expr) return true; // an absent field does not restrict (§6.2)
  try {
    return expr.evaluate(env, meter);
  } catch (err) {
    if (err instanceof PolicyRuntimeError) return err;
    throw err; // a bug, not a policy outcome
  }
}

function failed(id: string, field: string, err: PolicyRuntimeError): PolicyOutcome {
  const o: PolicyOutcome = { policyId: id, outcome: "OUTCOME_ERROR", error: `${field}: ${err.message}` };
  if (isBudgetError(err)) o.overBudget = true;
  return o;
}

/**
 * One policy's outcome (§6.3). `condition` and `consensus` are both evaluated: no short-circuit.
 * Its three fields share one meter (one evaluation, §11.1).
 */
export function evaluatePolicy(p: CompiledPolicy, env: EvalEnv, meter: Meter = meterOf()): PolicyOutcome {
  const time = run(p.time, env, meter);
  if (time instanceof PolicyRuntimeError) return failed(p.id, "time", time);
  if (!time) return { policyId: p.id, outcome: "OUTCOME_TIME_INACTIVE" };
  const condition = run(p.condition, env, meter);
  const consensus = run(p.consensus, env, meter);
  if (condition instanceof PolicyRuntimeError) return failed(p.id, "condition", condition);
  if (consensus instanceof PolicyRuntimeError) return failed(p.id, "consensus", consensus);
  if (!condition) return { policyId: p.id, outcome: "OUTCOME_DENY_IMPLICIT" };
  if (p.effect === "EFFECT_DENY") return { policyId: p.id, outcome: consensus ? "OUTCOME_DENY_EXPLICIT" : "OUTCOME_DENY_IMPLICIT" };
  return { policyId: p.id, outcome: consensus ? "OUTCOME_ALLOW" : "OUTCOME_REQUIRES_CONSENSUS" };
}

/** Per-policy outcomes from the strictest down: how one policy's passes over several wallets combine. */
const STRICTNESS: readonly Outcome[] = [
  "OUTCOME_DENY_EXPLICIT",
  "OUTCOME_ERROR",
  "OUTCOME_DENY_IMPLICIT",
  "OUTCOME_TIME_INACTIVE",
  "OUTCOME_REQUIRES_CONSENSUS",
  "OUTCOME_ALLOW",
];

/**
 * A policy's outcome for an activity. When the activity names several wallets and the
 * condition reads `wallet`, the policy is judged once per wallet (`wallet` bound to each) and
 * the strictest pass counts: a DENY for any one wallet denies, an ALLOW must hold for every
 * one. So deleting a protected wallet together with others is governed like deleting it alone.
 */
function judge(p: CompiledPolicy, env: EvalEnv, budget: PassBudget): PolicyOutcome {
  // Once the pass is spent, the rest are errors without being started (§11.1).
  const spent = budget.spent();
  if (spent) return { policyId: p.id, outcome: "OUTCOME_ERROR", error: spent, overBudget: true };
  const named = env.activity?.wallets;
  if (!named || named.length < 2 || !p.condition?.roots.has("wallet")) return budget.run((m) => evaluatePolicy(p, env, m));
  let worst: PolicyOutcome | undefined;
  for (const wallet of named) {
    const o = budget.run((m) => evaluatePolicy(p, { ...env, wallet }, m));
    // A pass cut short decides the activity (§11.2), whatever the other passes say.
    if (o.overBudget) return o;
    if (!worst || STRICTNESS.indexOf(o.outcome) < STRICTNESS.indexOf(worst.outcome)) worst = o;
  }
  return worst!;
}

function rootApprovals(input: DecisionInput): number {
  let n = 0;
  for (const a of input.approvers) if (input.quorum.userIds.has(a.id)) n++;
  return n;
}

/** The aggregate decision of one evaluation pass (§6.4). */
export function decide(set: PolicySet, input: DecisionInput): Decision {
  const roots = rootApprovals(input);
  const rootMet = roots >= input.quorum.threshold;
  const rootPending = roots >= 1 && !rootMet;
  const quorumText = `${roots} of ${input.quorum.threshold} root quorum approvals`;

  if (input.rejection) return { outcome: "OUTCOME_REJECTED", policies: [], reason: "the activity was rejected" };
  if (input.rootOnly) {
    if (rootMet) return { outcome: "OUTCOME_ALLOW", policies: [], reason: `root quorum met (${quorumText})` };
    if (rootPending) {
      return { outcome: "OUTCOME_REQUIRES_CONSENSUS", policies: [], reason: `${input.activity.type} needs the root quorum: ${quorumText}` };
    }
    return {
      outcome: "OUTCOME_DENY_IMPLICIT",
      policies: [],
      reason: `${input.activity.type} can only be approved by the root quorum, and no approver is in it`,
    };
  }

  // Every policy is evaluated even when the root quorum bypasses them: the record shows
  // what each would have decided.
  const env: EvalEnv = { activity: input.activity, approvers: input.approvers, credentials: input.credentials, nowMs: input.nowMs };
  const plan = planFor(set, input.activity);
  // One pass budget for every policy (§11.1): a set of policies each under its own bound cannot add up.
  const budget = new PassBudget();
  const policies = set.policies.map((p, i) =>
    plan[i] ? { policyId: p.id, outcome: "OUTCOME_DENY_IMPLICIT" as const } : judge(p, env, budget),
  );
  const has = (o: Outcome) => policies.find((p) => p.outcome === o);

  if (rootMet) return { outcome: "OUTCOME_ALLOW", policies, reason: `root quorum met (${quorumText}); policies bypassed` };
  // A policy whose evaluation was cut short might have denied: the activity is refused (§11.2),
  // unless the root quorum can still approve it.
  const cut = policies.find((p) => p.overBudget);
  if (cut) {
    const why = `policy ${cut.policyId} could not be evaluated (${cut.error})`;
    if (rootPending)
      return { outcome: "OUTCOME_REQUIRES_CONSENSUS", policies, reason: `${why}; the root quorum can still approve it (${quorumText})` };
    return { outcome: "OUTCOME_DENY_IMPLICIT", policies, reason: `${why}; an activity whose policies cannot all be evaluated is refused` };
  }
  const deny = has("OUTCOME_DENY_EXPLICIT");
  if (deny) {
    if (rootPending) {
      return {
        outcome: "OUTCOME_REQUIRES_CONSENSUS",
        policies,
        reason: `policy ${deny.policyId} denies it, but the root quorum can still approve it (${quorumText})`,
      };
    }
    return { outcome: "OUTCOME_DENY_EXPLICIT", policies, reason: `policy ${deny.policyId} explicitly denies it` };
  }
  const allow = has("OUTCOME_ALLOW");
  if (allow) return { outcome: "OUTCOME_ALLOW", policies, reason: `allowed by policy ${allow.policyId}` };
  const pending = has("OUTCOME_REQUIRES_CONSENSUS");
  if (pending) {
    return { outcome: "OUTCOME_REQUIRES_CONSENSUS", policies, reason: `policy ${pending.policyId} needs more approvals` };
  }
  if (input.implicitlyAllowed)
    return { outcome: "OUTCOME_ALLOW", policies, reason: "implicitly allowed: a user may manage its own credentials" };
  if (rootPending) return { outcome: "OUTCOME_REQUIRES_CONSENSUS", policies, reason: `needs the root quorum: ${quorumText}` };
  const errors = policies.filter((p) => p.outcome === "OUTCOME_ERROR").length;
  return {
    outcome: "OUTCOME_DENY_IMPLICIT",
    policies,
    reason:
      "No policies evaluated to outcome: Allow" + (errors ? ` (${errors} polic${errors === 1 ? "y" : "ies"} failed to evaluate)` : ""),
  };
}

/**
 * May this user vote on the activity (§6.5)? Root quorum members always may, the initiator
 * may unless the type is root-quorum-only; otherwise the user must be "included in consensus"
 * of an applicable policy (never for root-quorum-only types): named by
 * id, tag or email literal in its consensus, or a consensus that does not single users out
 * by identity at all (e.g. `approvers.count() >= 2`, or a credential-type requirement).
 */
export function mayVote(
  set: PolicySet,
  voter: UserFacts,
  ctx: { quorum: RootQuorum; initiatorId: string; activity: ActivityFacts; rootOnly: boolean; nowMs: number },
): boolean {
  if (ctx.quorum.userIds.has(voter.id)) return true;
  if (ctx.rootOnly) return false;
  if (voter.id === ctx.initiatorId) return true;
  const env: EvalEnv = { activity: ctx.activity, nowMs: ctx.nowMs };
  const budget = new PassBudget();
  return set.policies.some((p) => {
    if (!p.consensus) return false;
    // Out of budget is not applicable: eligibility only ever narrows on an error.
    if (budget.run((m) => run(p.time, env, m) !== true || run(p.condition, env, m) !== true)) return false;
    const c = p.consensus;
    const names = c.stringLiterals;
    if (names.has(voter.id) || (voter.email !== "" && names.has(voter.email)) || voter.tags.some((t) => names.has(t))) return true;
    const identifies = c.userFields.has("id") || c.userFields.has("tags") || c.userFields.has("email") || c.userFields.has("alias");
    return !identifies && (c.roots.has("approvers") || c.roots.has("credentials"));
  });
}
