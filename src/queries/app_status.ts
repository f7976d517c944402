// get_app_status (docs/tvc.md §7): what the TVC runtime of this process observes for an
// app's deployments (ServiceState.tvc, written by tvc/controller.ts), and the app's live
// deployment as targetedDeploymentId. The app must exist in the organization (404 otherwise);
// an app with nothing running answers 200 with no deployments. Extra field per deployment:
// `refusal`, why the runtime refuses to start it (e.g. the executable's digest). No
// provisioningState: nothing is provisioned into an enclave here.
import { Type } from "@sinclair/typebox";
import { Id, OrganizationId, Timestamp } from "../schemas/common.ts";
import { notFound } from "../errors.ts";
import { timestampObject } from "../store/util.ts";
import { defineQuery } from "./define.ts";

const DeploymentStatus = Type.Object({
  deploymentId: Type.String(),
  readyReplicas: Type.Integer(),
  desiredReplicas: Type.Integer(),
  lastUpdatedTime: Timestamp,
  refusal: Type.Optional(Type.String()),
});

export const getAppStatus = defineQuery({
  op: "get_app_status",
  summary: "Get the runtime status of a TVC app's deployments (ready and desired replicas) and its live deployment.",
  request: Type.Object({ organizationId: OrganizationId, appId: Id("app") }),
  response: Type.Object({
    appStatus: Type.Object({
      appId: Type.String(),
      deployments: Type.Array(DeploymentStatus),
      targetedDeploymentId: Type.String(),
    }),
  }),
  async run({ db, state, organization }, req) {
    const app = await db
      .selectFrom("tvc_apps")
      .select(["id", "live_deployment_id"])
      .where("id", "=", req.appId)
      .where("organization_id", "=", organization.id)
      .executeTakeFirst();
    if (!app) throw notFound(`no TVC app ${req.appId} in organization ${organization.id}`);
    const deployments = state.tvc
      .forApp(app.id)
      .sort((a, b) => a.deploymentId.localeCompare(b.deploymentId))
      .map((o) => ({
        deploymentId: o.deploymentId,
        readyReplicas: o.readyReplicas,
        desiredReplicas: o.desiredReplicas,
        lastUpdatedTime: timestampObject(o.lastUpdatedMs),
        ...(o.refusal ? { refusal: o.refusal } : {}),
      }));
    return { appStatus: { appId: app.id, deployments, targetedDeploymentId: app.live_deployment_id ?? "" } };
  },
});
