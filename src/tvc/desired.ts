// The desired TVC state, read from the database on every reconcile pass: deployments whose
// approvals reached the manifest set's threshold (approved_at set), not deleted, of an app
// that still exists, of a top-level organization, with the app's live flag. The database is the only source: a restarted
// service reads the same list and starts the same replicas.
import type { Db } from "../store/schema.ts";
import type { DeploymentSpec, DesiredDeployment } from "./spec.ts";

export interface DesiredRead {
  desired: DesiredDeployment[];
  /** Rows whose stored spec cannot be run as recorded (never expected; reported, not fatal). */
  invalid: { deploymentId: string; appId: string; reason: string }[];
}

export async function readDesired(db: Db): Promise<DesiredRead> {
  const rows = await db
    .selectFrom("tvc_deployments as d")
    .innerJoin("tvc_apps as a", "a.id", "d.app_id")
    // Only top-level organizations may run TVC (docs/tvc-isolation.md §1): a sub-organization's
    // deployment recorded before that rule never starts.
    .innerJoin("organizations as o", "o.id", "d.organization_id")
    .where("o.parent_id", "is", null)
    .select(["d.id", "d.app_id", "d.organization_id", "d.spec", "d.replicas", "a.live_deployment_id"])
    .where("d.approved_at", "is not", null)
    .where("d.deleted_at", "is", null)
    .orderBy("d.id")
    .execute();
  const out: DesiredRead = { desired: [], invalid: [] };
  for (const r of rows) {
    let spec: DeploymentSpec;
    try {
      spec = parseSpec(r.spec);
    } catch (err) {
      out.invalid.push({ deploymentId: r.id, appId: r.app_id, reason: (err as Error).message });
      continue;
    }
    // The row's replica count is authoritative (the spec records what was asked).
    spec = { ...spec, replicas: Number(r.replicas) };
    out.desired.push({ deploymentId: r.id, appId: r.app_id, organizationId: r.organization_id, spec, live: r.live_deployment_id === r.id });
  }
  return out;
}

function parseSpec(text: string): DeploymentSpec {
  const v = JSON.parse(text) as Partial<DeploymentSpec>;
  if (typeof v !== "object" || v === null) throw new Error("spec is not an object");
  if (typeof v.pivotContainerImageUrl !== "string") throw new Error("spec.pivotContainerImageUrl is missing");
  if (typeof v.pivotPath !== "string") throw new Error("spec.pivotPath is missing");
  if (typeof v.expectedPivotDigest !== "string") throw new Error("spec.expectedPivotDigest is missing");
  if (v.pivotArgs !== undefined && (!Array.isArray(v.pivotArgs) || v.pivotArgs.some((a) => typeof a !== "string"))) {
    throw new Error("spec.pivotArgs must be a list of strings");
  }
  return {
    qosVersion: String(v.qosVersion ?? ""),
    pivotContainerImageUrl: v.pivotContainerImageUrl,
    pivotPath: v.pivotPath,
    pivotArgs: v.pivotArgs ?? [],
    expectedPivotDigest: v.expectedPivotDigest,
    healthCheckType: v.healthCheckType === "TVC_HEALTH_CHECK_TYPE_GRPC" ? "TVC_HEALTH_CHECK_TYPE_GRPC" : "TVC_HEALTH_CHECK_TYPE_HTTP",
    healthCheckPort: Number(v.healthCheckPort ?? 0),
    publicIngressPort: Number(v.publicIngressPort ?? 0),
    replicas: Number(v.replicas ?? 1),
    debugMode: Boolean(v.debugMode),
    nonce: Number(v.nonce ?? 0),
    hasPullSecret: Boolean(v.hasPullSecret),
  };
}
