// Step 6 of the submit pipeline: the policy engine decides an activity over the approvals it
// has — a new submission's single stamp, or every live approval when a vote arrives — and
// the decision becomes an evaluation record and, when denied, the SDK's "not authorized"
// error. settle.ts turns the decision into the activity's status.
import { ApiError, Grpc } from "../errors.ts";
import { decide, type Decision } from "../policy/engine.ts";
import type { ActivityFacts, CredentialFacts, UserFacts } from "../policy/facts.ts";
import type { Actor, CompiledActivity } from "../activities/define.ts";
import { insertEvaluation, insertPolicySet, OUTCOME_CODES, type PolicyEvaluationRow } from "../store/policies.ts";
import { newOrderedId } from "../store/util.ts";
import type { ActivityStatus, Executor } from "../store/schema.ts";
import type { Principal } from "../auth/principal.ts";
import { credentialFacts, type OrgGovernance } from "../governance/governance.ts";
import type { Params } from "./validate.ts";

export const STATUS = {
  COMPLETED: "ACTIVITY_STATUS_COMPLETED",
  FAILED: "ACTIVITY_STATUS_FAILED",
  CONSENSUS_NEEDED: "ACTIVITY_STATUS_CONSENSUS_NEEDED",
  REJECTED: "ACTIVITY_STATUS_REJECTED",
  AUTHENTICATORS_NEEDED: "ACTIVITY_STATUS_AUTHENTICATORS_NEEDED",
} as const satisfies Record<string, ActivityStatus>;

export interface Evaluated {
  decision: Decision;
  /** The policy set it ran over, for the evaluation record. */
  gov: OrgGovernance;
}

export interface Ballot {
  def: CompiledActivity;
  params: Params;
  facts: ActivityFacts;
  /** The deciding organization's policies and root quorum. */
  gov: OrgGovernance;
  /** The users behind the live approvals, and their credentials. */
  approvers: UserFacts[];
  credentials: CredentialFacts[];
  /** This pass is a rejection vote. */
  rejection: boolean;
  /** The submitter, for the definition's implicit permissions (docs/policy-language.md §6.8). */
  initiator: Actor;
  now: number;
}

/** One evaluation pass. */
export function authorize(b: Ballot): Evaluated {
  const decision = decide(b.gov.set, {
    activity: b.facts,
    rootOnly: b.def.rootOnly ?? false,
    quorum: b.gov.quorum,
    approvers: b.approvers,
    credentials: b.credentials,
    rejection: b.rejection,
    implicitlyAllowed: b.def.implicitlyAllowed?.(b.params, b.initiator) ?? false,
    nowMs: b.now,
  });
  return { decision, gov: b.gov };
}

/** The signing credential of a request, as the consensus keyword `credentials` sees it. */
export function stampCredential(p: Principal): CredentialFacts {
  return credentialFacts({
    credential_id: p.credential.id,
    credential_type: p.credential.type,
    user_id: p.actor.userId,
    public_key: p.stamp.publicKey,
    signature: p.stamp.signature,
  });
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
  await recordPolicySet(tx, row, gov);
  await insertEvaluation(tx, row);
}

/** The policy set an evaluation record refers to, unless it is known to be stored already. */
export async function recordPolicySet(tx: Executor, row: PolicyEvaluationRow, gov: OrgGovernance): Promise<void> {
  if (row.policy_set_id !== EMPTY_SET_ID && !gov.persisted) await insertPolicySet(tx, gov.setId, gov.policyIds);
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
