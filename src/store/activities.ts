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

/** Newest first. */
export async function listActivities(db: Executor, f: ActivityFilter, req: PageRequest): Promise<ActivityRow[]> {
  let q = db.selectFrom("activities").selectAll().where("organization_id", "=", f.organizationId);
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
  return page(q, req, cursor, true);
}
