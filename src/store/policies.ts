// Policies, the root quorum as the engine sees it, and the evaluation records.
import { sql } from "kysely";
import type { Executor, PoliciesTable, PolicyEvaluationsTable } from "./schema.ts";
import { timestampObject } from "./util.ts";
import { precompiled } from "./precompiled.ts";

export type PolicyRow = PoliciesTable;
export type PolicyEvaluationRow = PolicyEvaluationsTable;

/** At most 100 policies per organization, held under concurrent requests (docs/operations.md §3.3). */
export const MAX_POLICIES_PER_ORGANIZATION = 100;

export async function policiesOf(db: Executor, organizationId: string): Promise<PolicyRow[]> {
  return db.selectFrom("policies").selectAll().where("organization_id", "=", organizationId).orderBy("created_at").orderBy("id").execute();
}

export async function findPolicy(db: Executor, organizationId: string, id: string): Promise<PolicyRow | undefined> {
  return db.selectFrom("policies").selectAll().where("id", "=", id).where("organization_id", "=", organizationId).executeTakeFirst();
}

export async function countPolicies(db: Executor, organizationId: string): Promise<number> {
  const row = await db
    .selectFrom("policies")
    .select((eb) => eb.fn.countAll<string | number>().as("n"))
    .where("organization_id", "=", organizationId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Marks the organization's policies or root quorum as changed. Runs in the changing
 * activity's transaction, so an evaluator that sees the new version sees the new rows.
 */
export async function bumpPolicyVersion(db: Executor, organizationId: string): Promise<void> {
  await db
    .updateTable("organizations")
    .set({ policy_version: sql<number>`policy_version + 1` })
    .where("id", "=", organizationId)
    .execute();
}

const governanceQuery = precompiled(["organizationId"], (db, v) =>
  db
    .selectFrom("organizations")
    .leftJoin("root_quorum_members", "root_quorum_members.organization_id", "organizations.id")
    .select([
      "organizations.policy_version as version",
      "organizations.root_quorum_threshold as threshold",
      "root_quorum_members.user_id as member",
    ])
    .where("organizations.id", "=", v.organizationId),
);

export interface Governance {
  version: number;
  threshold: number;
  rootUserIds: string[];
}

/** Policy version and root quorum of an organization, in one query. */
export async function governanceOf(db: Executor, organizationId: string): Promise<Governance | undefined> {
  const rows = await governanceQuery(db, { organizationId });
  const first = rows[0];
  if (!first) return undefined;
  return {
    version: first.version,
    threshold: first.threshold,
    rootUserIds: rows.flatMap((r) => (r.member === null ? [] : [r.member])),
  };
}

const insertEvaluationQuery = precompiled(
  ["id", "activity_id", "organization_id", "vote_id", "policy_set_id", "outcomes", "outcome", "created_at"] as const,
  (db, v) => db.insertInto("policy_evaluations").values(v as never),
);

export async function insertEvaluation(db: Executor, row: PolicyEvaluationRow): Promise<void> {
  await insertEvaluationQuery(db, row);
}

const insertPolicySetQuery = precompiled(["id", "policy_ids"] as const, (db, v) =>
  db
    .insertInto("policy_sets")
    .values(v as never)
    .onConflict((oc) => oc.column("id").doNothing()),
);

/** Records the ids of a policy set once; evaluation records refer to it by id. */
export async function insertPolicySet(db: Executor, id: string, policyIds: readonly string[]): Promise<void> {
  await insertPolicySetQuery(db, { id, policy_ids: JSON.stringify(policyIds) });
}

/** One character per per-policy outcome in a stored record. */
export const OUTCOME_CODES: Readonly<Record<string, string>> = {
  OUTCOME_ALLOW: "A",
  OUTCOME_DENY_EXPLICIT: "E",
  OUTCOME_DENY_IMPLICIT: "I",
  OUTCOME_REQUIRES_CONSENSUS: "C",
  OUTCOME_REJECTED: "R",
  OUTCOME_ERROR: "X",
  OUTCOME_TIME_INACTIVE: "T",
};
const OUTCOME_OF_CODE = new Map(Object.entries(OUTCOME_CODES).map(([o, c]) => [c, o]));

export type EvaluationRecord = PolicyEvaluationRow & { policy_ids: string | null };

export async function evaluationsOf(db: Executor, activityId: string): Promise<EvaluationRecord[]> {
  return db
    .selectFrom("policy_evaluations")
    .leftJoin("policy_sets", "policy_sets.id", "policy_evaluations.policy_set_id")
    .selectAll("policy_evaluations")
    .select("policy_sets.policy_ids")
    .where("policy_evaluations.activity_id", "=", activityId)
    .orderBy("policy_evaluations.created_at")
    .orderBy("policy_evaluations.id")
    .execute();
}

export function policyView(p: PolicyRow) {
  return {
    policyId: p.id,
    policyName: p.name,
    effect: p.effect,
    condition: p.condition,
    consensus: p.consensus,
    ...(p.time ? { time: p.time } : {}),
    notes: p.notes,
    createdAt: timestampObject(p.created_at),
    updatedAt: timestampObject(p.updated_at),
  };
}

/** The record as the API shows it: each policy's outcome, then the final one without policyId. */
export function evaluationView(r: EvaluationRecord) {
  const ids = r.policy_ids ? (JSON.parse(r.policy_ids) as string[]) : [];
  const perPolicy = ids.map((policyId, i) => ({ policyId, outcome: OUTCOME_OF_CODE.get(r.outcomes[i] ?? "") ?? "OUTCOME_ERROR" }));
  return {
    id: r.id,
    activityId: r.activity_id,
    organizationId: r.organization_id,
    voteId: r.vote_id,
    policyEvaluations: [...perPolicy, { outcome: r.outcome }],
    createdAt: timestampObject(r.created_at),
  };
}
