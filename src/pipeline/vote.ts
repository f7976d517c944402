// The "vote" route kind — approve_activity / reject_activity, or an identical resubmission
// by another user — after the shared steps (authenticate, validate). In one transaction:
// lock the target, check the voter, re-evaluate with every live approval (authorize), and
// settle: record the vote and the evaluation and, when the decision is final, execute or
// close the target. The lock (PostgreSQL) or the single writer (SQLite) makes concurrent
// approvals serial, so the target executes exactly once.
import { ApiError, Grpc, invalid, notFound, precondition } from "../errors.ts";
import { hasStandingVote, liveApprovals } from "../policy/approval-window.ts";
import type { ActivityParams, Actor, VoteDefinition, VoteSelection } from "../activities/define.ts";
import { votesOf, type ActivityRow, type VoteRow } from "../store/activities.ts";
import { newOrderedId } from "../store/util.ts";
import type { Tx } from "../store/schema.ts";
import { dialectOf } from "../store/engines.ts";
import type { UserRow } from "../store/users.ts";
import { activityView } from "../views/activity.ts";
import { credentialFacts, decidingOrganization, userFacts, voterStanding, type VoterStanding } from "../governance/governance.ts";
import { authorize, isDenied, stampCredential, STATUS, type Evaluated } from "./authorize.ts";
import { refuseOutsideSessionScope } from "../auth/session-scope.ts";
import {
  approverStamp,
  awaitingAuthenticators,
  holdApprover,
  meetsLastStep,
  mfaStamp,
  type ApproverMfa,
  type MfaStamp,
} from "./mfa-gate.ts";
import { respond, type Answer } from "./respond.ts";
import { activityByType } from "../activities/registry.ts";
import { activityServices } from "./services.ts";
import { afterCommit, settle, type Settled, type Settlement } from "./settle.ts";
import type { Validated } from "./validate.ts";
import { executableParams, recordedVote } from "./secret-params.ts";

export interface VoteRequest {
  selection: VoteSelection;
  fingerprint: string;
  /** The vote is an identical resubmission of the target itself. */
  resubmission?: boolean;
}

/** The request's vote: its stamp over the exact body, and the credential behind it. */
export function voteRow(
  activityId: string,
  selection: VoteSelection,
  { ctx, principal }: Pick<Validated, "ctx" | "principal">,
  now: number,
): VoteRow {
  return {
    id: newOrderedId(now),
    activity_id: activityId,
    user_id: principal.actor.userId,
    user_organization_id: principal.actor.organizationId,
    selection,
    message: ctx.raw.toString("utf8"),
    public_key: principal.stamp.publicKey,
    signature: principal.stamp.signature,
    scheme: principal.stamp.scheme,
    credential_id: principal.credential.id,
    credential_type: principal.credential.type,
    created_at: now,
  };
}

/** approve_activity / reject_activity: a vote on the activity with the given fingerprint. */
export function voteOn(v: Validated<VoteDefinition>): Promise<Answer> {
  return castVote(v, { selection: v.def.selection, fingerprint: String(v.params.fingerprint) });
}

async function lockTarget(tx: Tx, fingerprint: string): Promise<ActivityRow | undefined> {
  return dialectOf(tx)
    .forUpdate(tx.selectFrom("activities").selectAll().where("fingerprint", "=", fingerprint))
    .executeTakeFirst();
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

export async function castVote(v: Pick<Validated, "ctx" | "principal">, req: VoteRequest): Promise<Answer> {
  const { ctx, principal } = v;
  const { deps } = ctx;
  const prepared = req.selection === "VOTE_SELECTION_APPROVED" ? await prepareTarget(v, req.fingerprint) : undefined;
  const outcome = await deps.transact((tx) => voteInTransaction(tx, v, req, prepared));
  let row: ActivityRow;
  if ("unchanged" in outcome) {
    row = outcome.unchanged;
  } else {
    afterCommit(deps, outcome.settlement, outcome.settled);
    row = outcome.settled.row;
  }
  // A resubmission is answered like any resubmission; a vote (accepted or retried) with the
  // target as it now stands, whatever the outcome.
  if (req.resubmission) return respond(deps.db, row, undefined, principal.user, deps.state.governance);
  return { activity: await activityView(deps.db, row, undefined, principal.user, deps.state.governance) };
}

type Voter = Pick<Validated, "ctx" | "principal">;
type VoteOutcome = { unchanged: ActivityRow } | { settled: Settled; settlement: Settlement };

/** What the target's MFA says about this vote (docs/mfa.md §3.2, §3.4). */
interface VoteStamps {
  /** The target waits for its submitter's authenticators: this vote as one of them. */
  mfa?: Exclude<MfaStamp, { unchanged: true }>;
  /** The target awaits consensus: approvers held by their own MFA. */
  approver?: ApproverMfa;
}

/**
 * The steps of docs/request-path.md §3, in the vote's transaction: lock the target, check the
 * voter, re-evaluate with every live approval, and settle.
 */
async function voteInTransaction(tx: Tx, v: Voter, req: VoteRequest, prepared: unknown): Promise<VoteOutcome> {
  const { ctx, principal } = v;
  const target = await lockTarget(tx, req.fingerprint);
  if (!target || target.organization_id !== principal.organization.id) {
    throw notFound(`No activity found with fingerprint ${req.fingerprint} in organization ${principal.organization.id}`);
  }
  const votes = await votesOf(tx, [target.id]);
  // Votes on one activity are serial (the lock); time them after the lock, strictly after
  // the previous vote, so votes and evaluation records list in the order they happened.
  const now = Math.max(Date.now(), ctx.now, ...votes.map((vote) => vote.created_at + 1));
  // The organization whose policies decided the activity decides its votes too.
  const orgId = decidingOrganization(target, votes);
  if (principal.actor.organizationId !== orgId) {
    throw new ApiError(
      Grpc.INVALID_ARGUMENT,
      "ORGANIZATION_MISMATCH",
      `organization mismatch: request is targeting organization (${orgId}), but voters are in organization (${principal.actor.organizationId})`,
    );
  }
  const stamps = await voteStamps(tx, v, req, target, votes, now);
  if (!stamps || isRepeatedVote(v, req, target, votes, stamps, now)) return { unchanged: target };
  const standing = await eligibleStanding(tx, v, target, orgId, now, stamps);
  // An identical resubmission's body carries the secrets too: recorded sealed (docs/activities.md §10).
  const vote = await recordedVote(ctx.deps, standing.def, voteRow(target.id, req.selection, v, now));
  if (stamps.approver && req.selection === "VOTE_SELECTION_APPROVED") {
    await holdApprover(tx, target, principal, standing.facts, standing.voter.tags, stamps.approver, now);
  }
  const decided = await evaluateVote(tx, v, req, { target, votes, vote, standing, stamps, orgId, now });
  const settlement: Settlement = {
    activity: target,
    previous: target,
    def: standing.def,
    // Executed with the secrets opened (docs/activities.md §10.2); a rejection executes nothing.
    params:
      req.selection === "VOTE_SELECTION_APPROVED"
        ? await executableParams(ctx.deps, standing.def, standing.params, target.id)
        : standing.params,
    initiator: decided.initiator,
    vote,
    evaluated: decided.evaluated,
    decidingOrganizationId: orgId,
    approvals: decided.approving,
    // A submission that asked for app proofs gets one for every decision that settles it.
    appProofs: target.app_proofs !== null,
    now,
    ...(prepared !== undefined ? { prepared } : {}),
    ...(stamps.mfa ? { extraWrites: stamps.mfa.write } : stamps.approver?.write ? { extraWrites: stamps.approver.write } : {}),
  };
  return { settled: await settle(ctx.deps, tx, settlement), settlement };
}

/** The MFA gates' say on this vote; undefined: it changes nothing (a retried stamp). */
async function voteStamps(
  tx: Tx,
  { ctx, principal }: Voter,
  req: VoteRequest,
  target: ActivityRow,
  votes: readonly VoteRow[],
  now: number,
): Promise<VoteStamps | undefined> {
  const rejecting = req.selection === "VOTE_SELECTION_REJECTED";
  // Waiting for its submitter's authenticators: the MFA gate's rules, not consensus's (docs/mfa.md §3.2).
  const mfa =
    target.status === STATUS.AUTHENTICATORS_NEEDED
      ? await mfaStamp(tx, target, principal, votes, ctx.raw.toString("utf8"), rejecting, now)
      : undefined;
  if (mfa?.unchanged) return undefined;
  // Awaiting consensus: an approver's own MFA holds its approval (docs/mfa.md §3.4).
  const approver =
    target.status === STATUS.CONSENSUS_NEEDED
      ? await approverStamp(tx, target, principal, votes, ctx.raw.toString("utf8"), rejecting, now)
      : undefined;
  if (approver && "unchanged" in approver) return undefined;
  return { ...(mfa ? { mfa } : {}), ...(approver ? { approver } : {}) };
}

/**
 * A vote the voter already cast, or one on a target no longer awaiting votes: true when it is
 * answered with the target unchanged (a retry, a resubmission); refused otherwise.
 */
function isRepeatedVote(
  { ctx, principal }: Voter,
  req: VoteRequest,
  target: ActivityRow,
  votes: readonly VoteRow[],
  stamps: VoteStamps,
  now: number,
): boolean {
  const me = principal.actor.userId;
  if (!stamps.mfa && !stamps.approver?.stamping && hasStandingVote(votes, me, now)) {
    const rejected = votes.some((vote) => vote.user_id === me && vote.selection === "VOTE_SELECTION_REJECTED");
    // The initiator may still reject: for them rejecting cancels the activity (docs/consensus.md §3).
    const cancelling = req.selection === "VOTE_SELECTION_REJECTED" && me === target.submitted_by && !rejected;
    if (!cancelling) {
      // A retried vote (or resubmission) is answered with the activity, not refused.
      const raw = ctx.raw.toString("utf8");
      if (req.resubmission || votes.some((vote) => vote.user_id === me && vote.message === raw)) return true;
      throw invalid(`user ${me} has already voted on activity ${target.id}`);
    }
  }
  if (!stamps.mfa && target.status !== STATUS.CONSENSUS_NEEDED) {
    if (req.resubmission) return true;
    throw precondition(`activity ${target.id} is ${target.status}; votes are accepted only while it awaits consensus`);
  }
  return false;
}

/** The voter's standing on the target: within its session's scope, and eligible to vote (or owing MFA). */
async function eligibleStanding(
  tx: Tx,
  { ctx, principal }: Voter,
  target: ActivityRow,
  orgId: string,
  now: number,
  stamps: VoteStamps,
): Promise<VoterStanding> {
  const standing = await voterStanding(tx, target, orgId, principal.user, now, ctx.deps.state.governance);
  if (!standing) throw precondition(`activity type ${target.type} is no longer supported; it cannot be voted on`);
  // A session issued with a profile approves or rejects only what its scope allows it to submit (auth/session-scope.ts).
  await refuseOutsideSessionScope(tx, principal, {
    activity: standing.facts,
    approvers: [standing.voter],
    credentials: [stampCredential(principal)],
    nowMs: now,
  });
  if (!stamps.mfa && !standing.eligible) {
    throw new ApiError(
      Grpc.PERMISSION_DENIED,
      "REQUEST_NOT_AUTHORIZED",
      `request not authorized: user ${principal.actor.userId} is not in the root quorum and no applicable policy's consensus includes them, so they cannot vote on activity ${target.id}`,
    );
  }
  return standing;
}

/** The decision with every live approval (deleted users no longer count), and the MFA gate over it. */
async function evaluateVote(
  tx: Tx,
  { principal }: Voter,
  req: VoteRequest,
  b: {
    target: ActivityRow;
    votes: readonly VoteRow[];
    vote: VoteRow;
    standing: VoterStanding;
    stamps: VoteStamps;
    orgId: string;
    now: number;
  },
): Promise<{ evaluated: Evaluated; approving: VoteRow[]; initiator: Actor }> {
  const { target, votes, vote, standing, stamps, orgId, now } = b;
  const me = principal.actor.userId;
  const approvals = liveApprovals(req.selection === "VOTE_SELECTION_APPROVED" ? [...votes, vote] : votes, now).filter(
    (a) => !stamps.approver?.held.has(a.user_id),
  );
  const others = await approverRows(tx, approvals, me);
  const othersFacts = new Map((await userFacts(tx, [...others.values()], standing.gov.set.readsTags)).map((u) => [u.id, u]));
  othersFacts.set(me, standing.voter); // read with tags above
  const approving = approvals.filter((a) => othersFacts.has(a.user_id)); // deleted users no longer count
  const initiator = await initiatorOf(tx, target, orgId);
  let evaluated = authorize({
    def: standing.def,
    params: standing.params,
    facts: standing.facts,
    gov: standing.gov,
    approvers: approving.map((a) => othersFacts.get(a.user_id)!),
    credentials: approving.map(credentialFacts),
    rejection: req.selection === "VOTE_SELECTION_REJECTED",
    initiator,
    now,
  });
  const { mfa } = stamps;
  if (mfa && !mfa.complete && !isDenied(evaluated.decision) && evaluated.decision.outcome !== "OUTCOME_REJECTED") {
    evaluated = awaitingAuthenticators(evaluated, mfa.owed, me);
  }
  return { evaluated, approving, initiator };
}

/**
 * An approval may execute its target: a target whose definition prepares I/O outside the
 * database (activities/define.ts `prepare`) gets it done here, before the vote's transaction
 * and its lock. Read without the lock: if the target is settled meanwhile, the transaction
 * finds that and what was prepared goes unused.
 */
async function prepareTarget(v: Pick<Validated, "ctx" | "principal">, fingerprint: string): Promise<unknown> {
  const { deps } = v.ctx;
  const target = await deps.db
    .selectFrom("activities")
    .select(["id", "type", "intent", "organization_id", "status", "submitted_by"])
    .where("fingerprint", "=", fingerprint)
    .executeTakeFirst();
  if (!target || target.organization_id !== v.principal.organization.id) return undefined;
  const def = activityByType(target.type);
  if (!def?.prepare) return undefined;
  // Waiting for authenticators: only the stamp that meets the last step may run it (docs/mfa.md §3.2).
  const runnable =
    target.status === STATUS.CONSENSUS_NEEDED ||
    (target.status === STATUS.AUTHENTICATORS_NEEDED && (await meetsLastStep(deps.db, target.id, v.principal)));
  if (!runnable) return undefined;
  const now = v.ctx.now;
  return def.prepare(
    {
      db: deps.db,
      organization: { id: target.organization_id },
      actor: v.principal.actor,
      now,
      chains: deps.state.chains,
      services: activityServices(deps, deps.db, now),
    },
    await executableParams(deps, def, JSON.parse(target.intent) as ActivityParams, target.id),
    "approval",
  );
}

/** The users behind the other approvals (deleted users are simply absent). */
async function approverRows(tx: Tx, approvals: readonly VoteRow[], self: string): Promise<Map<string, UserRow>> {
  const ids = [...new Set(approvals.map((v) => v.user_id))].filter((id) => id !== self);
  const rows = ids.length ? await tx.selectFrom("users").selectAll().where("id", "in", ids).execute() : [];
  return new Map(rows.map((u) => [u.id, u]));
}
