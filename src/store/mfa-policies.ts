// MFA policies and the requirements of waiting activities, in the store (migration 021,
// docs/mfa.md §1, §3).
import type { Executor, MfaPoliciesTable, MfaRequirementsTable } from "./schema.ts";
import { precompiled } from "./precompiled.ts";
import { timestampObject } from "./util.ts";
import { methodView, type Proof, type Step } from "../schemas/mfa.ts";

export type MfaPolicyRow = MfaPoliciesTable;
export type MfaRequirementRow = MfaRequirementsTable;

/** At most this many MFA policies per user, and per organization (docs/mfa.md §1.2). */
export const MAX_MFA_POLICIES_PER_USER = 10;
export const MAX_MFA_POLICIES_PER_ORGANIZATION = 500;

/** A user's policies in evaluation order: `order`, then creation. */
export function mfaPoliciesOf(db: Executor, organizationId: string, userId: string): Promise<MfaPolicyRow[]> {
  return db
    .selectFrom("mfa_policies")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("user_id", "=", userId)
    .orderBy("position")
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

export function findMfaPolicy(db: Executor, organizationId: string, userId: string, id: string): Promise<MfaPolicyRow | undefined> {
  return db
    .selectFrom("mfa_policies")
    .selectAll()
    .where("id", "=", id)
    .where("organization_id", "=", organizationId)
    .where("user_id", "=", userId)
    .executeTakeFirst();
}

export async function countMfaPolicies(db: Executor, organizationId: string, userId?: string): Promise<number> {
  let q = db
    .selectFrom("mfa_policies")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .where("organization_id", "=", organizationId);
  if (userId !== undefined) q = q.where("user_id", "=", userId);
  const row = await q.executeTakeFirstOrThrow();
  return Number(row.n);
}

export const stepsOf = (json: string): Step[] => JSON.parse(json) as Step[];
export const proofsOf = (json: string): (Proof | null)[] => JSON.parse(json) as (Proof | null)[];

/** v1MfaPolicy. */
export function mfaPolicyView(r: MfaPolicyRow) {
  return {
    mfaPolicyId: r.id,
    mfaPolicyName: r.name,
    condition: r.condition,
    requiredAuthenticationMethods: stepsOf(r.required).map((s) => ({ any: s.any.map(methodView) })),
    order: Number(r.position),
    ...(r.notes !== "" ? { notes: r.notes } : {}),
    createdAt: timestampObject(Number(r.created_at)),
    updatedAt: timestampObject(Number(r.updated_at)),
  };
}

export function requirementsOf(db: Executor, activityId: string, userId?: string): Promise<MfaRequirementRow[]> {
  let q = db.selectFrom("mfa_requirements").selectAll().where("activity_id", "=", activityId);
  if (userId !== undefined) q = q.where("user_id", "=", userId);
  return q.orderBy("created_at").orderBy("user_id").execute();
}

/** v1MfaStatus. */
export function mfaStatusView(r: MfaRequirementRow) {
  const proofs = proofsOf(r.satisfied);
  return {
    mfaPolicyId: r.mfa_policy_id,
    userId: r.user_id,
    satisfied: proofs.every((p) => p !== null),
    satisfiedMethods: proofs.filter((p): p is Proof => p !== null).map(methodView),
    requiredMethods: stepsOf(r.required).map((s) => ({ any: s.any.map(methodView) })),
  };
}

// One user is the common case (every activity's answer shows its voter): compiled once per dialect.
const mfaPoliciesOfUser = precompiled(["userId"], (db, v) =>
  db.selectFrom("mfa_policies").selectAll().where("user_id", "=", v.userId).orderBy("position").orderBy("created_at").orderBy("id"),
);

/** The MFA policies of each user (every id a key), in evaluation order: what v1User.mfaPolicies lists. */
export async function mfaPoliciesByUser(db: Executor, userIds: readonly string[]): Promise<Map<string, MfaPolicyRow[]>> {
  const out = new Map<string, MfaPolicyRow[]>(userIds.map((id) => [id, []]));
  if (userIds.length === 0) return out;
  const rows =
    userIds.length === 1
      ? await mfaPoliciesOfUser(db, { userId: userIds[0] })
      : await db
          .selectFrom("mfa_policies")
          .selectAll()
          .where("user_id", "in", userIds)
          .orderBy("position")
          .orderBy("created_at")
          .orderBy("id")
          .execute();
  for (const r of rows) out.get(r.user_id)?.push(r);
  return out;
}
