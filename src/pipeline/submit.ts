// The submit pipeline: every state change goes through here, in this order.
//   1. route → definition (body.type must be one the path accepts)
//   2. validate envelope + parameters
//   3. authenticate the stamp over the raw body
//   4. liveness of timestampMs
//   5. idempotency: same raw body → same activity
//   6. authorize
//   7. execute + record the activity and its vote in ONE transaction
import type { IncomingHttpHeaders } from "node:http";
import { createHash } from "node:crypto";
import { Type } from "@sinclair/typebox";
import { ApiError, Grpc, invalid, notFound } from "../errors.ts";
import { compile } from "../schemas/validate.ts";
import { OrganizationId, UintString } from "../schemas/common.ts";
import { activitiesAt } from "../activities/registry.ts";
import { authenticate, type Authenticated } from "./authenticate.ts";
import { decide } from "./authorize.ts";
import { activityView, type ActivityView, type KnownVotes } from "./activity-view.ts";
import { findActivityByFingerprint, insertActivity, insertVote, type ActivityRow, type VoteRow } from "../store/activities.ts";
import { newId } from "../store/util.ts";
import type { Db, Tx } from "../store/schema.ts";
import type { Transact } from "../store/transactions.ts";
import { parseJsonBody } from "./body.ts";

export interface PipelineDeps {
  db: Db;
  /** Runs an activity's writes all-or-nothing. */
  transact: Transact;
  timestampMaxAgeMs: number;
  timestampMaxFutureMs: number;
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

export const STATUS = {
  COMPLETED: "ACTIVITY_STATUS_COMPLETED",
  FAILED: "ACTIVITY_STATUS_FAILED",
} as const;

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
  const body = parseJsonBody(raw);
  const type = (body as { type?: unknown }).type;
  const def = typeof type === "string" ? defs.get(type) : undefined;
  if (!def) {
    const accepted = [...defs.keys()].join(", ");
    const given = type === undefined ? "type must be set" : `activity type ${JSON.stringify(type)} is not accepted at submit/${op}`;
    throw invalid(`bad request body: ${given}; expected ${accepted}`, [
      { field: "type", description: `must be one of ${accepted}` },
    ]);
  }
  // 2. validate
  const env = envelope.parse(body, "");
  // The envelope schema knows nothing of parameters (cleaning drops them): read them raw.
  const params = def.validator.parse(body.parameters, "parameters");
  // 3. authenticate
  const auth = await authenticate(deps.db, headers, raw, env.organizationId, now);
  // 4. liveness
  const ts = Number(env.timestampMs);
  if (ts < now - deps.timestampMaxAgeMs || ts > now + deps.timestampMaxFutureMs) {
    throw invalid(
      `timestampMs is outside the accepted window (${deps.timestampMaxAgeMs / 1000} s old to ${deps.timestampMaxFutureMs / 1000} s ahead of server time ${now})`,
      [{ field: "timestampMs", description: "must be the current time in milliseconds" }],
    );
  }
  // 5. idempotency. No look-up here: the unique fingerprint makes the second writer of a
  // body fail, and record() then answers with the first one's activity. A resubmission
  // costs a rolled-back transaction; every first submission saves a query.
  const fingerprint = createHash("sha256").update(raw).digest("hex");
  // 6. authorize
  const decision = await decide(deps.db, auth.actor);
  // 7. execute and record
  const activityId = newId();
  const base = {
    id: activityId,
    organization_id: auth.organization.id,
    type: def.type,
    fingerprint,
    intent: JSON.stringify(params),
    submitted_by: auth.actor.userId,
    created_at: now,
    updated_at: now,
  };
  let recorded: Recorded;
  if (decision.outcome === "ALLOW") {
    recorded = await record(deps, base, auth, raw, now, async (tx) => {
      const result = await def.execute(
        { tx, organization: auth.organization, actor: auth.actor, activityId, now },
        params,
      );
      return { status: STATUS.COMPLETED, result: JSON.stringify(result), failure: null };
    });
  } else {
    const failure = deniedError(decision.reason, activityId);
    recorded = await record(deps, base, auth, raw, now, async () => ({
      status: STATUS.FAILED,
      result: null,
      failure: JSON.stringify(failure.toBody()),
    }));
    if (recorded.row.id === activityId) throw failure;
  }
  return respond(deps.db, recorded.row, recorded.votes && { votes: recorded.votes, voters: [auth.user] });
}

interface Recorded {
  row: ActivityRow;
  /** Set when this request wrote the row (absent when a concurrent twin won). */
  votes?: VoteRow[];
}

/** Writes the activity, its submitter's vote and whatever `work` does, all or nothing. */
async function record(
  deps: PipelineDeps,
  base: Omit<ActivityRow, "status" | "result" | "failure">,
  auth: Authenticated,
  raw: Buffer,
  now: number,
  work: (tx: Tx) => Promise<Pick<ActivityRow, "status" | "result" | "failure">>,
): Promise<Recorded> {
  try {
    return await deps.transact(async (tx) => {
      const outcome = await work(tx);
      const row: ActivityRow = { ...base, ...outcome };
      await insertActivity(tx, row);
      const vote: VoteRow = {
        id: newId(),
        activity_id: base.id,
        user_id: auth.actor.userId,
        user_organization_id: auth.actor.organizationId,
        selection: "VOTE_SELECTION_APPROVED",
        message: raw.toString("utf8"),
        public_key: auth.stamp.publicKey,
        signature: auth.stamp.signature,
        scheme: auth.stamp.scheme,
        created_at: now,
      };
      await insertVote(tx, vote);
      return { row, votes: [vote] };
    });
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

function deniedError(reason: string, activityId: string): ApiError {
  return new ApiError(Grpc.PERMISSION_DENIED, "REQUEST_NOT_AUTHORIZED", `request not authorized: ${reason}`, [
    {
      "@type": "type.googleapis.com/errors.v1.PolicyEnginePermissionError",
      message: reason,
      activityId,
      policyEvaluations: [],
    },
  ]);
}

/** The answer for an activity: the same for its first submission and every resubmission. */
async function respond(db: Db, row: ActivityRow, known?: KnownVotes): Promise<{ activity: ActivityView }> {
  if (row.status === STATUS.FAILED && row.failure) {
    const f = JSON.parse(row.failure) as { code: number; message: string; details: Record<string, unknown>[] };
    if (f.code === Grpc.PERMISSION_DENIED) {
      const detail = f.details.find((d) => String(d["@type"]).endsWith("PolicyEnginePermissionError"));
      throw deniedError(String(detail?.message ?? f.message), row.id);
    }
  }
  return { activity: await activityView(db, row, known) };
}
