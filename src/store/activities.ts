// Activities and the votes cast on them.
import { sql } from "kysely";
import type { ActivitiesTable, ActivityStatus, Executor, PolicyEvaluationsTable, VotesTable } from "./schema.ts";
import { dialectOf } from "./engines.ts";
import { page, unknownCursor, type PageRequest } from "./pagination.ts";
import { ownedBy } from "./util.ts";
import { precompiled } from "./precompiled.ts";
import { extrasOf, extrasSelect, type ExtrasColumns, type UserExtras } from "./users.ts";

export type ActivityRow = ActivitiesTable;
export type VoteRow = VotesTable;

const ACTIVITY_COLUMNS = [
  "id",
  "organization_id",
  "type",
  "status",
  "fingerprint",
  "intent",
  "result",
  "failure",
  "submitted_by",
  "app_proofs",
  "created_at",
  "updated_at",
] as const satisfies readonly (keyof ActivityRow)[];
const VOTE_COLUMNS = [
  "id",
  "activity_id",
  "user_id",
  "user_organization_id",
  "selection",
  "message",
  "public_key",
  "signature",
  "scheme",
  "credential_id",
  "credential_type",
  "created_at",
] as const satisfies readonly (keyof VoteRow)[];

// Written once per activity: compiled once (see precompiled.ts).
const insertActivityQuery = precompiled(ACTIVITY_COLUMNS, (db, v) => db.insertInto("activities").values(v as never));
const insertVoteQuery = precompiled(VOTE_COLUMNS, (db, v) => db.insertInto("votes").values(v as never));

export async function insertActivity(db: Executor, row: ActivityRow): Promise<void> {
  await insertActivityQuery(db, row);
}

export async function insertVote(db: Executor, row: VoteRow): Promise<void> {
  await insertVoteQuery(db, row);
}

const EVALUATION_COLUMNS = [
  "id",
  "activity_id",
  "organization_id",
  "vote_id",
  "policy_set_id",
  "outcomes",
  "outcome",
  "created_at",
] as const satisfies readonly (keyof PolicyEvaluationsTable)[];

/**
 * A new activity, its first vote and that vote's evaluation record. Where every statement is
 * a round trip (PostgreSQL), one statement: the inserts are data-modifying WITH clauses, and
 * the statement's own result is the voter's extras for the answer's User view (read after the
 * activity's writes, as a read after COMMIT would; what other transactions commit meanwhile is
 * as unordered as ever). Foreign keys are checked at the end of the statement, when all three
 * rows exist. Elsewhere, three precompiled inserts in that order and no extras.
 */
export async function insertSubmission(
  db: Executor,
  activity: ActivityRow,
  vote: VoteRow,
  evaluation: PolicyEvaluationsTable,
): Promise<UserExtras | undefined> {
  if (!dialectOf(db).roundTrips) {
    await insertActivityQuery(db, activity);
    await insertVoteQuery(db, vote);
    await insertEvaluationQuery(db, evaluation);
    return undefined;
  }
  const insert = <K extends string>(table: string, columns: readonly K[], row: Record<K, unknown>) =>
    sql`insert into ${sql.table(table)} (${sql.join(columns.map((c) => sql.ref(c)))}) values (${sql.join(columns.map((c) => row[c]))})`;
  const { rows } =
    await sql<ExtrasColumns>`with a as (${insert("activities", ACTIVITY_COLUMNS, activity)}), v as (${insert("votes", VOTE_COLUMNS, vote)}), e as (${insert(
      "policy_evaluations",
      EVALUATION_COLUMNS,
      evaluation,
    )}) select ${extrasSelect(vote.user_id)}`.execute(db);
  return extrasOf(vote.user_id, rows[0]!);
}

const insertEvaluationQuery = precompiled(EVALUATION_COLUMNS, (db, v) => db.insertInto("policy_evaluations").values(v as never));

export async function findActivity(db: Executor, id: string): Promise<ActivityRow | undefined> {
  return db.selectFrom("activities").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function findActivityByFingerprint(db: Executor, fingerprint: string): Promise<ActivityRow | undefined> {
  return db.selectFrom("activities").selectAll().where("fingerprint", "=", fingerprint).executeTakeFirst();
}

export async function votesOf(db: Executor, activityIds: readonly string[]): Promise<VoteRow[]> {
  if (activityIds.length === 0) return [];
  return db.selectFrom("votes").selectAll().where("activity_id", "in", activityIds).orderBy("created_at").orderBy("id").execute();
}

export interface ActivityFilter {
  organizationId: string;
  statuses?: ActivityStatus[];
  types?: string[];
}

/**
 * The stored characters one page of activities may carry: their intents, results, failures,
 * app proofs and votes' messages. A body may hold a megabyte, and the vote keeps the body, so
 * a full page could otherwise be a hundred megabytes read, held and written for one request;
 * a page ends before the activity that would pass this, and holds at least one
 * (docs/api.md §3.1). — *our choice*
 */
export const PAGE_BYTES = 2 * 1024 * 1024;

/**
 * What an activity's answer carries that can be large, counted where it is stored: octet_length
 * reads a value's length from the record (SQLite) or the TOAST header (PostgreSQL) without
 * reading the value itself.
 */
const storedBytes = sql<number | string>`octet_length(intent) + coalesce(octet_length(result), 0) + coalesce(octet_length(failure), 0)
  + coalesce(octet_length(app_proofs), 0)
  + coalesce((select sum(octet_length(v.message)) from votes v where v.activity_id = activities.id), 0)`;

/** The rows of a page, in list order, up to `budget` stored bytes; `backwards`: the cursor is after them, so the nearest are last. */
export function withinBudget<T extends { bytes: number | string }>(rows: readonly T[], budget: number, backwards: boolean): T[] {
  const walk = backwards ? [...rows].reverse() : [...rows];
  const kept: T[] = [];
  let total = 0;
  for (const r of walk) {
    total += Number(r.bytes);
    if (kept.length > 0 && total > budget) break;
    kept.push(r);
  }
  return backwards ? kept.reverse() : kept;
}

/** Newest first; a page holds at most PAGE_BYTES of stored activity (at least one). */
export async function listActivities(db: Executor, f: ActivityFilter, req: PageRequest, budget = PAGE_BYTES): Promise<ActivityRow[]> {
  let q = db
    .selectFrom("activities")
    .select(["id", "created_at", storedBytes.as("bytes")])
    .where("organization_id", "=", f.organizationId);
  if (f.statuses?.length) q = q.where("status", "in", f.statuses);
  if (f.types?.length) q = q.where("type", "in", f.types);
  const cursorId = req.before ?? req.after;
  let cursor;
  if (cursorId) {
    cursor = ownedBy(
      await db.selectFrom("activities").select(["created_at", "id", "organization_id"]).where("id", "=", cursorId).executeTakeFirst(),
      f.organizationId,
    );
    if (!cursor) unknownCursor(cursorId);
  }
  // Sizes first, then only the rows that fit: what is read is bounded, not just what is sent.
  const kept = withinBudget(await page(q, req, cursor, true), budget, req.before !== undefined);
  if (kept.length === 0) return [];
  const rows = await db
    .selectFrom("activities")
    .selectAll()
    .where(
      "id",
      "in",
      kept.map((r) => r.id),
    )
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return kept.flatMap((k) => byId.get(k.id) ?? []);
}
