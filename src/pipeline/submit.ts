// The submit pipeline: every state change goes through here, in this order.
//   1. route: the path's operation (no body read yet)
//   2. authenticate: the stamp's signature over the raw bytes, then — the body parsed with
//      bounded nesting and only organizationId read — the credential in the target
//      organization or an ancestor. Nothing else in the body is looked at before this.
//   3. body.type → definition; a parent's credential may not write to a sub-organization;
//      validate envelope + parameters (+ the definition's own checks, e.g. policy
//      expressions); no U+0000 anywhere
//   4. liveness of timestampMs
//   5. idempotency: same raw body → same activity
//   6. authorize: the policy engine decides (allow, wait for consensus, or deny)
//   7. execute + record the activity, its vote and its evaluation in ONE transaction
// approve_activity / reject_activity share steps 1–4, then vote on their target (vote.ts).
import type { IncomingHttpHeaders } from "node:http";
import { createHash } from "node:crypto";
import { Type } from "@sinclair/typebox";
import { Grpc, invalid, notFound } from "../errors.ts";
import { compile } from "../schemas/validate.ts";
import { OrganizationId, UintString } from "../schemas/common.ts";
import { activitiesAt } from "../activities/registry.ts";
import { resolveCredential, verifyStamp } from "./authenticate.ts";
import type { UserRow } from "../store/users.ts";
import { authorizeSubmission, deniedError, deniedFailure, evaluationRow, isDenied, recordEvaluation, STATUS } from "./authorize.ts";
import type { OrgGovernance } from "./governance.ts";
import { activityView, type ActivityView, type KnownVotes } from "./activity-view.ts";
import { findActivityByFingerprint, insertActivity, insertVote, type ActivityRow, type VoteRow } from "../store/activities.ts";
import type { PolicyEvaluationRow } from "../store/policies.ts";
import { newId } from "../store/util.ts";
import type { Db, Tx } from "../store/schema.ts";
import type { Engine } from "../store/db.ts";
import type { Transact } from "../store/transactions.ts";
import { isVote, type SubmitRoute } from "../activities/define.ts";
import type { Decision } from "../policy/engine.ts";
import { parseJsonBody, refuseNulCharacters, targetOrganizationId } from "./body.ts";
import { refuseParentWrite } from "./parent-writes.ts";
import { castVote, voteRow } from "./vote.ts";
import { hasListeners, recordActivityEvent } from "../webhooks/outbox.ts";
import { outcomeProof } from "./app-proofs.ts";
import type { MasterKey } from "../crypto/envelope.ts";

export interface PipelineDeps {
  db: Db;
  /** Runs an activity's writes all-or-nothing. */
  transact: Transact;
  timestampMaxAgeMs: number;
  timestampMaxFutureMs: number;
  /** Decides whether votes lock their target row (PostgreSQL) or rely on the single writer (SQLite). */
  engine: Engine;
  /** Where policy runtime errors are reported (never blocking: an erroring policy has no effect). */
  log?: { warn(obj: object, msg: string): void };
  /** Called after a commit that wrote webhook events (wakes the dispatcher). */
  onEvents?: () => void;
  /** Opens the app-proof signing key (submissions with generateAppProofs). */
  masterKey?: MasterKey;
  now?: () => number;
}

const envelope = compile(
  Type.Object({
    type: Type.String({ minLength: 1, maxLength: 128 }),
    timestampMs: UintString("timestampMs"),
    organizationId: OrganizationId,
    parameters: Type.Object({}, { errorMessage: "must be an object" }),
    generateAppProofs: Type.Optional(Type.Boolean()),
  }),
);

export async function submitActivity(
  deps: PipelineDeps,
  op: string,
  raw: Buffer,
  headers: IncomingHttpHeaders,
): Promise<{ activity: ActivityView }> {
  const now = (deps.now ?? Date.now)();
  // 1. route
  const defs = activitiesAt(op);
  if (!defs) throw notFound(`unknown activity operation ${JSON.stringify(op.slice(0, 100))}`);
  // 2. authenticate
  const stamp = await verifyStamp(headers, raw);
  const body = parseJsonBody(raw);
  const auth = await resolveCredential(deps.db, stamp, targetOrganizationId(body), now);
  // 3. definition, parent writes, validation
  const def = routeType(defs, body.type, op);
  refuseParentWrite(def, auth);
  refuseNulCharacters(body);
  const env = envelope.parse(body, "");
  // The envelope schema knows nothing of parameters (cleaning drops them): read them raw.
  const params = def.validator.parse(body.parameters, "parameters");
  if (!isVote(def)) def.check?.(params as never);
  // 4. liveness
  const ts = Number(env.timestampMs);
  if (ts < now - deps.timestampMaxAgeMs || ts > now + deps.timestampMaxFutureMs) {
    throw invalid(
      `timestampMs is outside the accepted window (${deps.timestampMaxAgeMs / 1000} s old to ${deps.timestampMaxFutureMs / 1000} s ahead of server time ${now})`,
      [{ field: "timestampMs", description: "must be the current time in milliseconds" }],
    );
  }
  if (isVote(def)) {
    const { fingerprint } = params as { fingerprint: string };
    return castVote(deps, { selection: def.selection, fingerprint, auth, raw, now });
  }
  // 5. idempotency. No look-up here: the unique fingerprint makes the second writer of a
  // body fail, and record() then answers with the first one's activity. A resubmission
  // costs a rolled-back transaction; every first submission saves a query.
  const fingerprint = createHash("sha256").update(raw).digest("hex");
  // 6. authorize
  const evaluated = await authorizeSubmission(deps.db, def, params, auth, now);
  const { decision, gov } = evaluated;
  // 7. execute and record
  const activityId = newId();
  reportPolicyErrors(deps, activityId, decision);
  const base = {
    id: activityId,
    organization_id: auth.organization.id,
    type: def.type,
    fingerprint,
    intent: JSON.stringify(params),
    submitted_by: auth.actor.userId,
    app_proofs: null as string | null,
    created_at: now,
    updated_at: now,
  };
  const vote = voteRow(activityId, "VOTE_SELECTION_APPROVED", auth, raw, now);
  if (env.generateAppProofs) {
    if (!deps.masterKey) throw new Error("app proofs need the master key in the pipeline");
    const proof = await outcomeProof(deps.db, deps.masterKey, {
      activity: { id: activityId, type: def.type, fingerprint, organizationId: auth.organization.id },
      decision,
      organizationId: auth.actor.organizationId,
      gov,
      approvals: [vote],
      now,
    });
    base.app_proofs = JSON.stringify([proof]);
  }
  const evaluation = evaluationRow(activityId, auth.organization.id, vote.id, evaluated, now);
  let recorded: Recorded;
  const denied = isDenied(decision) ? deniedFailure(decision, activityId) : undefined;
  const emit = await hasListeners(deps.db, auth.organization.id, auth.webhookVersion);
  const known: KnownVotes = { votes: [vote], voters: [auth.user] };
  const write = { vote, evaluation, gov, emit: emit ? known : undefined };
  if (decision.outcome === "OUTCOME_ALLOW") {
    recorded = await record(deps, base, write, async (tx) => {
      const result = await def.execute(
        { tx, organization: auth.organization, actor: auth.actor, activityId, now },
        params,
      );
      return { status: STATUS.COMPLETED, result: JSON.stringify(result), failure: null };
    });
  } else {
    const status = denied ? STATUS.FAILED : STATUS.CONSENSUS_NEEDED;
    const failure = denied ? JSON.stringify(denied.toBody()) : null;
    recorded = await record(deps, base, write, async () => ({ status, result: null, failure }));
  }
  if (recorded.votes) {
    if (emit) deps.onEvents?.();
    if (denied) throw denied;
    // The event's payload is the answer: the submitter can never vote again on its own fresh
    // activity, so canApprove/canReject are false either way.
    if (recorded.view) return { activity: recorded.view };
    return respond(deps.db, recorded.row, known, auth.user);
  }
  // An earlier identical submission exists. While it awaits consensus, the same request
  // from a user who has not approved it yet is an approval (POLICY-LANGUAGE §6.5).
  if (recorded.row.status === STATUS.CONSENSUS_NEEDED) {
    return castVote(deps, { selection: "VOTE_SELECTION_APPROVED", fingerprint, auth, raw, now, resubmission: true });
  }
  return respond(deps.db, recorded.row, undefined, auth.user);
}

/** The definition accepted at submit/<op> for the body's type, or a 400 listing the accepted ones. */
function routeType(defs: ReadonlyMap<string, SubmitRoute>, type: unknown, op: string): SubmitRoute {
  const def = typeof type === "string" ? defs.get(type) : undefined;
  if (def) return def;
  const accepted = [...defs.keys()].join(", ");
  const given = type === undefined ? "type must be set" : `activity type ${JSON.stringify(type).slice(0, 200)} is not accepted at submit/${op}`;
  throw invalid(`bad request body: ${given}; expected ${accepted}`, [{ field: "type", description: `must be one of ${accepted}` }]);
}

function reportPolicyErrors(deps: PipelineDeps, activityId: string, d: Decision): void {
  const errors = d.policies.filter((p) => p.error);
  if (errors.length && deps.log) {
    deps.log.warn({ activityId, policyErrors: errors.map((e) => ({ policyId: e.policyId, error: e.error })) }, "policies failed to evaluate");
  }
}

interface Recorded {
  row: ActivityRow;
  /** Set when this request wrote the row (absent when a concurrent twin won). */
  votes?: VoteRow[];
  /** The activity as its webhook event carries it, when one was written. */
  view?: ActivityView;
}

interface Writes {
  vote: VoteRow;
  evaluation: PolicyEvaluationRow;
  gov: OrgGovernance;
  /** Write the webhook event too (someone listens), from these votes. */
  emit?: KnownVotes;
}

/** Writes the activity, its submitter's vote and whatever `work` does, all or nothing. */
async function record(
  deps: PipelineDeps,
  base: Omit<ActivityRow, "status" | "result" | "failure">,
  writes: Writes,
  work: (tx: Tx) => Promise<Pick<ActivityRow, "status" | "result" | "failure">>,
): Promise<Recorded> {
  const { vote, evaluation, gov, emit } = writes;
  try {
    const recorded: Recorded = await deps.transact(async (tx) => {
      const outcome = await work(tx);
      const row: ActivityRow = { ...base, ...outcome };
      await insertActivity(tx, row);
      await insertVote(tx, vote);
      await recordEvaluation(tx, evaluation, gov);
      if (!emit) return { row, votes: [vote] };
      const view = await activityView(tx, row, emit);
      await recordActivityEvent(tx, view, row.updated_at);
      return { row, votes: [vote], view };
    });
    gov.persisted = true; // committed with this activity
    return recorded;
  } catch (err) {
    // The same body may have raced in concurrently and won. Its handler then trips over
    // what the winner wrote (the fingerprint, or any other unique row, e.g. the tag name)
    // — on PostgreSQL only after the winner committed — so a failure here is answered with
    // the winner's activity when there is one.
    const winner = await findActivityByFingerprint(deps.db, base.fingerprint);
    if (winner) return { row: winner };
    throw err;
  }
}

/** The answer for an activity: the same for its first submission and every resubmission. */
export async function respond(
  db: Db,
  row: ActivityRow,
  known: KnownVotes | undefined,
  viewer: UserRow,
): Promise<{ activity: ActivityView }> {
  if (row.status === STATUS.FAILED && row.failure) {
    const f = JSON.parse(row.failure) as { code: number; message: string; details: Record<string, unknown>[] };
    const detail = f.details.find((d) => String(d["@type"]).endsWith("PolicyEnginePermissionError"));
    // A denied activity is answered as denied, however often it is resubmitted.
    if (f.code === Grpc.PERMISSION_DENIED && detail) {
      throw deniedError(String(detail.message ?? f.message), row.id, (detail.policyEvaluations as unknown[]) ?? []);
    }
  }
  return { activity: await activityView(db, row, known, viewer) };
}
