import { it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, completed, forbidden, invalidRequest, notFound, perEngine, type Json } from "../helpers/inproc.ts";
import { approve, approvedDeployment, manifestBytes, newApp, newDeployment, sign, TVC } from "../helpers/tvc.ts";
import { createTvcManifestApprovals } from "../../src/activities/tvc/create_tvc_manifest_approvals.ts";
import { deleteTvcDeployment } from "../../src/activities/tvc/delete_tvc_deployment.ts";
import { setTvcAppLiveDeployment } from "../../src/activities/tvc/set_tvc_app_live_deployment.ts";

const OP = "set_tvc_app_live_deployment";
const TYPE = "ACTIVITY_TYPE_UPDATE_TVC_APP_LIVE_DEPLOYMENT";

perEngine(
  OP,
  (h) => {
    const live = async (org: Json, appId: string) =>
      (await h().query("get_tvc_app", { tvcAppId: appId }, { as: org as never })).json.tvcApp.liveDeploymentId as string | undefined;

    it("switches the live deployment between approved ones, through the official SDK (updateTvcAppLiveDeployment)", async () => {
      const org = await h().newOrg("tvc-live");
      const app = await newApp(h(), org);
      const one = await approvedDeployment(h(), org, app);
      const two = await approvedDeployment(h(), org, app);
      assert.equal(await live(org, app.appId), one.deploymentId, "the first approved went live by itself");
      const sdk = await h().sdk(org);
      const r = await sdk.updateTvcAppLiveDeployment({ deploymentId: two.deploymentId });
      assert.equal(r.activity.status, "ACTIVITY_STATUS_COMPLETED");
      assert.deepEqual(r.activity.result.updateTvcAppLiveDeploymentResult, {});
      assert.equal(await live(org, app.appId), two.deploymentId);
      completed(await h().submit(OP, TYPE, { deploymentId: one.deploymentId }, { as: org }), setTvcAppLiveDeployment);
      assert.equal(await live(org, app.appId), one.deploymentId);
      // Making the live one live again is a no-op success.
      completed(await h().submit(OP, TYPE, { deploymentId: one.deploymentId }, { as: org }), setTvcAppLiveDeployment);
    });

    it("an unapproved deployment is 400 (saying how far its approvals are), a deleted one 400, an unknown or foreign one 404", async () => {
      const org = await h().newOrg("tvc-live-invalid");
      const app = await newApp(h(), org);
      const pending = await newDeployment(h(), org, app.appId);
      const bytes = await manifestBytes(h(), org, pending.deploymentId);
      completed(
        await approve(
          h(),
          pending.manifestId,
          [{ operatorId: app.manifestSetOperatorIds[0]!, signature: sign(app.operators[0]!, bytes) }],
          org,
        ),
        createTvcManifestApprovals,
      );
      invalidRequest(await h().submit(OP, TYPE, { deploymentId: pending.deploymentId }, { as: org }), /awaiting approvals \(1\/2\)/, [
        "parameters.deploymentId",
      ]);
      const gone = await approvedDeployment(h(), org, app);
      completed(
        await h().submit("delete_tvc_deployment", "ACTIVITY_TYPE_DELETE_TVC_DEPLOYMENT", { deploymentId: gone.deploymentId }, { as: org }),
        deleteTvcDeployment,
      );
      invalidRequest(await h().submit(OP, TYPE, { deploymentId: gone.deploymentId }, { as: org }), /deleted/, ["parameters.deploymentId"]);
      notFound(await h().submit(OP, TYPE, { deploymentId: crypto.randomUUID() }, { as: org }), /no TVC deployment/);
      const otherOrg = await h().newOrg("tvc-live-foreign");
      const foreign = await approvedDeployment(h(), otherOrg, await newApp(h(), otherOrg));
      notFound(await h().submit(OP, TYPE, { deploymentId: foreign.deploymentId }, { as: org }), /no TVC deployment/);
      invalidRequest(await h().submit(OP, TYPE, { deploymentId: "x" }, { as: org }), /UUID/, ["parameters.deploymentId"]);
      assert.equal(await live(org, app.appId), undefined);
    });

    it("policies govern it (TVC_APP / UPDATE / UPDATE_TVC_APP_LIVE_DEPLOYMENT)", async () => {
      const org = await h().newOrg("tvc-live-policy");
      const [member] = await addUsersWithKeys(h(), 1, org);
      const app = await newApp(h(), org);
      await approvedDeployment(h(), org, app);
      const two = await approvedDeployment(h(), org, app);
      forbidden(await h().submit(OP, TYPE, { deploymentId: two.deploymentId }, { as: member! }));
      completed(
        await h().submit(
          "create_policy",
          "ACTIVITY_TYPE_CREATE_POLICY_V3",
          {
            policyName: "live",
            effect: "EFFECT_ALLOW",
            condition: "activity.resource == 'TVC_APP' && activity.action == 'UPDATE' && activity.kind == 'UPDATE_TVC_APP_LIVE_DEPLOYMENT'",
            consensus: "",
            notes: "",
          },
          { as: org },
        ),
        "createPolicyResult",
      );
      completed(await h().submit(OP, TYPE, { deploymentId: two.deploymentId }, { as: member! }), setTvcAppLiveDeployment);
      assert.equal(await live(org, app.appId), two.deploymentId);
    });
  },
  undefined,
  TVC,
);
