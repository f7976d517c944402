// delete_tvc_deployment: the deployment is marked deleted (it stays readable, with
// `delete: true`) and the runtime stops its replicas; if it was live, the app has no live
// deployment until another is made live or approved.
import { Type, type Static } from "@sinclair/typebox";
import { notFound } from "../../errors.ts";
import { Id } from "../../schemas/common.ts";
import { findApp, findDeployment, markDeployment, setLiveDeployment } from "../../store/tvc.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { TVC_SCOPE } from "./gate.ts";

const Params = Type.Object({ deploymentId: Id("deployment") });

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, now } = ctx;
  const deploymentId = p.deploymentId.toLowerCase();
  const found = await findDeployment(tx, organization.id, deploymentId);
  const app = found && (await findApp(tx, organization.id, found.app_id, "exclusive"));
  const deployment = app && (await findDeployment(tx, organization.id, deploymentId, "exclusive"));
  if (!deployment || deployment.deleted_at !== null)
    throw notFound(
      `parameters.deploymentId: no TVC deployment ${p.deploymentId} in organization ${organization.id} (or it is deleted already)`,
    );
  await markDeployment(tx, deploymentId, { deleted_at: now }, now);
  if (app.live_deployment_id === deploymentId) await setLiveDeployment(tx, app.id, null, now);
  return { deploymentId };
}

export const deleteTvcDeployment = defineActivity({
  type: "ACTIVITY_TYPE_DELETE_TVC_DEPLOYMENT",
  resource: "TVC_DEPLOYMENT",
  scope: TVC_SCOPE,
  action: "DELETE",
  kind: "DELETE_TVC_DEPLOYMENT",
  summary: "Delete a TVC deployment: its replicas stop; if it was live, the app has no live deployment.",
  params: Params,
  returns: Type.Object({ deploymentId: Type.String() }),
  execute,
});
