// Step 6 of the pipeline: the policy engine decides the submission, and the decision is
// turned into an activity status, an evaluation record and, when denied, the SDK's
// "not authorized" error.
import { ApiError, Grpc } from "../errors.ts";
import { decide, type Decision } from "../policy/engine.ts";
import type { CompiledActivity } from "../activities/define.ts";
import { insertEvaluation, insertPolicySet, OUTCOME_CODES, type PolicyEvaluationRow } from "../store/policies.ts";
import { newOrderedId } from "../store/util.ts";
import type { Db, Executor } from "../store/schema.ts";
import { activityFacts, credentialFacts, governance, userFact, type OrgGovernance } from "./governance.ts";
import type { Authenticated } from "./authenticate.ts";

export const STATUS = {
  COMPLETED: "ACTIVITY_STATUS_COMPLETED",
  FAILED: "ACTIVITY_STATUS_FAILED",
  CONSENSUS_NEEDED: "ACTIVITY_STATUS_CONSENSUS_NEEDED",
  REJECTED: "ACTIVITY_STATUS_REJECTED",
} as const;

export interface Evaluated {
  decision: Decision;
  /** The policy set it ran over, for the evaluation record. */
  gov: OrgGovernance;
}

/** Evaluates a new submission: its submitter's stamp is the first approval. */
export async function authorizeSubmission(
  db: Db,
  def: CompiledActivity,
  params: unknown,
  auth: Authenticated,
  nowMs: number,
): Promise<Evaluated> {
  const gov = await governance(db, auth.actor.organizationId, auth.policyVersion);
  const approvers = [userFact(auth.user, auth.tagIds)];
  const credential = credentialFacts({
    credential_id: auth.credential.id,
    credential_type: auth.credential.type,
    user_id: auth.actor.userId,
    public_key: auth.stamp.publicKey,
  });
  const decision = decide(gov.set, {
    activity: activityFacts(def, params),
    rootOnly: def.rootOnly ?? false,
    quorum: gov.quorum,
    approvers,
    credentials: [credential],
    rejection: false,
    implicitlyAllowed: def.implicitlyAllowed?.(params as never, auth.actor) ?? false,
    nowMs,
  });
  return { decision, gov };
}

export function isDenied(d: Decision): boolean {
  return d.outcome === "OUTCOME_DENY_EXPLICIT" || d.outcome === "OUTCOME_DENY_IMPLICIT";
}

/** One record per evaluation pass: each policy's outcome (compactly, by policy set) and the final one. */
export function evaluationRow(activityId: string, organizationId: string, voteId: string, e: Evaluated, now: number): PolicyEvaluationRow {
  // A root-only decision consults no policy: it is recorded over the empty set.
  const policies = e.decision.policies;
  return {
    id: newOrderedId(now),
    activity_id: activityId,
    organization_id: organizationId,
    vote_id: voteId,
    policy_set_id: policies.length ? e.gov.setId : EMPTY_SET_ID,
    outcomes: policies.map((p) => OUTCOME_CODES[p.outcome]).join(""),
    outcome: e.decision.outcome,
    created_at: now,
  };
}

const EMPTY_SET_ID = "empty";

/** Writes the record, and its policy set the first time this process records over it. */
export async function recordEvaluation(tx: Executor, row: PolicyEvaluationRow, gov: OrgGovernance): Promise<void> {
  if (row.policy_set_id !== EMPTY_SET_ID && !gov.persisted) await insertPolicySet(tx, gov.setId, gov.policyIds);
  await insertEvaluation(tx, row);
}

/** HTTP 403, code 7, with the PolicyEnginePermissionError detail naming the activity. */
export function deniedError(reason: string, activityId: string, policyEvaluations: unknown[] = []): ApiError {
  return new ApiError(Grpc.PERMISSION_DENIED, "REQUEST_NOT_AUTHORIZED", `request not authorized: ${reason}`, [
    {
      "@type": "type.googleapis.com/errors.v1.PolicyEnginePermissionError",
      message: reason,
      activityId,
      policyEvaluations,
    },
  ]);
}

export function deniedFailure(d: Decision, activityId: string): ApiError {
  return deniedError(
    d.reason,
    activityId,
    d.policies.map((p) => ({ policyId: p.policyId, outcome: p.outcome })),
  );
}
