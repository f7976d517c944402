// dry_run_policies: what a policy change would change (docs/policy-dry-run.md §4). Replays the
// organization's recorded activities through today's set and the proposed one and reports
// every activity whose outcome differs; or, in intent mode, decides one activity that was never
// submitted, as if the caller (or a named user of the organization) submitted it alone.
// Read-only; readable as list_activities is.
import { Type, type Static } from "@sinclair/typebox";
import { invalid, notFound } from "../errors.ts";
import { OrganizationId, UintString } from "../schemas/common.ts";
import { activityByType } from "../activities/registry.ts";
import { decide, type RootQuorum } from "../policy/engine.ts";
import type { CredentialFacts } from "../policy/facts.ts";
import { governance, userFacts } from "../governance/governance.ts";
import { policiesOf } from "../store/policies.ts";
import type { UserRow } from "../store/users.ts";
import { EvaluationSchema, evaluationView } from "../policy-dryrun/evaluation.ts";
import { ProposalSchema, proposedSet, todaysMeta } from "../policy-dryrun/proposal.ts";
import { FactsBuilder } from "../policy-dryrun/recorded.ts";
import { takeDryRunSlot } from "../policy-dryrun/slots.ts";
import {
  decodeCursor,
  DEFAULT_CHANGED,
  DEFAULT_WINDOW,
  MAX_CHANGED,
  MAX_WINDOW,
  replay,
  TIME_BUDGET_MS,
  type SetUnderTest,
  type Window,
} from "../policy-dryrun/replay.ts";
import { defineQuery, type QueryContext } from "./define.ts";

const Changed = Type.Object({
  activityId: Type.String(),
  type: Type.String(),
  status: Type.String(),
  createdAt: Type.Object({ seconds: Type.String(), nanos: Type.String() }),
  before: EvaluationSchema,
  after: EvaluationSchema,
});

const Request = Type.Object({
  organizationId: OrganizationId,
  proposal: ProposalSchema,
  window: Type.Optional(
    Type.Object({
      afterMs: Type.Optional(UintString("window.afterMs")),
      beforeMs: Type.Optional(UintString("window.beforeMs")),
      last: Type.Optional(
        Type.Integer({ minimum: 1, maximum: MAX_WINDOW, errorMessage: `window.last must be an integer from 1 to ${MAX_WINDOW}` }),
      ),
    }),
  ),
  intent: Type.Optional(
    Type.Object({
      type: Type.String({ pattern: "^ACTIVITY_TYPE_[A-Z0-9_]+$", maxLength: 128, errorMessage: "must be an ACTIVITY_TYPE_* value" }),
      // Validated by the activity type's own schema below (kept whole here: the query's cleaning would drop its members).
      parameters: Type.Unknown(),
      userId: Type.Optional(Type.String({ maxLength: 64 })),
    }),
  ),
  paginationOptions: Type.Optional(
    Type.Object({
      limit: Type.Optional(
        Type.String({ pattern: "^[0-9]{1,4}$", errorMessage: `limit must be a number from 1 to ${MAX_CHANGED}, as a string` }),
      ),
      after: Type.Optional(Type.String({ maxLength: 128 })),
    }),
  ),
});

export const dryRunPolicies = defineQuery({
  op: "dry_run_policies",
  summary:
    "Replay the organization's recorded activities through today's and a proposed policy set and list those whose outcome changes; or decide one unsubmitted intent under both. Read-only.",
  request: Request,
  response: Type.Object({
    replayed: Type.Number(),
    skipped: Type.Number(),
    complete: Type.Boolean(),
    nextCursor: Type.Optional(Type.String()),
    changed: Type.Array(Changed),
    intent: Type.Optional(Type.Object({ before: EvaluationSchema, after: EvaluationSchema })),
  }),
  async run(ctx, req) {
    const release = takeDryRunSlot(ctx.organization.id);
    try {
      return await dryRun(ctx, req);
    } finally {
      release();
    }
  },
});

/** The query itself, in its organization's slot (docs/policy-dry-run.md §4.3). */
async function dryRun(ctx: QueryContext, req: Static<typeof Request>) {
  const startedAt = performance.now();
  const { db, state, organization } = ctx;
  const today = await governance(state.governance, db, organization.id);
  const rows = await policiesOf(db, organization.id);
  const proposed = await proposedSet(rows, today, req.proposal);
  const sets = { today: { set: today.set, meta: todaysMeta(rows) }, proposed };
  if (req.intent) {
    return { replayed: 0, skipped: 0, complete: true, changed: [], intent: await decideIntent(ctx, req.intent, today.quorum, sets) };
  }
  const window = windowOf(req.window);
  const limit = req.paginationOptions?.limit === undefined ? DEFAULT_CHANGED : Number(req.paginationOptions.limit);
  if (!(limit >= 1 && limit <= MAX_CHANGED)) {
    throw invalid(`paginationOptions.limit must be between 1 and ${MAX_CHANGED}`, [
      { field: "paginationOptions.limit", description: `1 to ${MAX_CHANGED}` },
    ]);
  }
  const after = req.paginationOptions?.after;
  const cursor = after ? decodeCursor(after) : undefined;
  if (after && !cursor) {
    throw invalid("paginationOptions.after must be a nextCursor this query returned", [
      { field: "paginationOptions.after", description: "not a dry-run cursor" },
    ]);
  }
  return replay({
    db,
    organizationId: organization.id,
    quorum: today.quorum,
    ...sets,
    window,
    ...(cursor ? { cursor } : {}),
    maxChanged: limit,
    startedAt,
    budgetMs: TIME_BUDGET_MS,
  });
}

function windowOf(w: { afterMs?: string; beforeMs?: string; last?: number } | undefined): Window {
  const window: Window = { last: w?.last ?? DEFAULT_WINDOW };
  if (w?.afterMs !== undefined) window.afterMs = Number(w.afterMs);
  if (w?.beforeMs !== undefined) window.beforeMs = Number(w.beforeMs);
  if (window.afterMs !== undefined && window.beforeMs !== undefined && window.afterMs >= window.beforeMs) {
    throw invalid("window.afterMs must be before window.beforeMs", [{ field: "window", description: "empty time range" }]);
  }
  return window;
}

/**
 * Intent mode (docs/policy-dry-run.md §4.4): the intent validated as a submission's parameters
 * are, its facts built as submission builds them, approved by its submitter alone — the caller
 * with the credential that stamped this query, or the named user of the organization (no credential).
 */
async function decideIntent(
  ctx: QueryContext,
  intent: { type: string; parameters: unknown; userId?: string },
  quorum: RootQuorum,
  sets: { today: SetUnderTest; proposed: SetUnderTest },
) {
  const def = activityByType(intent.type);
  if (!def)
    throw invalid(`intent.type: ${intent.type} is not an activity type this service accepts`, [
      { field: "intent.type", description: "unknown activity type" },
    ]);
  if (typeof intent.parameters !== "object" || intent.parameters === null || Array.isArray(intent.parameters)) {
    throw invalid("intent.parameters must be an object", [{ field: "intent.parameters", description: "must be an object" }]);
  }
  const params = def.validator.parse(intent.parameters, "intent.parameters");
  def.check?.(params);
  let user: UserRow = ctx.viewer;
  let credentials: CredentialFacts[] = ctx.credential ? [ctx.credential] : [];
  if (intent.userId !== undefined && intent.userId !== ctx.viewer.id) {
    const named = await ctx.db
      .selectFrom("users")
      .selectAll()
      .where("id", "=", intent.userId)
      .where("organization_id", "=", ctx.organization.id)
      .executeTakeFirst();
    if (!named) throw notFound(`no user ${intent.userId} in organization ${ctx.organization.id}`);
    user = named as UserRow;
    credentials = [];
  }
  const [approver] = await userFacts(ctx.db, [user], true);
  const facts = await new FactsBuilder(ctx.db, ctx.organization.id).factsOf(def, params);
  const input = {
    activity: facts,
    rootOnly: def.rootOnly ?? false,
    quorum,
    approvers: [approver!],
    credentials,
    rejection: false,
    implicitlyAllowed:
      def.implicitlyAllowed?.(params, {
        userId: user.id,
        userName: user.name,
        organizationId: user.organization_id,
        organizationName: "",
      }) ?? false,
    nowMs: ctx.now,
  };
  const env = { activity: facts, approvers: input.approvers, credentials, nowMs: ctx.now };
  // One activity: every policy that does not match is explained, under each side's pass budget.
  return {
    before: evaluationView(decide(sets.today.set, input), sets.today.meta, env, () => true),
    after: evaluationView(decide(sets.proposed.set, input), sets.proposed.meta, env, () => true),
  };
}
