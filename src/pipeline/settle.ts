// The one place a decision takes effect, for a new submission and for every vote alike, in
// the activity's transaction:
//   decision → status (ALLOW executes the handler) → app proof → the activity row → the
//   request's vote and its evaluation record → the webhook event when the status changed.
// After the commit, afterCommit() marks the policy set as stored and wakes the dispatcher.
import { sql } from "kysely";
import { ApiError, notFound, precondition } from "../errors.ts";
import { liveOrganizationLocked } from "../store/organizations.ts";
import type { VersionedSigner } from "../signing/signer-cache.ts";
import type { Signer } from "../signing/resolve.ts";
import type { Actor, CompiledActivity } from "../activities/define.ts";
import { insertSubmission, insertVote, type ActivityRow, type VoteRow } from "../store/activities.ts";
import { viewsOf } from "../store/users.ts";
import type { Tx } from "../store/schema.ts";
import { recordActivityEvent } from "../webhooks/outbox.ts";
import { activityView, type ActivityView, type KnownVotes } from "../views/activity.ts";
import { deniedFailure, evaluationRow, isDenied, recordEvaluation, recordPolicySet, STATUS, type Evaluated } from "./authorize.ts";
import { outcomeProof } from "./app-proofs.ts";
import type { PipelineDeps } from "./deps.ts";
import { activityServices } from "./services.ts";
import { refuseOutsideScopeAtExecution } from "./scope.ts";
import type { Caller } from "../network/request-network.ts";
import type { Params } from "./validate.ts";

type Outcome = Pick<ActivityRow, "status" | "result" | "failure">;

export interface Settlement {
  /**
   * The activity. A new submission's row-to-be (its status, result and failure are decided
   * here) or, for a vote, the stored row as it stood before this vote.
   */
  activity: Omit<ActivityRow, keyof Outcome>;
  /** Absent for a new submission: it is inserted, not updated, and has no status to change from. */
  previous?: ActivityRow;
  def: CompiledActivity;
  params: Params;
  /** The submitter, who the handler acts as whenever the activity runs. */
  initiator: Actor;
  /** This request's vote (a submission's stamp is its first approval). */
  vote: VoteRow;
  evaluated: Evaluated;
  /** The organization whose policies decided, and the approvals they decided over (app proofs). */
  decidingOrganizationId: string;
  approvals: readonly VoteRow[];
  /** The submission asked for app proofs: one for every decision that changes the status. */
  appProofs: boolean;
  /**
   * Whether anyone listens to the organization's events, as a new submission found it before
   * its transaction (submission.ts). Absent (votes): asked here, after the execution.
   */
  listening?: boolean;
  /** The votes and voters, when the caller holds all of them (the event's view then reads none). */
  known?: KnownVotes;
  now: number;
  /** A new submission's request (network side); absent for votes. */
  caller?: Caller;
  /** What the definition's prepare returned before this transaction (submission.ts, vote.ts). */
  prepared?: unknown;
  /** The key the submission found for the definition's policySigner, with the keys version it is current for. */
  signer?: VersionedSigner;
  /** Rows that go with this decision, written once the activity row exists (the MFA requirement: pipeline/mfa-gate.ts). */
  extraWrites?: (tx: Tx) => Promise<void>;
}

export interface Settled {
  row: ActivityRow;
  /** The activity as its webhook event carries it, when one was written. */
  event?: ActivityView;
}

export async function settle(deps: PipelineDeps, tx: Tx, s: Settlement): Promise<Settled> {
  const { activity, previous, evaluated, now } = s;
  // A request authenticated before its organization was deleted finds it gone here, and
  // records nothing (docs/organizations.md §7.3).
  const live = await liveOrganizationLocked(tx, activity.organization_id, s.def.deletesOrganization === true);
  if (!live) throw notFound(`organization ${activity.organization_id} not found`, "ORGANIZATION_NOT_FOUND");
  // The submission's signer signs only if no key of the organization was written since it was
  // read (docs/signing.md §5); otherwise the handler reads it again, here.
  const signer = s.signer?.keysVersion !== undefined && s.signer.keysVersion === live.keysVersion ? s.signer.signer : undefined;
  const outcome = await decidedOutcome(deps, tx, s, signer);
  const row: ActivityRow = { ...activity, ...outcome, updated_at: now };
  const changed = outcome.status !== previous?.status;
  if (s.appProofs && changed && deps.masterKey) {
    const proof = await outcomeProof(deps.state, tx, deps.masterKey, {
      activity: { id: row.id, type: row.type, fingerprint: row.fingerprint, organizationId: row.organization_id },
      decision: evaluated.decision,
      organizationId: s.decidingOrganizationId,
      gov: evaluated.gov,
      approvals: s.approvals,
      now,
    });
    const earlier = previous?.app_proofs ? (JSON.parse(previous.app_proofs) as unknown[]) : [];
    row.app_proofs = JSON.stringify([...earlier, proof]);
  }
  const evaluation = evaluationRow(row.id, row.organization_id, s.vote.id, evaluated, now);
  if (previous) {
    await tx
      .updateTable("activities")
      .set({ status: row.status, result: row.result, failure: row.failure, app_proofs: row.app_proofs, updated_at: now })
      .where("id", "=", row.id)
      .execute();
    // Votes refer to their activity: written once the row exists.
    await insertVote(tx, s.vote);
    await recordEvaluation(tx, evaluation, evaluated.gov);
  } else {
    await recordPolicySet(tx, evaluation, evaluated.gov);
    // The row, its first vote and the evaluation: one statement where that saves round trips,
    // which also reads the voter's extras for the answer.
    const extras = await insertSubmission(tx, row, s.vote, evaluation);
    // (Assigned either way: a retried transaction must not answer with an earlier attempt's.)
    if (s.known) s.known.voterViews = extras ? viewsOf(s.known.voters, extras, s.known.mfaPolicies ?? new Map()) : undefined;
  }
  await s.extraWrites?.(tx);
  if (!changed || !(s.listening ?? (await deps.state.listeners.hasListeners(tx, row.organization_id)))) return { row };
  const event = await activityView(tx, row, s.known);
  await recordActivityEvent(tx, event, now);
  return { row, event };
}

/** After the settling transaction committed. */
export function afterCommit(deps: PipelineDeps, s: Pick<Settlement, "evaluated">, settled: Settled): void {
  s.evaluated.gov.persisted = true; // its policy set was committed with the record
  if (settled.event) deps.onEvents?.();
}

/** The status the decision gives the activity; ALLOW runs the handler first. */
async function decidedOutcome(deps: PipelineDeps, tx: Tx, s: Settlement, signer: Signer | undefined): Promise<Outcome> {
  const { decision } = s.evaluated;
  if (decision.outcome === "OUTCOME_ALLOW") return executed(deps, tx, s, signer);
  if (decision.outcome === "OUTCOME_REJECTED") return { status: STATUS.REJECTED, result: null, failure: null };
  if (decision.outcome === "OUTCOME_REQUIRES_AUTHENTICATORS") return { status: STATUS.AUTHENTICATORS_NEEDED, result: null, failure: null };
  if (isDenied(decision)) {
    return { status: STATUS.FAILED, result: null, failure: JSON.stringify(deniedFailure(decision, s.activity.id).toBody()) };
  }
  return { status: STATUS.CONSENSUS_NEEDED, result: null, failure: null };
}

async function executed(deps: PipelineDeps, tx: Tx, s: Settlement, signer: Signer | undefined): Promise<Outcome> {
  const run = async (): Promise<Outcome> => {
    // The operator gate again, in this transaction: an approval may come after the operator
    // turned the feature off (pipeline/scope.ts).
    await refuseOutsideScopeAtExecution(s.def, { tx, organization: { id: s.activity.organization_id }, chains: deps.state.chains }, deps);
    if (s.def.prepare && s.prepared === undefined) {
      throw precondition(
        `${s.def.type} can only run when its submission is allowed: what it prepares outside the database (e.g. a single-use authorization code) is not kept for a later approval`,
      );
    }
    const result = await s.def.execute(
      {
        prepared: s.prepared,
        tx,
        organization: { id: s.activity.organization_id },
        actor: s.initiator,
        activityId: s.activity.id,
        now: s.now,
        chains: deps.state.chains,
        services: activityServices(deps, tx, s.now),
        ...(s.caller ? { caller: s.caller } : {}),
        ...(signer ? { signer } : {}),
      },
      s.params,
    );
    return { status: STATUS.COMPLETED, result: JSON.stringify(result), failure: null };
  };
  // A new submission whose handler fails is answered with the failure and not recorded
  // (the caller may correct it and submit again) — unless the error keeps its writes. An activity executed by a later approval
  // keeps its approvals: it is recorded FAILED (e.g. its name was taken meanwhile).
  if (!s.previous) {
    try {
      return await run();
    } catch (err) {
      // A failure that counts (a wrong OTP code burns an attempt): recorded, writes kept.
      if (err instanceof ApiError && err.keepsWrites) return { status: STATUS.FAILED, result: null, failure: JSON.stringify(err.toBody()) };
      throw err;
    }
  }
  try {
    return await withSavepoint(tx, run);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { status: STATUS.FAILED, result: null, failure: JSON.stringify(err.toBody()) };
  }
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
