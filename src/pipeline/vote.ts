// Votes on an activity awaiting consensus (approve_activity, reject_activity, or an
// identical resubmission by another user). In one transaction: lock the target, check the
// voter, record the vote, re-evaluate with every live approval, record the evaluation, and
// — when the decision is final — execute or close the target. The lock (PostgreSQL) or
// the single writer (SQLite) makes concurrent approvals serial, so the target executes
// exactly once.
import { sql } from "kysely";
import { ApiError, Grpc, invalid, notFound, precondition } from "../errors.ts";
import { decide } from "../policy/engine.ts";
import { hasStandingVote, liveApprovals } from "../policy/approval-window.ts";
import type { Actor, VoteSelection } from "../activities/define.ts";
import { insertVote, votesOf, type ActivityRow, type VoteRow } from "../store/activities.ts";
import { newOrderedId } from "../store/util.ts";
import type { Tx } from "../store/schema.ts";
import type { UserRow } from "../store/users.ts";
import { credentialFacts, decidingOrganization, userFacts, voterStanding, type OrgGovernance } from "./governance.ts";
import { deniedFailure, evaluationRow, isDenied, recordEvaluation, STATUS } from "./authorize.ts";
import type { Authenticated } from "./authenticate.ts";
import { respond, type PipelineDeps } from "./submit.ts";
import { activityView, type ActivityView } from "./activity-view.ts";
import { hasListeners, recordActivityEvent } from "../webhooks/outbox.ts";
import { outcomeProof } from "./app-proofs.ts";

export interface VoteRequest {
  selection: VoteSelection;
  fingerprint: string;
  auth: Authenticated;
  raw: Buffer;
  now: number;
  /** The vote is an identical resubmission of the target itself. */
  resubmission?: boolean;
}

export function voteRow(activityId: string, selection: VoteSelection, auth: Authenticated, raw: Buffer, now: number): VoteRow {
  return {
    id: newOrderedId(now),
    activity_id: activityId,
    user_id: auth.actor.userId,
    user_organization_id: auth.actor.organizationId,
    selection,
    message: raw.toString("utf8"),
    public_key: auth.stamp.publicKey,
    signature: auth.stamp.signature,
    scheme: auth.stamp.scheme,
    credential_id: auth.credential.id,
    credential_type: auth.credential.type,
    created_at: now,
  };
}

async function lockTarget(tx: Tx, fingerprint: string, lockRows: boolean): Promise<ActivityRow | undefined> {
  const q = tx.selectFrom("activities").selectAll().where("fingerprint", "=", fingerprint);
  return (lockRows ? q.forUpdate() : q).executeTakeFirst();
}

/** The submitter as the executing actor, read back for an activity that runs on approval. */
async function initiatorOf(tx: Tx, target: ActivityRow, organizationId: string): Promise<Actor> {
  const row = await tx
    .selectFrom("users")
    .innerJoin("organizations", "organizations.id", "users.organization_id")
    .select(["users.name as user_name", "organizations.name as organization_name"])
    .where("users.id", "=", target.submitted_by)
    .executeTakeFirst();
  if (!row) throw precondition(`the submitter of activity ${target.id} no longer exists; it cannot be executed`);
  return { userId: target.submitted_by, userName: row.user_name, organizationId, organizationName: row.organization_name };
}

async function withSavepoint<T>(tx: Tx, work: () => Promise<T>): Promise<T> {
  await sql`savepoint execution`.execute(tx);
  try {
    const value = await work();
    await sql`release savepoint execution`.execute(tx);
    return value;
  } catch (err) {
    await sql`rollback to savepoint execution`.execute(tx);
    await sql`release savepoint execution`.execute(tx);
    throw err;
  }
}

export async function castVote(deps: PipelineDeps, req: VoteRequest): Promise<{ activity: ActivityView }> {
  const { auth } = req;
  const me = auth.actor.userId;
  const committedSets: OrgGovernance[] = [];
  let emitted = false;
  const row = await deps.transact(async (tx) => {
    const target = await lockTarget(tx, req.fingerprint, deps.engine === "postgres");
    if (!target || target.organization_id !== auth.organization.id) {
      throw notFound(`No activity found with fingerprint ${req.fingerprint} in organization ${auth.organization.id}`);
    }
    const votes = await votesOf(tx, [target.id]);
    // Votes on one activity are serial (the lock); time them after the lock, strictly after
    // the previous vote, so votes and evaluation records list in the order they happened.
    const now = Math.max(Date.now(), req.now, ...votes.map((v) => v.created_at + 1));
    // The organization whose policies decided the activity decides its votes too.
    const orgId = decidingOrganization(target, votes);
    if (auth.actor.organizationId !== orgId) {
      throw new ApiError(
        Grpc.INVALID_ARGUMENT,
        "ORGANIZATION_MISMATCH",
        `organization mismatch: request is targeting organization (${orgId}), but voters are in organization (${auth.actor.organizationId})`,
      );
    }
    if (hasStandingVote(votes, me, now)) {
      const rejected = votes.some((v) => v.user_id === me && v.selection === "VOTE_SELECTION_REJECTED");
      // The initiator may still reject: for them rejecting cancels the activity (§6.5 b).
      const cancelling = req.selection === "VOTE_SELECTION_REJECTED" && me === target.submitted_by && !rejected;
      if (!cancelling) {
        // A retried vote (or resubmission) is answered with the activity, not refused.
        const raw = req.raw.toString("utf8");
        if (req.resubmission || votes.some((v) => v.user_id === me && v.message === raw)) return target;
        throw invalid(`user ${me} has already voted on activity ${target.id}`);
      }
    }
    if (target.status !== STATUS.CONSENSUS_NEEDED) {
      if (req.resubmission) return target;
      throw precondition(`activity ${target.id} is ${target.status}; votes are accepted only while it awaits consensus`);
    }
    const standing = await voterStanding(tx, target, orgId, auth.user, now);
    if (!standing) throw precondition(`activity type ${target.type} is no longer supported; it cannot be voted on`);
    const { def, params, facts, gov, voter } = standing;
    if (!standing.eligible) {
      throw new ApiError(
        Grpc.PERMISSION_DENIED,
        "REQUEST_NOT_AUTHORIZED",
        `request not authorized: user ${me} is not in the root quorum and no applicable policy's consensus includes them, so they cannot vote on activity ${target.id}`,
      );
    }

    const vote = voteRow(target.id, req.selection, auth, req.raw, now);
    await insertVote(tx, vote);
    const approvals = liveApprovals(req.selection === "VOTE_SELECTION_APPROVED" ? [...votes, vote] : votes, now);
    const others = await approverRows(tx, approvals, me);
    const othersFacts = new Map((await userFacts(tx, [...others.values()], gov.set.readsTags)).map((u) => [u.id, u]));
    othersFacts.set(me, voter); // read with tags above
    const approving = approvals.filter((v) => othersFacts.has(v.user_id)); // deleted users no longer count
    const initiator = await initiatorOf(tx, target, orgId);
    const decision = decide(gov.set, {
      activity: facts,
      rootOnly: def.rootOnly ?? false,
      quorum: gov.quorum,
      approvers: approving.map((v) => othersFacts.get(v.user_id)!),
      credentials: approving.map(credentialFacts),
      rejection: req.selection === "VOTE_SELECTION_REJECTED",
      implicitlyAllowed: def.implicitlyAllowed?.(params as never, initiator) ?? false,
      nowMs: now,
    });
    await recordEvaluation(tx, evaluationRow(target.id, target.organization_id, vote.id, { decision, gov }, now), gov);
    committedSets.push(gov);

    let next: Pick<ActivityRow, "status" | "result" | "failure"> = target;
    if (decision.outcome === "OUTCOME_ALLOW") {
      try {
        const result = await withSavepoint(tx, () =>
          def.execute({ tx, organization: { id: target.organization_id }, actor: initiator, activityId: target.id, now }, params as never),
        );
        next = { status: STATUS.COMPLETED, result: JSON.stringify(result), failure: null };
      } catch (err) {
        // The approvals stand; the activity itself failed (e.g. its name was taken meanwhile).
        if (!(err instanceof ApiError)) throw err;
        next = { status: STATUS.FAILED, result: null, failure: JSON.stringify(err.toBody()) };
      }
    } else if (decision.outcome === "OUTCOME_REJECTED") {
      next = { status: STATUS.REJECTED, result: null, failure: null };
    } else if (isDenied(decision)) {
      next = { status: STATUS.FAILED, result: null, failure: JSON.stringify(deniedFailure(decision, target.id).toBody()) };
    }
    const updated: ActivityRow = { ...target, ...next, updated_at: now };
    // A submission that asked for app proofs gets one for every decision that settles it.
    if (target.app_proofs !== null && next.status !== target.status && deps.masterKey) {
      const proof = await outcomeProof(tx, deps.masterKey, {
        activity: { id: target.id, type: target.type, fingerprint: target.fingerprint, organizationId: target.organization_id },
        decision,
        organizationId: orgId,
        gov,
        approvals: approving,
        now,
      });
      updated.app_proofs = JSON.stringify([...(JSON.parse(target.app_proofs) as unknown[]), proof]);
    }
    await tx
      .updateTable("activities")
      .set({ status: updated.status, result: updated.result, failure: updated.failure, app_proofs: updated.app_proofs, updated_at: now })
      .where("id", "=", target.id)
      .execute();
    if (updated.status !== target.status && (await hasListeners(tx, target.organization_id))) {
      await recordActivityEvent(tx, await activityView(tx, updated), now);
      emitted = true;
    }
    return updated;
  });
  if (emitted) deps.onEvents?.();
  for (const gov of committedSets) gov.persisted = true;
  // A resubmission is answered like any resubmission; an accepted vote with the target
  // as it now stands, whatever the outcome.
  if (req.resubmission) return respond(deps.db, row, undefined, auth.user);
  return { activity: await activityView(deps.db, row, undefined, auth.user) };
}

/** The users behind the other approvals (deleted users are simply absent). */
async function approverRows(tx: Tx, approvals: readonly VoteRow[], self: string): Promise<Map<string, UserRow>> {
  const ids = [...new Set(approvals.map((v) => v.user_id))].filter((id) => id !== self);
  const rows = ids.length ? await tx.selectFrom("users").selectAll().where("id", "in", ids).execute() : [];
  return new Map(rows.map((u) => [u.id, u]));
}

