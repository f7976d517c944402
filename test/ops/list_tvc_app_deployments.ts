import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, notFound, perEngine } from "../helpers/inproc.ts";
import { approvedDeployment, newApp, newDeployment, TVC } from "../helpers/tvc.ts";
import { deleteTvcDeployment } from "../../src/activities/tvc/delete_tvc_deployment.ts";

const OP = "list_tvc_app_deployments";

perEngine(
  OP,
  (h) => {
    it("an app's deployments, oldest first, through the official SDK (getTvcAppDeployments), deleted ones flagged", async () => {
      const org = await h().newOrg("tvc-list-dep");
      const app = await newApp(h(), org);
      const other = await newApp(h(), org);
      const sdk = await h().sdk(org);
      assert.deepEqual((await sdk.getTvcAppDeployments({ appId: app.appId })).tvcDeployments, []);
      const a = await approvedDeployment(h(), org, app);
      const b = await newDeployment(h(), org, app.appId, { replicas: 2 });
      const c = await newDeployment(h(), org, app.appId);
      await newDeployment(h(), org, other.appId);
      completed(
        await h().submit("delete_tvc_deployment", "ACTIVITY_TYPE_DELETE_TVC_DEPLOYMENT", { deploymentId: c.deploymentId }, { as: org }),
        deleteTvcDeployment,
      );
      const { tvcDeployments } = await sdk.getTvcAppDeployments({ appId: app.appId });
      assert.deepEqual(
        tvcDeployments.map((d) => d.id),
        [a.deploymentId, b.deploymentId, c.deploymentId],
      );
      assert.deepEqual(
        tvcDeployments.map((d) => d.delete),
        [false, false, true],
      );
      assert.deepEqual(
        tvcDeployments.map((d) => (d as unknown as { status: string }).status),
        ["approved", "awaiting approvals 0/2", "deleted"],
      );
      assert.equal(tvcDeployments[0]!.manifestApprovals.length, 2);
      assert.equal(tvcDeployments[1]!.manifest.id, b.manifestId);
      assert.equal((tvcDeployments[1] as unknown as { replicas: number }).replicas, 2);
    });

    it("an unknown or foreign app is 404", async () => {
      const org = await h().newOrg("tvc-list-dep-missing");
      const foreign = await newApp(h(), await h().newOrg("tvc-list-dep-foreign"));
      notFound(await h().query(OP, { appId: crypto.randomUUID() }, { as: org }), /no TVC app/);
      notFound(await h().query(OP, { appId: foreign.appId }, { as: org }), /no TVC app/);
    });
  },
  undefined,
  TVC,
);
