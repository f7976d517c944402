// Reads and writes of TVC operators, operator sets, apps, deployments and manifest approvals
// (tables in migrations/010_tvc.ts). Uniqueness is the database's: an operator is
// unique by (organization, key), a set by (organization, identity), an app by (organization,
// name) among live apps, an approval by (manifest, operator). Writers that race on an operator
// or a set both end up with the one row (insert … on conflict do nothing, then read it).
import { createHash } from "node:crypto";
import type {
  Executor,
  TvcAppsTable,
  TvcDeploymentsTable,
  TvcManifestApprovalsTable,
  TvcOperatorSetsTable,
  TvcOperatorsTable,
} from "./schema.ts";
import { lockingRead, type LockStrength } from "./locks.ts";
import { newOrderedId } from "./util.ts";

export type OperatorRow = TvcOperatorsTable;
export type OperatorSetRow = TvcOperatorSetsTable;
export type AppRow = TvcAppsTable;
export type DeploymentRow = TvcDeploymentsTable;
export type ApprovalRow = TvcManifestApprovalsTable;

export interface OperatorSetWithMembers extends OperatorSetRow {
  /** In member order. */
  operators: OperatorRow[];
}

/** Operators of the organization among `ids`, by id. */
export async function operatorsById(db: Executor, organizationId: string, ids: readonly string[]): Promise<Map<string, OperatorRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom("tvc_operators")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("id", "in", [...new Set(ids)])
    .execute();
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * The operator of the organization with this (normalised) key: the one inserted now, or the
 * one that already held the key (`created` false). A concurrent inserter of the same key waits
 * on the unique index and then reads the winner's row.
 */
export async function insertOrGetOperator(
  tx: Executor,
  organizationId: string,
  name: string,
  publicKey: string,
  now: number,
): Promise<{ operator: OperatorRow; created: boolean }> {
  const row: OperatorRow = {
    id: newOrderedId(now),
    organization_id: organizationId,
    name,
    public_key: publicKey,
    created_at: now,
    updated_at: now,
  };
  const inserted = await tx
    .insertInto("tvc_operators")
    .values(row)
    .onConflict((oc) => oc.columns(["organization_id", "public_key"]).doNothing())
    .returning("id")
    .executeTakeFirst();
  if (inserted) return { operator: row, created: true };
  const existing = await tx
    .selectFrom("tvc_operators")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("public_key", "=", publicKey)
    .executeTakeFirstOrThrow();
  return { operator: existing, created: false };
}

/** sha256 hex over the set's name, threshold and sorted member ids: equal for identical sets. */
export function setIdentity(name: string, threshold: number, operatorIds: readonly string[]): string {
  return createHash("sha256")
    .update(JSON.stringify([name, threshold, [...operatorIds].sort()]))
    .digest("hex");
}

/** The set with this identity: created now with its members, or the existing one (reused). */
export async function insertOrGetOperatorSet(
  tx: Executor,
  organizationId: string,
  name: string,
  threshold: number,
  operatorIds: readonly string[],
  now: number,
): Promise<{ setId: string; created: boolean }> {
  const identity = setIdentity(name, threshold, operatorIds);
  const id = newOrderedId(now);
  const inserted = await tx
    .insertInto("tvc_operator_sets")
    .values({ id, organization_id: organizationId, name, threshold, identity, created_at: now, updated_at: now })
    .onConflict((oc) => oc.columns(["organization_id", "identity"]).doNothing())
    .returning("id")
    .executeTakeFirst();
  if (!inserted) {
    const existing = await tx
      .selectFrom("tvc_operator_sets")
      .select("id")
      .where("organization_id", "=", organizationId)
      .where("identity", "=", identity)
      .executeTakeFirstOrThrow();
    return { setId: existing.id, created: false };
  }
  await tx
    .insertInto("tvc_operator_set_members")
    .values(operatorIds.map((operator_id, position) => ({ set_id: id, operator_id, position })))
    .execute();
  return { setId: id, created: true };
}

/** Operator sets of the organization with their operators (member order), by id. */
export async function operatorSets(
  db: Executor,
  organizationId: string,
  ids: readonly string[],
): Promise<Map<string, OperatorSetWithMembers>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const sets = await db
    .selectFrom("tvc_operator_sets")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("id", "in", unique)
    .execute();
  if (sets.length === 0) return new Map();
  const members = await db
    .selectFrom("tvc_operator_set_members as m")
    .innerJoin("tvc_operators as o", "o.id", "m.operator_id")
    .select(["m.set_id", "m.position", "o.id", "o.organization_id", "o.name", "o.public_key", "o.created_at", "o.updated_at"])
    .where(
      "m.set_id",
      "in",
      sets.map((s) => s.id),
    )
    .orderBy("m.set_id")
    .orderBy("m.position")
    .execute();
  const out = new Map<string, OperatorSetWithMembers>(sets.map((s) => [s.id, { ...s, operators: [] }]));
  for (const m of members) {
    out.get(m.set_id)!.operators.push({
      id: m.id,
      organization_id: m.organization_id,
      name: m.name,
      public_key: m.public_key,
      created_at: Number(m.created_at),
      updated_at: Number(m.updated_at),
    });
  }
  return out;
}

export async function insertApp(tx: Executor, row: AppRow): Promise<void> {
  await tx.insertInto("tvc_apps").values(row).execute();
}

/** A live (not deleted) app of the organization; locked when `lock` is given (see store/locks.ts). */
export async function findApp(db: Executor, organizationId: string, appId: string, lock?: LockStrength): Promise<AppRow | undefined> {
  const q = db
    .selectFrom("tvc_apps")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("id", "=", appId)
    .where("deleted_at", "is", null);
  return lock ? lockingRead(db, q, lock).executeTakeFirst() : q.executeTakeFirst();
}

/** An app by id, deleted or not (a deleted app's deployments stay readable). */
export async function appById(db: Executor, appId: string): Promise<AppRow | undefined> {
  return db.selectFrom("tvc_apps").selectAll().where("id", "=", appId).executeTakeFirst();
}

/** The organization's live apps, oldest first. */
export async function listApps(db: Executor, organizationId: string): Promise<AppRow[]> {
  return db
    .selectFrom("tvc_apps")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("deleted_at", "is", null)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

export async function setLiveDeployment(tx: Executor, appId: string, deploymentId: string | null, now: number): Promise<void> {
  await tx.updateTable("tvc_apps").set({ live_deployment_id: deploymentId, updated_at: now }).where("id", "=", appId).execute();
}

/** Soft-deletes the app and every deployment of it that is not deleted yet. */
export async function deleteAppAndDeployments(tx: Executor, appId: string, now: number): Promise<void> {
  await tx
    .updateTable("tvc_deployments")
    .set({ deleted_at: now, updated_at: now })
    .where("app_id", "=", appId)
    .where("deleted_at", "is", null)
    .execute();
  await tx.updateTable("tvc_apps").set({ deleted_at: now, live_deployment_id: null, updated_at: now }).where("id", "=", appId).execute();
}

export async function insertDeployment(tx: Executor, row: DeploymentRow): Promise<void> {
  await tx.insertInto("tvc_deployments").values(row).execute();
}

/** A deployment of the organization (deleted ones too: they stay readable), optionally locked. */
export async function findDeployment(
  db: Executor,
  organizationId: string,
  deploymentId: string,
  lock?: LockStrength,
): Promise<DeploymentRow | undefined> {
  const q = db.selectFrom("tvc_deployments").selectAll().where("organization_id", "=", organizationId).where("id", "=", deploymentId);
  return lock ? lockingRead(db, q, lock).executeTakeFirst() : q.executeTakeFirst();
}

export async function findDeploymentByManifest(
  db: Executor,
  organizationId: string,
  manifestId: string,
): Promise<DeploymentRow | undefined> {
  return db
    .selectFrom("tvc_deployments")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("manifest_id", "=", manifestId)
    .executeTakeFirst();
}

/** Deployments of an app, oldest first (deleted ones included: they carry `delete: true`). */
export async function listDeployments(db: Executor, organizationId: string, appId: string): Promise<DeploymentRow[]> {
  return db
    .selectFrom("tvc_deployments")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("app_id", "=", appId)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

export async function markDeployment(
  tx: Executor,
  deploymentId: string,
  set: { approved_at?: number; deleted_at?: number },
  now: number,
): Promise<void> {
  await tx
    .updateTable("tvc_deployments")
    .set({ ...set, updated_at: now })
    .where("id", "=", deploymentId)
    .execute();
}

export async function insertApprovals(tx: Executor, rows: ApprovalRow[]): Promise<void> {
  if (rows.length) await tx.insertInto("tvc_manifest_approvals").values(rows).execute();
}

/** Approvals of the given deployments, oldest first. */
export async function approvalsOf(db: Executor, deploymentIds: readonly string[]): Promise<ApprovalRow[]> {
  if (deploymentIds.length === 0) return [];
  return db
    .selectFrom("tvc_manifest_approvals")
    .selectAll()
    .where("deployment_id", "in", [...deploymentIds])
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}
