// explain_activity: the evaluation records of one recorded activity, each policy's outcome and,
// for a policy that did not match, which part of it was false (docs/policy-dry-run.md §3). The
// facts are rebuilt from the recorded intent as submission builds them, the approvers from the
// votes cast up to each record; the policy text is today's (changedSinceEvaluation says when it
// was edited after the record). Readable as get_activity is.
import { Type } from "@sinclair/typebox";
import { setImmediate as turn } from "node:timers/promises";
import { notFound } from "../errors.ts";
import { Id, OrganizationId } from "../schemas/common.ts";
import { findActivity } from "../store/activities.ts";
import { evaluationsOf, OUTCOME_CODES, policiesOf } from "../store/policies.ts";
import { timestampObject } from "../store/util.ts";
import { explainPolicy } from "../policy/explain.ts";
import { evaluationLimits, PassBudget } from "../policy/index.ts";
import type { EvalEnv } from "../policy/facts.ts";
import { decidingPolicyId, ExplanationSchema, type PolicyOutcomeView } from "../policy-dryrun/evaluation.ts";
import { ApproverCache, approvalsAt, decidingOrganizationOf, FactsBuilder, votesByActivity } from "../policy-dryrun/recorded.ts";
import { defineQuery } from "./define.ts";

/** The latest records explained; an activity voted on more often lists only these (docs/policy-dry-run.md §3.3). */
export const MAX_RECORDS = 100;
const OUTCOME_OF_CODE = new Map(Object.entries(OUTCOME_CODES).map(([o, c]) => [c, o]));

const PolicyEntry = Type.Object({
  policyId: Type.String(),
  policyName: Type.String(),
  effect: Type.String(),
  outcome: Type.String(),
  condition: Type.String(),
  consensus: Type.String(),
  time: Type.Optional(Type.String()),
  changedSinceEvaluation: Type.Boolean(),
  deleted: Type.Optional(Type.Boolean()),
  explanation: Type.Optional(ExplanationSchema),
});

interface PolicyEntryView extends PolicyOutcomeView {
  condition: string;
  consensus: string;
  time?: string;
  changedSinceEvaluation: boolean;
  deleted?: boolean;
}

export const explainActivity = defineQuery({
  op: "explain_activity",
  summary:
    "Explain how a recorded activity was decided: each evaluation record's policy outcomes, the deciding policy, and for each policy that did not match the part of it that was false, with its position in the policy text.",
  request: Type.Object({ organizationId: OrganizationId, activityId: Id("activity") }),
  response: Type.Object({
    activityId: Type.String(),
    type: Type.String(),
    status: Type.String(),
    /** False when the policies are a parent organization's that the caller cannot read: outcomes only. */
    policiesShown: Type.Boolean(),
    evaluations: Type.Array(
      Type.Object({
        outcome: Type.String(),
        decidingPolicyId: Type.Union([Type.String(), Type.Null()]),
        createdAt: Type.Object({ seconds: Type.String(), nanos: Type.String() }),
        policies: Type.Array(PolicyEntry),
      }),
    ),
  }),
  async run({ db, organization, actor }, req) {
    const row = await findActivity(db, req.activityId);
    if (!row || row.organization_id !== organization.id) throw notFound(`no activity ${req.activityId} in organization ${organization.id}`);
    const votes = (await votesByActivity(db, [row.id])).get(row.id) ?? [];
    const records = (await evaluationsOf(db, row.id)).slice(-MAX_RECORDS);
    const deciding = decidingOrganizationOf(row, votes);
    // The deciding organization's policy text is shown to its own users and to this organization's
    // (docs/policy-dry-run.md §3.3); a parent's policies deciding a parent user's activity here are not.
    const shown = deciding === organization.id || deciding === actor.organizationId;
    const policies = new Map((shown ? await policiesOf(db, deciding) : []).map((p) => [p.id, p]));
    const rebuilt = shown ? await new FactsBuilder(db, row.organization_id).of(row) : undefined;
    const users = new ApproverCache(db, true);
    await users.load(votes.map((v) => v.user_id));

    const evaluations = [];
    for (const record of records) {
      const ids = record.policy_ids ? (JSON.parse(record.policy_ids) as string[]) : [];
      const outcomes = ids.map((policyId, i) => ({ policyId, outcome: OUTCOME_OF_CODE.get(record.outcomes[i] ?? "") ?? "OUTCOME_ERROR" }));
      // The approvals as they stood at this record: the votes up to and including its own.
      const upTo = votes.findIndex((v) => v.id === record.vote_id);
      const cast = upTo < 0 ? votes.filter((v) => v.created_at <= record.created_at) : votes.slice(0, upTo + 1);
      const { approvers, credentials } = approvalsAt(cast, record.created_at, users);
      const env: EvalEnv | undefined = rebuilt && { activity: rebuilt.facts, approvers, credentials, nowMs: record.created_at };
      // One pass budget per record, as the engine's decision had (docs/policy-language.md §11.1).
      const budget = new PassBudget(evaluationLimits().steps, evaluationLimits().passSteps);
      const entries: PolicyEntryView[] = outcomes.map(({ policyId, outcome }) => {
        const p = policies.get(policyId);
        if (!p)
          return {
            policyId,
            policyName: "",
            effect: "",
            outcome,
            condition: "",
            consensus: "",
            changedSinceEvaluation: false,
            ...(shown ? { deleted: true } : {}),
          };
        const entry: PolicyEntryView = {
          policyId,
          policyName: p.name,
          effect: p.effect,
          outcome,
          condition: p.condition,
          consensus: p.consensus,
          ...(p.time ? { time: p.time } : {}),
          changedSinceEvaluation: p.updated_at > record.created_at,
        };
        const explanation =
          env &&
          budget.run((m) =>
            explainPolicy({ effect: p.effect, condition: p.condition, consensus: p.consensus, time: p.time }, outcome, env, m),
          );
        if (explanation) entry.explanation = explanation;
        return entry;
      });
      evaluations.push({
        outcome: record.outcome,
        decidingPolicyId: decidingPolicyId(record.outcome, outcomes),
        createdAt: timestampObject(record.created_at),
        policies: entries,
      });
      await turn(); // a record's explanations are one pass's work: other requests run between records
    }
    return { activityId: row.id, type: row.type, status: row.status, policiesShown: shown, evaluations };
  },
});
