// The replay behind dry_run_policies (docs/policy-dry-run.md §4): an organization's recorded
// activities, newest first, each decided by today's policy set and by a proposed one over the
// same rebuilt facts; the activities whose outcome differs are reported with both evaluations.
// Read in pages of PAGE_ROWS activities (three queries a page: activities, votes, new approvers);
// each policy compiled once per request (or taken from the governance cache). Bounded: the
// window (at most MAX_WINDOW activities), the changes reported per request, a wall-clock budget
// per request (then complete: false and a cursor to go on from), the engine's pass budget per
// decision; and it yields the event loop every YIELD_MS of work, so other tenants' requests run
// in between.
import { setImmediate as turn } from "node:timers/promises";
import { sql } from "kysely";
import { decide, type DecisionInput, type PolicySet, type RootQuorum } from "../policy/engine.ts";
import type { EvalEnv } from "../policy/facts.ts";
import type { Executor } from "../store/schema.ts";
import { timestampObject } from "../store/util.ts";
import { evaluationView, type EvaluationView, type PolicyMeta } from "./evaluation.ts";
import { ApproverCache, approvalsAt, decidingOrganizationOf, FactsBuilder, votesByActivity } from "./recorded.ts";

/** docs/policy-dry-run.md §4.3, our choice: one HTTP request replays at most this many activities. */
export const MAX_WINDOW = 100_000;
export const DEFAULT_WINDOW = 1_000;
export const PAGE_ROWS = 1_000;
/** Wall-clock time one request may replay for (docs/policy-dry-run.md §4.3). */
export const TIME_BUDGET_MS = 5_000;
/** Longest stretch of replay without yielding the event loop. */
export const YIELD_MS = 10;
export const DEFAULT_CHANGED = 100;
export const MAX_CHANGED = 1_000;

export interface Window {
  afterMs?: number;
  beforeMs?: number;
  last: number;
}

/** Where a replay stopped: the last activity replayed, and how many of the window were read. */
export interface Cursor {
  createdAt: number;
  id: string;
  scanned: number;
}

const CURSOR = /^(\d{1,16})\.([0-9a-fA-F-]{36})\.(\d{1,7})$/;

export function encodeCursor(c: Cursor): string {
  return `${c.createdAt}.${c.id}.${c.scanned}`;
}

export function decodeCursor(s: string): Cursor | undefined {
  const m = CURSOR.exec(s);
  return m ? { createdAt: Number(m[1]), id: m[2]!, scanned: Number(m[3]) } : undefined;
}

export interface SetUnderTest {
  set: PolicySet;
  meta: ReadonlyMap<string, PolicyMeta>;
}

export interface Changed {
  activityId: string;
  type: string;
  status: string;
  createdAt: { seconds: string; nanos: string };
  before: EvaluationView;
  after: EvaluationView;
}

export interface ReplayResult {
  replayed: number;
  skipped: number;
  complete: boolean;
  nextCursor?: string;
  changed: Changed[];
}

export interface ReplayRequest {
  db: Executor;
  organizationId: string;
  quorum: RootQuorum;
  today: SetUnderTest;
  proposed: SetUnderTest;
  window: Window;
  cursor?: Cursor;
  maxChanged: number;
  /** performance.now() when the request started, and how long it may run. */
  startedAt: number;
  budgetMs: number;
}

interface PageRow {
  id: string;
  organization_id: string;
  type: string;
  status: string;
  intent: string;
  submitted_by: string;
  created_at: number;
}

async function pageOf(db: Executor, organizationId: string, w: Window, after: Cursor | undefined, limit: number): Promise<PageRow[]> {
  let q = db
    .selectFrom("activities")
    .select(["id", "organization_id", "type", "status", "intent", "submitted_by", "created_at"])
    .where("organization_id", "=", organizationId);
  if (w.afterMs !== undefined) q = q.where("created_at", ">=", w.afterMs);
  if (w.beforeMs !== undefined) q = q.where("created_at", "<", w.beforeMs);
  if (after) {
    // A row-value comparison, as store/pagination.ts pages: a range of the (organization_id,
    // created_at, id) index on both engines (the OR form walks the index from its start).
    q = q.where(sql<boolean>`(created_at, id) < (${after.createdAt}, ${after.id})`);
  }
  return q.orderBy("created_at", "desc").orderBy("id", "desc").limit(limit).execute();
}

export async function replay(r: ReplayRequest): Promise<ReplayResult> {
  const { db, organizationId } = r;
  const facts = new FactsBuilder(db, organizationId);
  const users = new ApproverCache(db, r.today.set.readsTags || r.proposed.set.readsTags);
  const changed: Changed[] = [];
  let replayed = 0;
  let skipped = 0;
  let scanned = r.cursor?.scanned ?? 0;
  let at: Cursor | undefined = r.cursor;
  let lastTurn = performance.now();
  const stopped = (): ReplayResult => ({
    replayed,
    skipped,
    complete: false,
    ...(at ? { nextCursor: encodeCursor({ ...at, scanned }) } : {}),
    changed,
  });

  // The next page is read while this one is decided (PostgreSQL answers meanwhile).
  const fetchPage = async (after: Cursor | undefined, want: number) => {
    const rows = await pageOf(db, organizationId, r.window, after, want);
    return {
      rows,
      want,
      votes: await votesByActivity(
        db,
        rows.map((row) => row.id),
      ),
    };
  };
  let next: ReturnType<typeof fetchPage> | undefined =
    scanned < r.window.last ? fetchPage(at, Math.min(PAGE_ROWS, r.window.last - scanned)) : undefined;
  while (next) {
    const { rows, want, votes } = await next;
    const last = rows[rows.length - 1];
    const rest = r.window.last - scanned - rows.length;
    next =
      last && rows.length === want && rest > 0
        ? fetchPage({ createdAt: last.created_at, id: last.id, scanned: 0 }, Math.min(PAGE_ROWS, rest))
        : undefined;
    // Not awaited when the replay stops early: its failure then has nowhere to go.
    next?.catch(() => {});
    const approving: string[] = [];
    for (const list of votes.values()) for (const v of list) if (v.selection === "VOTE_SELECTION_APPROVED") approving.push(v.user_id);
    await users.load(approving);
    for (const row of rows) {
      if (changed.length >= r.maxChanged || performance.now() - r.startedAt > r.budgetMs) return stopped();
      const recorded = votes.get(row.id) ?? [];
      // Decided by a parent's policies (submitted by a parent's user): not this organization's set to judge.
      const rebuilt = decidingOrganizationOf(row, recorded) === organizationId ? await facts.of(row) : undefined;
      if (!rebuilt) {
        skipped++;
      } else {
        replayed++;
        // Decided as at its last vote, over the approvals that counted then (docs/policy-dry-run.md §4.2).
        const nowMs = recorded.length ? recorded[recorded.length - 1]!.created_at : row.created_at;
        const { approvers, credentials } = approvalsAt(recorded, nowMs, users);
        const input: DecisionInput = {
          activity: rebuilt.facts,
          rootOnly: rebuilt.def.rootOnly ?? false,
          quorum: r.quorum,
          approvers,
          credentials,
          rejection: false,
          implicitlyAllowed:
            rebuilt.def.implicitlyAllowed?.(rebuilt.params, {
              userId: row.submitted_by,
              userName: "",
              organizationId,
              organizationName: "",
            }) ?? false,
          nowMs,
        };
        const before = decide(r.today.set, input);
        const after = decide(r.proposed.set, input);
        if (before.outcome !== after.outcome) {
          const env: EvalEnv = { activity: input.activity, approvers, credentials, nowMs };
          const beforeOf = new Map(before.policies.map((p) => [p.policyId, p.outcome]));
          const afterOf = new Map(after.policies.map((p) => [p.policyId, p.outcome]));
          changed.push({
            activityId: row.id,
            type: row.type,
            status: row.status,
            createdAt: timestampObject(row.created_at),
            // Explained: the policies whose outcome differs between the two sets (or that only one set has).
            before: evaluationView(before, r.today.meta, env, (id, o) => afterOf.get(id) !== o),
            after: evaluationView(after, r.proposed.meta, env, (id, o) => beforeOf.get(id) !== o),
          });
        }
      }
      scanned++;
      at = { createdAt: row.created_at, id: row.id, scanned };
      if (performance.now() - lastTurn > YIELD_MS) {
        await turn();
        lastTurn = performance.now();
      }
    }
  }
  return { replayed, skipped, complete: true, changed };
}
