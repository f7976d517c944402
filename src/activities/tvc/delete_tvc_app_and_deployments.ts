// delete_tvc_app_and_deployments: the app and all its deployments are marked deleted (the
// runtime stops their replicas); the app leaves list_tvc_apps and its name is free again.
// Its operator sets and operators stay: other apps may use them.
import { Type, type Static } from "@sinclair/typebox";
import { notFound } from "../../errors.ts";
import { Id } from "../../schemas/common.ts";
import { deleteAppAndDeployments, findApp } from "../../store/tvc.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { TVC_SCOPE } from "./gate.ts";

const Params = Type.Object({ appId: Id("app") });

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, now } = ctx;
  const app = await findApp(tx, organization.id, p.appId.toLowerCase(), "exclusive");
  if (!app) throw notFound(`parameters.appId: no TVC app ${p.appId} in organization ${organization.id}`);
  await deleteAppAndDeployments(tx, app.id, now);
  return { appId: app.id };
}

export const deleteTvcAppAndDeployments = defineActivity({
  type: "ACTIVITY_TYPE_DELETE_TVC_APP_AND_DEPLOYMENTS",
  resource: "TVC_APP",
  scope: TVC_SCOPE,
  action: "DELETE",
  kind: "DELETE_TVC_APP_AND_DEPLOYMENTS",
  summary: "Delete a TVC app and all its deployments (their replicas stop).",
  params: Params,
  returns: Type.Object({ appId: Type.String() }),
  execute,
});
