// The "activity" route kind: a new activity. After the shared steps (authenticate,
// validate, which read the request snapshot with the caller): idempotency (fingerprint) →
// authorize → settle → respond.
import { createHash } from "node:crypto";
import { callerOf } from "../network/enforce.ts";
import { apiErrorFromFailure } from "../errors.ts";
import type { CompiledActivity } from "../activities/define.ts";
import type { Decision } from "../policy/engine.ts";
import { findActivityByFingerprint, votesOf, type ActivityRow } from "../store/activities.ts";
import type { Principal } from "../auth/principal.ts";
import { newId } from "../store/util.ts";
import type { KnownVotes } from "../views/activity.ts";
import { openProofKey } from "./app-proofs.ts";
import { authorize, isDenied, deniedFailure, stampCredential, STATUS, type Evaluated } from "./authorize.ts";
import type { PipelineDeps } from "./deps.ts";
import { activityFacts, governance, userFact } from "../governance/governance.ts";
import { respond, type Answer } from "./respond.ts";
import { activityServices } from "./services.ts";
import { afterCommit, settle, type Settled, type Settlement } from "./settle.ts";
import type { Validated } from "./validate.ts";
import { betweenSteps } from "./body.ts";
import { castVote, voteRow } from "./vote.ts";
import { recordedIntent, recordedVote } from "./secret-params.ts";
import { awaitingAuthenticators, owedByActor, recordOwed, refuseUnapprovable, submitterMfaPolicies, type OwedMfa } from "./mfa-gate.ts";
import type { MfaPolicyRow } from "../store/mfa-policies.ts";
import { STRICT_WEBHOOK_URLS } from "../webhooks/url-policy.ts";
import { signerKey } from "../signing/resolve.ts";
import type { VersionedSigner } from "../signing/signer-cache.ts";
import { refuseOutsideSessionScope } from "../auth/session-scope.ts";

export async function submitNew(v: Validated<CompiledActivity>): Promise<Answer> {
  const { ctx } = v;
  // Step 5 (docs/request-path.md §2.6): the body's fingerprint, admission, the signer.
  const bodyFingerprint = createHash("sha256").update(ctx.raw).digest("hex");
  await admit(v);
  const signer = await resolveSigner(v);
  // Step 6 (docs/request-path.md §2.7): authorize, with the submitter's stamp as the first approval.
  const authorized = await authorizeSubmission(v, signer);
  if (v.envelope.generateAppProofs) await openAppProofKey(ctx.deps);
  const earlier = await earlierBeforePrepare(v, bodyFingerprint);
  if ("twin" in earlier) return answerTwin(v, earlier.twin, earlier.fingerprint);
  const prepared = await prepareOnceAllowed(v, authorized.evaluated, signer);
  // Steps 7 and 8 (docs/request-path.md §2.8): settle in one transaction, then respond.
  const settlement = await settlementOf(v, authorized, earlier.fingerprint, prepared, signer);
  return settleAndAnswer(v, settlement, bodyFingerprint);
}

/** What authorizing a new submission decided, and what it read on the way. */
interface AuthorizedSubmission {
  activityId: string;
  evaluated: Evaluated;
  /** The submitter's MFA policies (read only when the snapshot says there are some). */
  mfaPolicies: MfaPolicyRow[];
  /** What the MFA gate still needs from the submitter's authenticators; undefined: nothing. */
  owed: OwedMfa | undefined;
}

/**
 * Checks against the configuration and the file system (a TVC image under the image root):
 * before authorization, so a refusal records nothing (ActivityDefinition.admit).
 */
async function admit({ ctx: { deps }, principal, def, params }: Validated<CompiledActivity>): Promise<void> {
  if (!def.admit) return;
  await def.admit(params, {
    organizationId: principal.organization.id,
    webhookUrls: deps.webhookUrls ?? STRICT_WEBHOOK_URLS,
    ...(deps.tvcImageRoot ? { tvcImageRoot: deps.tvcImageRoot } : {}),
  });
}

/**
 * A signing activity names a key of the organization: an unknown one (404) or a request its
 * curve cannot sign (400) is refused here, before it could wait for approvals (docs/signing.md §1).
 * The key found here also binds the policy facts, and signs if the signing transaction finds
 * the organization's keys unchanged since the credential read (docs/signing.md §5).
 */
async function resolveSigner({
  ctx: { deps },
  principal,
  snapshot,
  def,
  params,
}: Validated<CompiledActivity>): Promise<VersionedSigner | undefined> {
  if (!def.policySigner) return undefined;
  // The snapshot's version is the acting user's organization's: it vouches for that organization's keys only.
  const keysVersion = principal.organization.id === principal.actor.organizationId ? snapshot.keysVersion : undefined;
  const signer = await deps.state.signers.resolve(deps.db, principal.organization.id, def.policySigner(params), keysVersion);
  def.checkSigner?.(params, signerKey(signer.signer));
  return signer;
}

/** Session scope, the caller's organization's policies, then the MFA gate (docs/request-path.md §2.7). */
async function authorizeSubmission(v: Validated<CompiledActivity>, signer: VersionedSigner | undefined): Promise<AuthorizedSubmission> {
  const { ctx, principal, snapshot, def, params } = v;
  const { deps, now } = ctx;
  const facts = await activityFacts(deps.db, def, params, principal.organization.id, signer?.signer);
  const approvers = [userFact(principal.user, snapshot.tagIds)];
  const credentials = [stampCredential(principal)];
  // A session issued with a profile: its scope first, over what the policies see (auth/session-scope.ts).
  const scoped = refuseOutsideSessionScope(deps.db, principal, { activity: facts, approvers, credentials, nowMs: now });
  if (scoped) await scoped;
  const gov = await governance(deps.state.governance, deps.db, principal.actor.organizationId, snapshot.policyVersion);
  let evaluated = authorize({ def, params, facts, gov, approvers, credentials, rejection: false, initiator: principal.actor, now });
  const activityId = newId();
  reportPolicyErrors(deps, activityId, evaluated.decision);
  // MFA: an activity the policies do not deny waits for its submitter's authenticators (docs/mfa.md §3).
  const mfaPolicies = snapshot.hasMfaPolicies ? await submitterMfaPolicies(deps.db, principal) : [];
  const owed = isDenied(evaluated.decision) ? undefined : await owedByActor(deps.db, principal, mfaPolicies, facts, snapshot.tagIds, now);
  if (owed) {
    refuseUnapprovable(principal, owed);
    evaluated = awaitingAuthenticators(evaluated, owed, principal.actor.userId);
  }
  return { activityId, evaluated, mfaPolicies, owed };
}

async function openAppProofKey(deps: PipelineDeps): Promise<void> {
  if (!deps.masterKey) throw new Error("app proofs need the master key in the pipeline");
  await openProofKey(deps.state, deps.db, deps.masterKey);
}

/**
 * Step 5's fingerprint has no look-up: the unique fingerprint makes the second writer of a body
 * fail, and settling then answers with the first one's activity — if it may answer this caller
 * (mayAnswerWith; else a fresh activity under the caller's own fingerprint). A resubmission
 * costs a rolled-back transaction; every first submission saves a query. Only a definition with
 * a `prepare` step looks first: a retried body is answered with its first activity instead of
 * repeating the I/O (a single-use authorization code would be refused the second time).
 */
async function earlierBeforePrepare(
  v: Validated<CompiledActivity>,
  bodyFingerprint: string,
): Promise<{ twin: ActivityRow; fingerprint: string } | { fingerprint: string }> {
  const { ctx, principal, def } = v;
  const { deps } = ctx;
  if (!def.prepare) return { fingerprint: bodyFingerprint };
  const earlier = await findActivityByFingerprint(deps.db, bodyFingerprint);
  if (!earlier) return { fingerprint: bodyFingerprint };
  if (await mayAnswerWith(deps, earlier, principal)) return { twin: earlier, fingerprint: bodyFingerprint };
  const fingerprint = ownFingerprint(ctx.raw, principal);
  const mine = await findActivityByFingerprint(deps.db, fingerprint);
  return mine ? { twin: mine, fingerprint } : { fingerprint };
}

/** The definition's work outside the database (provider calls), only once it is allowed. */
async function prepareOnceAllowed(
  v: Validated<CompiledActivity>,
  evaluated: Evaluated,
  signer: VersionedSigner | undefined,
): Promise<unknown> {
  const { ctx, principal, def, params } = v;
  const { deps, now } = ctx;
  if (!def.prepare || evaluated.decision.outcome !== "OUTCOME_ALLOW") return undefined;
  return def.prepare(
    {
      db: deps.db,
      organization: { id: principal.organization.id },
      actor: principal.actor,
      now,
      chains: deps.state.chains,
      services: activityServices(deps, deps.db, now),
      ...(signer ? { signer: signer.signer } : {}),
    },
    params,
    "submission",
  );
}

/** Everything the transaction writes or decides with, for a new activity. */
async function settlementOf(
  v: Validated<CompiledActivity>,
  { activityId, evaluated, mfaPolicies, owed }: AuthorizedSubmission,
  fingerprint: string,
  prepared: unknown,
  signer: VersionedSigner | undefined,
): Promise<Settlement> {
  const { ctx, principal, snapshot, def, params } = v;
  const { deps, now } = ctx;
  // Who listens is decided before the transaction, from the endpoints as the snapshot saw
  // them: an activity that creates the organization's first endpoint does not notify it.
  const listening = await deps.state.listeners.hasListeners(deps.db, principal.organization.id, snapshot.webhookVersion);
  // Secret parameters are recorded sealed, in the intent and in the vote's copy of the body (docs/activities.md §10).
  const vote = await recordedVote(deps, def, voteRow(activityId, "VOTE_SELECTION_APPROVED", v, now));
  const known: KnownVotes = { votes: [vote], voters: [principal.user], mfaPolicies: new Map([[principal.user.id, mfaPolicies]]) };
  return {
    activity: {
      id: activityId,
      organization_id: principal.organization.id,
      type: def.type,
      fingerprint,
      intent: await recordedIntent(deps, def, params, activityId),
      submitted_by: principal.actor.userId,
      app_proofs: null,
      created_at: now,
      updated_at: now,
    },
    def,
    params,
    // The handler sees which key signed (a verification token is accepted only from its own
    // key: docs/login-lookups.md §4).
    initiator: { ...principal.actor, stampPublicKey: principal.stamp.publicKey },
    vote,
    evaluated,
    decidingOrganizationId: principal.actor.organizationId,
    approvals: [vote],
    appProofs: v.envelope.generateAppProofs === true,
    listening,
    known,
    now,
    caller: callerOf(ctx.network, principal),
    ...(prepared !== undefined ? { prepared } : {}),
    ...(signer ? { signer } : {}),
    ...(owed ? { extraWrites: recordOwed(activityId, principal.actor.organizationId, principal.actor.userId, owed, now, false) } : {}),
  };
}

/** Settles the activity (or finds the twin whose body came first) and answers. */
async function settleAndAnswer(v: Validated<CompiledActivity>, settlement: Settlement, bodyFingerprint: string): Promise<Answer> {
  const { ctx, principal } = v;
  const { deps } = ctx;
  let { settled, twin } = await settleOrFindTwin(deps, settlement);
  if (twin && settlement.activity.fingerprint === bodyFingerprint && !(await mayAnswerWith(deps, twin, principal))) {
    // Someone else's activity has this body: this one is made afresh, under the caller's own
    // fingerprint (which a replay of it by this caller then finds).
    settlement.activity.fingerprint = ownFingerprint(ctx.raw, principal);
    ({ settled, twin } = await settleOrFindTwin(deps, settlement));
  }
  if (!settled) return answerTwin(v, twin!, settlement.activity.fingerprint);
  // The answer carries the body back (the vote's message): for a large one, a turn of its own
  // after the commit (docs/network.md §6.1).
  await betweenSteps(ctx.raw);
  const { decision } = settlement.evaluated;
  if (isDenied(decision)) throw deniedFailure(decision, settlement.activity.id);
  // A handler failure that kept its writes (keepWrites): recorded FAILED, answered as the error.
  if (settled.row.status === STATUS.FAILED && settled.row.failure) throw apiErrorFromFailure(settled.row.failure);
  // The event's payload is the answer: the submitter can never vote again on its own fresh
  // activity, so canApprove/canReject are false either way.
  if (settled.event) return { activity: settled.event };
  return respond(deps.db, settled.row, settlement.known, principal.user, deps.state.governance);
}

/**
 * Whether an earlier activity with the same body may answer this request
 * (docs/sessions-and-network.md §3): only for its submitter, a
 * user who voted on it, or — while it awaits consensus — a user of its organization, whose
 * identical request is an approval (castVote checks the voter may vote). Any other caller
 * sending the same bytes — a body naming a parent's organization id, as stamp_login from core
 * does, is the same for users of every sub-organization below it — gets an activity of its
 * own: never another user's result (a session JWT, ids).
 */
async function mayAnswerWith(deps: PipelineDeps, twin: ActivityRow, principal: Principal): Promise<boolean> {
  const me = principal.actor.userId;
  if (twin.submitted_by === me) return true;
  if (twin.status === STATUS.CONSENSUS_NEEDED && twin.organization_id === principal.organization.id) return true;
  return (await votesOf(deps.db, [twin.id])).some((vote) => vote.user_id === me);
}

/**
 * The fingerprint of an activity whose body another principal's activity already has: the
 * body's hash with the submitting user's id, so the same caller's replay finds it again and
 * the body's own hash keeps naming the first one.
 */
function ownFingerprint(raw: Buffer, principal: Principal): string {
  return createHash("sha256").update(raw).update("\0sigil-submitter\0").update(principal.actor.userId).digest("hex");
}

/**
 * An earlier identical submission exists. While it awaits consensus, the same request from a
 * user who has not approved it yet is an approval (docs/activities.md §5.2); otherwise the answer
 * is that activity.
 */
function answerTwin(v: Validated<CompiledActivity>, twin: ActivityRow, fingerprint: string): Promise<Answer> {
  const { deps } = v.ctx;
  if (twin.status === STATUS.CONSENSUS_NEEDED) {
    return castVote(v, { selection: "VOTE_SELECTION_APPROVED", fingerprint, resubmission: true });
  }
  return respond(deps.db, twin, undefined, v.principal.user, deps.state.governance);
}

/**
 * Settles the new activity, or — when that fails because the same body came in before (or
 * concurrently, and won) — finds that twin. The loser's handler trips over what the winner wrote (the
 * fingerprint, or any other unique row, e.g. the tag name), on PostgreSQL only after the
 * winner committed, so a failure is answered with the winner's activity when there is one.
 */
async function settleOrFindTwin(
  deps: PipelineDeps,
  s: Settlement,
): Promise<{ settled: Settled; twin?: undefined } | { settled?: undefined; twin: ActivityRow }> {
  try {
    const settled = await deps.transact((tx) => settle(deps, tx, s));
    afterCommit(deps, s, settled);
    return { settled };
  } catch (err) {
    const twin = await findActivityByFingerprint(deps.db, s.activity.fingerprint);
    if (twin) return { twin };
    throw err;
  }
}

function reportPolicyErrors(deps: PipelineDeps, activityId: string, d: Decision): void {
  const errors = d.policies.filter((p) => p.error);
  if (errors.length && deps.log) {
    deps.log.warn(
      { activityId, policyErrors: errors.map((e) => ({ policyId: e.policyId, error: e.error })) },
      "policies failed to evaluate",
    );
  }
}
