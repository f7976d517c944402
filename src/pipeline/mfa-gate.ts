// The MFA gate (docs/mfa.md §3). A submission the policies do not deny is held at
// ACTIVITY_STATUS_AUTHENTICATORS_NEEDED while its submitter's first matching MFA policy has
// steps that the submitting credential does not meet; each approve_activity the submitter
// stamps with another credential meets one more step, and once all are met the activity is
// decided again like any vote (settle.ts). Records: the submission's and each stamp's
// evaluation record carry OUTCOME_REQUIRES_AUTHENTICATORS while steps are owed, and the
// mfa_requirements row says which policy and which steps (get_mfa_status). On an activity
// awaiting consensus, an approver's own MFA policy holds that approver's approval the same way
// (docs/mfa.md §3.4): recorded, not counted until the approver's steps are met.
import { ApiError, Grpc, precondition } from "../errors.ts";
import { compileExpression, PassBudget, PolicyCompileError, PolicyRuntimeError } from "../policy/index.ts";
import type { ActivityFacts } from "../policy/facts.ts";
import type { Principal } from "../auth/principal.ts";
import type { ActivityRow, VoteRow } from "../store/activities.ts";
import type { Executor, Tx } from "../store/schema.ts";
import { allMet, proofOf, withProof, type Proof, type Step } from "../activities/mfa/methods.ts";
import { mfaPoliciesOf, proofsOf, requirementsOf, stepsOf, type MfaPolicyRow } from "../store/mfa-policies.ts";
import { stampCredential, type Evaluated } from "./authorize.ts";
import { userFact } from "../governance/governance.ts";

/** The steps a user owes an activity, and those met so far (one entry per step). */
export interface OwedMfa {
  policyId: string;
  steps: Step[];
  satisfied: (Proof | null)[];
}

/**
 * Whether the condition of an MFA policy holds for the activity. A condition that fails to
 * evaluate (or no longer compiles) counts as holding: MFA fails closed (docs/mfa.md §3.1) —
 * running out of the evaluation budget included (docs/policy-language.md §11.1).
 */
function applies(
  row: MfaPolicyRow,
  facts: ActivityFacts,
  principal: Principal,
  tagIds: readonly string[],
  nowMs: number,
  budget: PassBudget,
): boolean {
  try {
    const expr = compileExpression("condition", row.condition);
    if (!expr) return true;
    return budget.run((m) =>
      expr.evaluate(
        { activity: facts, approvers: [userFact(principal.user, tagIds)], credentials: [stampCredential(principal)], nowMs },
        m,
      ),
    );
  } catch (err) {
    if (err instanceof PolicyRuntimeError || err instanceof PolicyCompileError) return true;
    throw err;
  }
}

/**
 * What the acting user — the submitter, or an approver (docs/mfa.md §3.4) — owes an activity:
 * the first of their MFA policies (by `order`) whose condition holds — only one is ever
 * enforced — with the step the request's credential meets counted; undefined when none holds
 * or that credential meets every step. The policies are the acting user's own, in the user's
 * own organization (docs/mfa.md §4).
 */
export async function owedByActor(
  db: Executor,
  principal: Principal,
  /** The acting user's MFA policies, in evaluation order. */
  policies: readonly MfaPolicyRow[],
  facts: ActivityFacts,
  tagIds: readonly string[],
  nowMs: number,
): Promise<OwedMfa | undefined> {
  // The user's MFA conditions share one pass budget (docs/policy-language.md §11.1).
  const budget = new PassBudget();
  const policy = policies.find((p) => applies(p, facts, principal, tagIds, nowMs, budget));
  if (!policy) return undefined;
  const steps = stepsOf(policy.required);
  const none = steps.map(() => null);
  const satisfied = withProof(steps, none, await proofOf(db, principal)) ?? none;
  return allMet(satisfied) ? undefined : { policyId: policy.id, steps, satisfied };
}

/**
 * A held activity must be approvable where it runs: votes are taken only from users of the
 * activity's deciding organization in that organization, and a parent's user never votes in a
 * sub-organization. So an activity a parent's user starts below its own organization that its
 * MFA policy would hold is refused (403, nothing recorded) rather than left waiting for ever
 * (docs/mfa.md §4).
 */
export function refuseUnapprovable(principal: Principal, owed: OwedMfa): void {
  if (principal.organization.id === principal.actor.organizationId) return;
  throw new ApiError(
    Grpc.PERMISSION_DENIED,
    "REQUEST_NOT_AUTHORIZED",
    `request not authorized: MFA policy ${owed.policyId} of user ${principal.actor.userId} holds this activity, ` +
      `but it runs in organization ${principal.organization.id}, where that user cannot approve it`,
  );
}

/** The acting user's own MFA policies, in their own organization, in evaluation order (docs/mfa.md §4). */
export function submitterMfaPolicies(db: Executor, principal: Principal): Promise<MfaPolicyRow[]> {
  return mfaPoliciesOf(db, principal.actor.organizationId, principal.actor.userId);
}

/** The decision held back: the policies' outcomes stay in the record, the final one says why it waits. */
export function awaitingAuthenticators(e: Evaluated, owed: OwedMfa, userId: string): Evaluated {
  const left = owed.steps.filter((_, i) => !owed.satisfied[i]).map((s) => s.any.map((m) => m.type).join(" or "));
  return {
    gov: e.gov,
    decision: {
      outcome: "OUTCOME_REQUIRES_AUTHENTICATORS",
      policies: e.decision.policies,
      reason: `MFA policy ${owed.policyId} of user ${userId} requires ${left.join(", then ")} (policies: ${e.decision.outcome})`,
    },
  };
}

/** Writes (or updates) the requirement row, in the settling transaction. */
export function recordOwed(
  activityId: string,
  organizationId: string,
  userId: string,
  owed: OwedMfa,
  now: number,
  existing: boolean,
): (tx: Tx) => Promise<void> {
  return async (tx) => {
    const satisfied = JSON.stringify(owed.satisfied);
    if (existing) {
      await tx
        .updateTable("mfa_requirements")
        .set({ satisfied, updated_at: now })
        .where("activity_id", "=", activityId)
        .where("user_id", "=", userId)
        .execute();
      return;
    }
    await tx
      .insertInto("mfa_requirements")
      .values({
        activity_id: activityId,
        user_id: userId,
        organization_id: organizationId,
        mfa_policy_id: owed.policyId,
        required: JSON.stringify(owed.steps),
        satisfied,
        created_at: now,
        updated_at: now,
      })
      .execute();
  };
}

/** An approval or rejection of an activity waiting for its submitter's authenticators. */
export type MfaStamp =
  | { unchanged: true }
  | {
      unchanged?: undefined;
      owed: OwedMfa;
      /** Every step is now met: the activity is decided like any vote. */
      complete: boolean;
      write: (tx: Tx) => Promise<void>;
    };

/**
 * A vote on an AUTHENTICATORS_NEEDED activity (docs/mfa.md §3.2): only a user who owes it
 * steps may vote — the submitter, whose organization castVote has already checked, so a
 * parent's credential can never meet a sub-organization user's step. An approval must meet a
 * step still owed with a credential not used for another; a rejection cancels.
 */
export async function mfaStamp(
  tx: Tx,
  target: ActivityRow,
  principal: Principal,
  votes: readonly VoteRow[],
  raw: string,
  rejecting: boolean,
  now: number,
): Promise<MfaStamp> {
  const me = principal.actor.userId;
  const [row] = await requirementsOf(tx, target.id, me);
  if (!row || principal.actor.organizationId !== row.organization_id) {
    throw new ApiError(
      Grpc.PERMISSION_DENIED,
      "REQUEST_NOT_AUTHORIZED",
      `request not authorized: activity ${target.id} awaits the authenticators of its submitter; user ${me} owes it none and cannot vote on it`,
    );
  }
  // A retried stamp is answered with the activity.
  if (votes.some((v) => v.user_id === me && v.message === raw)) return { unchanged: true };
  const owed: OwedMfa = { policyId: row.mfa_policy_id, steps: stepsOf(row.required), satisfied: proofsOf(row.satisfied) };
  if (rejecting) return { owed, complete: false, write: async () => {} };
  const proof = await proofOf(tx, principal);
  const next = withProof(owed.steps, owed.satisfied, proof);
  if (!next) {
    throw precondition(
      `the credential that stamped this approval (${proof.type}) meets none of the steps activity ${target.id} still owes, or already met one; ` +
        `see get_mfa_status`,
    );
  }
  const after = { ...owed, satisfied: next };
  return { owed: after, complete: allMet(next), write: recordOwed(target.id, row.organization_id, me, after, now, true) };
}

/**
 * Whether an approval by this principal would meet the last step the activity's submitter
 * owes: read without the lock, to decide whether the approval prepares the activity's work
 * outside the database (vote.ts) — a single-use authorization code is redeemed only by the
 * stamp that can run it.
 */
export async function meetsLastStep(db: Executor, activityId: string, principal: Principal): Promise<boolean> {
  const [row] = await requirementsOf(db, activityId, principal.actor.userId);
  if (!row) return false;
  const next = withProof(stepsOf(row.required), proofsOf(row.satisfied), await proofOf(db, principal));
  return next !== undefined && allMet(next);
}

/** An approver's own MFA on an activity awaiting consensus (docs/mfa.md §3.4). */
export interface ApproverMfa {
  /** Users whose approvals do not count (yet): steps of their own MFA policy are owed. */
  held: Set<string>;
  /** This request is a further stamp by a held approver: its earlier approval is not a standing vote. */
  stamping: boolean;
  /** The voter's MFA on this activity was already decided (a requirement row exists). */
  decided: boolean;
  write?: (tx: Tx) => Promise<void>;
}

/**
 * Before the standing-vote check: the users held by their own MFA on this activity, and — when
 * the voter is one of them — this vote as a further stamp (refused when it meets no step still
 * owed; a retried one is answered unchanged).
 */
export async function approverStamp(
  tx: Tx,
  target: ActivityRow,
  principal: Principal,
  votes: readonly VoteRow[],
  raw: string,
  rejecting: boolean,
  now: number,
): Promise<ApproverMfa | { unchanged: true }> {
  const me = principal.actor.userId;
  const rows = await requirementsOf(tx, target.id);
  const held = new Set(rows.filter((r) => !allMet(proofsOf(r.satisfied))).map((r) => r.user_id));
  const mine = rows.find((r) => r.user_id === me);
  if (!mine || !held.has(me)) return { held, stamping: false, decided: mine !== undefined };
  if (votes.some((v) => v.user_id === me && v.message === raw)) return { unchanged: true };
  if (rejecting) return { held, stamping: true, decided: true };
  const proof = await proofOf(tx, principal);
  const next = withProof(stepsOf(mine.required), proofsOf(mine.satisfied), proof);
  if (!next) {
    throw precondition(
      `the credential that stamped this approval (${proof.type}) meets none of the steps user ${me} still owes on activity ${target.id}, or already met one; see get_mfa_status`,
    );
  }
  if (allMet(next)) held.delete(me);
  const owed: OwedMfa = { policyId: mine.mfa_policy_id, steps: stepsOf(mine.required), satisfied: next };
  return { held, stamping: true, decided: true, write: recordOwed(target.id, mine.organization_id, me, owed, now, true) };
}

/**
 * A first approval by a voter whose own MFA policy holds the activity: the credential meets
 * what it can; while steps remain the voter joins `held` and its approval does not count.
 */
export async function holdApprover(
  tx: Tx,
  target: ActivityRow,
  principal: Principal,
  facts: ActivityFacts,
  tagIds: readonly string[],
  gate: ApproverMfa,
  now: number,
): Promise<void> {
  const me = principal.actor.userId;
  if (gate.decided) return;
  const policies = await mfaPoliciesOf(tx, principal.actor.organizationId, me);
  const owed = await owedByActor(tx, principal, policies, facts, tagIds, now);
  if (!owed) return;
  gate.held.add(me);
  gate.write = recordOwed(target.id, principal.actor.organizationId, me, owed, now, false);
}
