// create_tvc_manifest_approvals (docs/tvc.md §4): operators of the deployment's manifest set approve
// its manifest by signing its exact bytes (DER hex ECDSA P-256 / SHA-256, the bytes being what
// get_tvc_deployment returns base64 in tvcDeployment.manifest.manifest). All or nothing: one
// approval that is not by an operator of the set, does not verify, or repeats an operator's
// approval refuses the whole request and records none. When the distinct approvals reach the
// set's threshold the deployment is approved (desired to run), and becomes the app's live
// deployment if the app has none — in the same transaction.
import { Type, type Static } from "@sinclair/typebox";
import { alreadyExists, invalid, notFound } from "../../errors.ts";
import { Id, maxItems } from "../../schemas/common.ts";
import {
  approvalsOf,
  findApp,
  findDeployment,
  findDeploymentByManifest,
  insertApprovals,
  markDeployment,
  operatorSets,
  setLiveDeployment,
} from "../../store/tvc.ts";
import { isUniqueViolation, newOrderedId } from "../../store/util.ts";
import { derSignatureProblem, verifyOperatorSignature } from "../../tvc/operator-keys.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { TVC_SCOPE } from "./gate.ts";
import { MAX_SET_OPERATORS } from "./fields.ts";

const Params = Type.Object({
  manifestId: Id("manifest"),
  approvals: maxItems(
    Type.Object({
      operatorId: Id("operator"),
      signature: Type.String({ minLength: 1, maxLength: 200, errorMessage: "signature must be a DER ECDSA signature in hex" }),
    }),
    "approvals",
    MAX_SET_OPERATORS,
    1,
  ),
});
type P = Static<typeof Params>;

const field = (i: number, name: string) => `parameters.approvals[${i}].${name}`;

function check(p: P): void {
  const seen = new Map<string, number>();
  p.approvals.forEach((a, i) => {
    const problem = derSignatureProblem(a.signature);
    if (problem) throw invalid(`${field(i, "signature")}: ${problem}`, [{ field: field(i, "signature"), description: problem }]);
    const id = a.operatorId.toLowerCase();
    const first = seen.get(id);
    if (first !== undefined) {
      throw invalid(`${field(i, "operatorId")}: a second approval by the operator of approvals[${first}]`, [
        { field: field(i, "operatorId"), description: "one approval per operator" },
      ]);
    }
    seen.set(id, i);
  });
}

async function execute(ctx: ExecuteContext, p: P) {
  const { tx, organization, now } = ctx;
  const manifestId = p.manifestId.toLowerCase();
  const found = await findDeploymentByManifest(tx, organization.id, manifestId);
  if (!found) throw notFound(`parameters.manifestId: no TVC manifest ${p.manifestId} in organization ${organization.id}`);
  // Lock order: the app, then its deployment. Approvals of one deployment queue here, so the
  // count below sees every approval committed before ours (threshold never missed by a race).
  const app = await findApp(tx, organization.id, found.app_id, "exclusive");
  const deployment = await findDeployment(tx, organization.id, found.id, "exclusive");
  if (!app || !deployment || deployment.deleted_at !== null) {
    throw invalid(`parameters.manifestId: deployment ${found.id} of this manifest is deleted`, [
      { field: "parameters.manifestId", description: "the deployment is deleted" },
    ]);
  }
  const set = (await operatorSets(tx, organization.id, [app.manifest_set_id])).get(app.manifest_set_id)!;
  const members = new Map(set.operators.map((o) => [o.id, o]));
  const bytes = Buffer.from(deployment.manifest, "base64");
  const existing = await approvalsOf(tx, [deployment.id]);
  const approvedBy = new Set(existing.map((a) => a.operator_id));
  const rows = p.approvals.map((a, i) => {
    const operatorId = a.operatorId.toLowerCase();
    const operator = members.get(operatorId);
    if (!operator) {
      throw invalid(`${field(i, "operatorId")}: ${a.operatorId} is not an operator of the app's manifest set ${set.id}`, [
        { field: field(i, "operatorId"), description: "must be an operator of the manifest set" },
      ]);
    }
    if (!verifyOperatorSignature(operator.public_key, bytes, a.signature)) {
      throw invalid(`${field(i, "signature")}: does not verify with operator ${operatorId}'s key over the manifest's bytes`, [
        { field: field(i, "signature"), description: "must be the operator's DER ECDSA P-256/SHA-256 signature over the manifest bytes" },
      ]);
    }
    if (approvedBy.has(operatorId))
      throw alreadyExists(`${field(i, "operatorId")}: operator ${operatorId} already approved manifest ${manifestId}`);
    return {
      id: newOrderedId(now),
      organization_id: organization.id,
      deployment_id: deployment.id,
      manifest_id: manifestId,
      operator_id: operatorId,
      signature: a.signature.toLowerCase(),
      created_at: now,
    };
  });
  try {
    await insertApprovals(tx, rows);
  } catch (err) {
    if (isUniqueViolation(err, "tvc_manifest_approvals"))
      throw alreadyExists(`parameters.approvals: an operator already approved manifest ${manifestId}`);
    throw err;
  }
  // Only members count: approvals are refused from anyone else, and sets never change.
  const distinct = new Set([...approvedBy, ...rows.map((r) => r.operator_id)].filter((id) => members.has(id)));
  if (deployment.approved_at === null && distinct.size >= set.threshold) {
    await markDeployment(tx, deployment.id, { approved_at: now }, now);
    if (app.live_deployment_id === null) await setLiveDeployment(tx, app.id, deployment.id, now);
  }
  return { approvalIds: rows.map((r) => r.id) };
}

export const createTvcManifestApprovals = defineActivity({
  type: "ACTIVITY_TYPE_CREATE_TVC_MANIFEST_APPROVALS",
  resource: "TVC_DEPLOYMENT",
  scope: TVC_SCOPE,
  action: "UPDATE",
  kind: "CREATE_TVC_MANIFEST_APPROVALS",
  summary:
    "Record manifest-set operators' signatures over a deployment's manifest; at the set's threshold the deployment runs (and goes live if the app has no live deployment).",
  params: Params,
  returns: Type.Object({ approvalIds: Type.Array(Type.String()) }),
  check,
  execute,
});
