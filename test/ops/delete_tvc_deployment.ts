import { it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, completed, forbidden, notFound, perEngine } from "../helpers/inproc.ts";
import { approvedDeployment, getDeployment, newApp, newDeployment, TVC } from "../helpers/tvc.ts";
import { deleteTvcDeployment } from "../../src/activities/tvc/delete_tvc_deployment.ts";

const OP = "delete_tvc_deployment";
const TYPE = "ACTIVITY_TYPE_DELETE_TVC_DEPLOYMENT";

perEngine(
  OP,
  (h) => {
    it("soft-deletes through the official SDK: still readable with delete: true, and a live one leaves the app without a live deployment", async () => {
      const org = await h().newOrg("tvc-del");
      const app = await newApp(h(), org);
      const liveOne = await approvedDeployment(h(), org, app);
      const other = await approvedDeployment(h(), org, app);
      const sdk = await h().sdk(org);
      const r = await sdk.deleteTvcDeployment({ deploymentId: other.deploymentId });
      assert.equal(r.deploymentId, other.deploymentId);
      let tvcApp = (await h().query("get_tvc_app", { tvcAppId: app.appId }, { as: org })).json.tvcApp;
      assert.equal(tvcApp.liveDeploymentId, liveOne.deploymentId, "deleting a non-live deployment leaves the live one");
      const gone = await getDeployment(h(), org, other.deploymentId);
      assert.equal(gone.delete, true);
      assert.equal(gone.status, "deleted");
      const row = await h()
        .service.store.db.selectFrom("tvc_deployments")
        .select(["deleted_at", "approved_at"])
        .where("id", "=", other.deploymentId)
        .executeTakeFirstOrThrow();
      assert.ok(row.deleted_at !== null && row.approved_at !== null);

      completed(await h().submit(OP, TYPE, { deploymentId: liveOne.deploymentId }, { as: org }), deleteTvcDeployment);
      tvcApp = (await h().query("get_tvc_app", { tvcAppId: app.appId }, { as: org })).json.tvcApp;
      assert.equal(tvcApp.liveDeploymentId, undefined);
      const list = (await h().query("list_tvc_app_deployments", { appId: app.appId }, { as: org })).json.tvcDeployments;
      assert.deepEqual(
        list.map((d: { delete: boolean }) => d.delete),
        [true, true],
      );
      // A pending one can be deleted too.
      const pending = await newDeployment(h(), org, app.appId);
      completed(await h().submit(OP, TYPE, { deploymentId: pending.deploymentId }, { as: org }), deleteTvcDeployment);
    });

    it("a deleted, unknown or foreign deployment is 404", async () => {
      const org = await h().newOrg("tvc-del-missing");
      const app = await newApp(h(), org);
      const d = await newDeployment(h(), org, app.appId);
      completed(await h().submit(OP, TYPE, { deploymentId: d.deploymentId }, { as: org }), deleteTvcDeployment);
      notFound(await h().submit(OP, TYPE, { deploymentId: d.deploymentId }, { as: org }), /deleted already/);
      notFound(await h().submit(OP, TYPE, { deploymentId: crypto.randomUUID() }, { as: org }), /no TVC deployment/);
      const otherOrg = await h().newOrg("tvc-del-foreign");
      const foreign = await newDeployment(h(), otherOrg, (await newApp(h(), otherOrg)).appId);
      notFound(await h().submit(OP, TYPE, { deploymentId: foreign.deploymentId }, { as: org }), /no TVC deployment/);
      assert.equal((await getDeployment(h(), otherOrg, foreign.deploymentId)).delete, false);
    });

    it("policies govern it (TVC_DEPLOYMENT / DELETE)", async () => {
      const org = await h().newOrg("tvc-del-policy");
      const [member] = await addUsersWithKeys(h(), 1, org);
      const d = await newDeployment(h(), org, (await newApp(h(), org)).appId);
      forbidden(await h().submit(OP, TYPE, { deploymentId: d.deploymentId }, { as: member! }));
      completed(
        await h().submit(
          "create_policy",
          "ACTIVITY_TYPE_CREATE_POLICY_V3",
          {
            policyName: "del",
            effect: "EFFECT_ALLOW",
            condition: "activity.resource == 'TVC_DEPLOYMENT' && activity.action == 'DELETE'",
            consensus: "",
            notes: "",
          },
          { as: org },
        ),
        "createPolicyResult",
      );
      completed(await h().submit(OP, TYPE, { deploymentId: d.deploymentId }, { as: member! }), deleteTvcDeployment);
    });
  },
  undefined,
  TVC,
);
