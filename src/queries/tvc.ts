// TVC queries (docs/tvc.md §7): list_tvc_apps, get_tvc_app (by `tvcAppId`),
// list_tvc_app_deployments, get_tvc_deployment. Deleted apps are gone; deleted deployments of
// a live app stay listed with `delete: true`. get_tvc_deployment also shows the runtime's
// refusal (e.g. a digest mismatch) from what this process's runtime observed.
import { Type } from "@sinclair/typebox";
import { notFound } from "../errors.ts";
import { Id, OrganizationId } from "../schemas/common.ts";
import { appById, approvalsOf, findApp, findDeployment, listApps, listDeployments, operatorSets } from "../store/tvc.ts";
import { appView, deploymentView, TvcAppSchema, TvcDeploymentSchema } from "../views/tvc.ts";
import type { Executor } from "../store/schema.ts";
import { defineQuery } from "./define.ts";

export const listTvcApps = defineQuery({
  op: "list_tvc_apps",
  summary: "List the organization's TVC apps, oldest first.",
  request: Type.Object({ organizationId: OrganizationId }),
  response: Type.Object({ tvcApps: Type.Array(TvcAppSchema) }),
  async run({ db, organization, state }) {
    const apps = await listApps(db, organization.id);
    const sets = await operatorSets(
      db,
      organization.id,
      apps.flatMap((a) => [a.manifest_set_id, a.share_set_id]),
    );
    return { tvcApps: apps.map((a) => appView(a, sets, state.tvc.ingressAddress)) };
  },
});

/** The organization's app by id (any casing), or 404. */
async function requireApp(db: Executor, organizationId: string, appId: string) {
  const app = await findApp(db, organizationId, appId.toLowerCase());
  if (!app) throw notFound(`no TVC app ${appId} in organization ${organizationId}`);
  return app;
}

/** The app's manifest and share sets, with their operators. */
const setsOf = (db: Executor, app: { organization_id: string; manifest_set_id: string; share_set_id: string }) =>
  operatorSets(db, app.organization_id, [app.manifest_set_id, app.share_set_id]);

export const getTvcApp = defineQuery({
  op: "get_tvc_app",
  summary: "Get a TVC app with its operator sets.",
  request: Type.Object({ organizationId: OrganizationId, tvcAppId: Id("TVC app") }),
  response: Type.Object({ tvcApp: TvcAppSchema }),
  async run({ db, organization, state }, req) {
    const app = await requireApp(db, organization.id, req.tvcAppId);
    const sets = await setsOf(db, app);
    return { tvcApp: appView(app, sets, state.tvc.ingressAddress) };
  },
});

export const listTvcAppDeployments = defineQuery({
  op: "list_tvc_app_deployments",
  summary: "List a TVC app's deployments, oldest first (deleted ones with delete: true).",
  request: Type.Object({ organizationId: OrganizationId, appId: Id("TVC app") }),
  response: Type.Object({ tvcDeployments: Type.Array(TvcDeploymentSchema) }),
  async run({ db, organization, state }, req) {
    const app = await requireApp(db, organization.id, req.appId);
    const deployments = await listDeployments(db, organization.id, app.id);
    const sets = await setsOf(db, app);
    const approvals = await approvalsOf(
      db,
      deployments.map((d) => d.id),
    );
    return { tvcDeployments: deployments.map((d) => deploymentView(d, app, sets, approvals, state.tvc.get(d.id))) };
  },
});

export const getTvcDeployment = defineQuery({
  op: "get_tvc_deployment",
  summary: "Get a TVC deployment: its manifest (the bytes operators sign, base64), approvals, container and status.",
  request: Type.Object({ organizationId: OrganizationId, deploymentId: Id("TVC deployment") }),
  response: Type.Object({ tvcDeployment: TvcDeploymentSchema }),
  async run({ db, organization, state }, req) {
    const d = await findDeployment(db, organization.id, req.deploymentId.toLowerCase());
    // The app row stays when deleted (soft), so a deleted deployment remains readable.
    const app = d && (await appById(db, d.app_id));
    if (!d || !app) throw notFound(`no TVC deployment ${req.deploymentId} in organization ${organization.id}`);
    const sets = await setsOf(db, app);
    const approvals = await approvalsOf(db, [d.id]);
    return { tvcDeployment: deploymentView(d, app, sets, approvals, state.tvc.get(d.id)) };
  },
});
