// One evaluation as dry_run_policies and explain_activity answer it (docs/policy-dry-run.md §5):
// the final outcome, the policy that decided it, and each policy's outcome with — for a policy
// that did not match — why, from the explainer (policy/explain.ts).
import { Type } from "@sinclair/typebox";
import type { Decision, Outcome } from "../policy/engine.ts";
import { explainPolicy, type Explanation } from "../policy/explain.ts";
import { evaluationLimits, PassBudget } from "../policy/index.ts";
import type { EvalEnv } from "../policy/facts.ts";

export const ExplanationSchema = Type.Object({
  field: Type.Union([Type.Literal("condition"), Type.Literal("consensus"), Type.Literal("time")]),
  words: Type.String(),
  spans: Type.Array(Type.Object({ start: Type.Number(), end: Type.Number() })),
});

export const PolicyOutcomeSchema = Type.Object({
  policyId: Type.String(),
  policyName: Type.String(),
  effect: Type.String(),
  outcome: Type.String(),
  explanation: Type.Optional(ExplanationSchema),
});

export const EvaluationSchema = Type.Object({
  outcome: Type.String(),
  decidingPolicyId: Type.Union([Type.String(), Type.Null()]),
  policies: Type.Array(PolicyOutcomeSchema),
});

/** A policy's text and labels, today's or proposed. */
export interface PolicyMeta {
  policyId: string;
  policyName: string;
  effect: string;
  condition: string;
  consensus: string;
  time: string;
}

export interface PolicyOutcomeView {
  policyId: string;
  policyName: string;
  effect: string;
  outcome: string;
  explanation?: Explanation;
}

export interface EvaluationView {
  outcome: string;
  decidingPolicyId: string | null;
  policies: PolicyOutcomeView[];
}

/**
 * The policy the final outcome follows from, by the aggregate rules (engine.ts decide, docs/policy-language.md
 * §6.4): a policy cut short by the budget, else the first explicit deny, else the first allow, else the first
 * policy needing consensus. Null when no policy decided (root quorum, implicit permission, nothing matched).
 */
export function decidingPolicyId(
  outcome: string,
  policies: readonly { policyId: string; outcome: string; overBudget?: true }[],
): string | null {
  const first = (o: Outcome) => policies.find((p) => p.outcome === o)?.policyId ?? null;
  const cut = policies.find((p) => p.overBudget)?.policyId;
  switch (outcome) {
    case "OUTCOME_DENY_EXPLICIT":
      return first("OUTCOME_DENY_EXPLICIT");
    case "OUTCOME_ALLOW":
      return first("OUTCOME_ALLOW");
    case "OUTCOME_REQUIRES_CONSENSUS":
      return cut ?? first("OUTCOME_DENY_EXPLICIT") ?? first("OUTCOME_REQUIRES_CONSENSUS");
    case "OUTCOME_DENY_IMPLICIT":
      return cut ?? null;
    default:
      return null;
  }
}

/**
 * A decision in the answer's shape. `explain(policyId, outcome)` says which policies get an
 * explanation; all of them share one pass budget (SIGIL_POLICY_MAX_PASS_STEPS), as one decision does.
 */
export function evaluationView(
  decision: Decision,
  meta: ReadonlyMap<string, PolicyMeta>,
  env: EvalEnv,
  explain: (policyId: string, outcome: string) => boolean,
): EvaluationView {
  const budget = new PassBudget(evaluationLimits().steps, evaluationLimits().passSteps);
  return {
    outcome: decision.outcome,
    decidingPolicyId: decidingPolicyId(decision.outcome, decision.policies),
    policies: decision.policies.map((p) => {
      const m = meta.get(p.policyId);
      const view: PolicyOutcomeView = {
        policyId: p.policyId,
        policyName: m?.policyName ?? "",
        effect: m?.effect ?? "",
        outcome: p.outcome,
      };
      if (m && explain(p.policyId, p.outcome)) {
        const e = budget.run((meter) => explainPolicy(m, p.outcome, env, meter));
        if (e) view.explanation = e;
      }
      return view;
    }),
  };
}
