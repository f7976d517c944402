// set_tvc_app_live_deployment (type ACTIVITY_TYPE_UPDATE_TVC_APP_LIVE_DEPLOYMENT; the path and
// the type are named differently upstream, docs/tvc.md §4.2): the ingress routes the app's
// traffic to this deployment. Only an approved, not deleted deployment can be live — it is
// already running (approved deployments run whether live or not), so the switch is instant.
import { Type, type Static } from "@sinclair/typebox";
import { invalid, notFound } from "../../errors.ts";
import { Id } from "../../schemas/common.ts";
import { approvalsOf, findApp, findDeployment, operatorSets, setLiveDeployment } from "../../store/tvc.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { TVC_SCOPE } from "./gate.ts";

const Params = Type.Object({ deploymentId: Id("deployment") });
const FIELD = "parameters.deploymentId";

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, now } = ctx;
  const deploymentId = p.deploymentId.toLowerCase();
  const found = await findDeployment(tx, organization.id, deploymentId);
  const app = found && (await findApp(tx, organization.id, found.app_id, "exclusive"));
  if (!found || !app) throw notFound(`${FIELD}: no TVC deployment ${p.deploymentId} in organization ${organization.id}`);
  const deployment = (await findDeployment(tx, organization.id, deploymentId))!;
  if (deployment.deleted_at !== null)
    throw invalid(`${FIELD}: deployment ${deploymentId} is deleted`, [{ field: FIELD, description: "the deployment is deleted" }]);
  if (deployment.approved_at === null) {
    const set = (await operatorSets(tx, organization.id, [app.manifest_set_id])).get(app.manifest_set_id)!;
    const n = (await approvalsOf(tx, [deploymentId])).length;
    throw invalid(
      `${FIELD}: deployment ${deploymentId} is awaiting approvals (${n}/${set.threshold}): only an approved deployment can be live`,
      [{ field: FIELD, description: "the deployment's manifest is not approved yet" }],
    );
  }
  if (app.live_deployment_id !== deploymentId) await setLiveDeployment(tx, app.id, deploymentId, now);
  return {};
}

export const setTvcAppLiveDeployment = defineActivity({
  type: "ACTIVITY_TYPE_UPDATE_TVC_APP_LIVE_DEPLOYMENT",
  op: "set_tvc_app_live_deployment",
  resource: "TVC_APP",
  scope: TVC_SCOPE,
  action: "UPDATE",
  kind: "UPDATE_TVC_APP_LIVE_DEPLOYMENT",
  summary: "Make an approved deployment its app's live deployment (the one the app's ingress routes to).",
  params: Params,
  returns: Type.Object({}),
  execute,
});
