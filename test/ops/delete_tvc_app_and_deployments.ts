import { it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, completed, forbidden, notFound, perEngine, type Json } from "../helpers/inproc.ts";
import { approvedDeployment, createApp, getDeployment, newApp, newDeployment, quorumKey, TVC, imageUrl } from "../helpers/tvc.ts";
import { createTvcApp } from "../../src/activities/tvc/create_tvc_app.ts";
import { deleteTvcAppAndDeployments } from "../../src/activities/tvc/delete_tvc_app_and_deployments.ts";

const OP = "delete_tvc_app_and_deployments";
const TYPE = "ACTIVITY_TYPE_DELETE_TVC_APP_AND_DEPLOYMENTS";

perEngine(
  OP,
  (h) => {
    it("through the official SDK: the app leaves the lists, every deployment is deleted, the name is free, the sets stay reusable", async () => {
      const org = await h().newOrg("tvc-del-app");
      const app = await newApp(h(), org, { name: "doomed" });
      const keep = await newApp(h(), org, { name: "kept" });
      const live = await approvedDeployment(h(), org, app);
      const pending = await newDeployment(h(), org, app.appId);
      const sdk = await h().sdk(org);
      assert.equal((await sdk.deleteTvcAppAndDeployments({ appId: app.appId })).appId, app.appId);
      const apps = (await h().query("list_tvc_apps", {}, { as: org })).json.tvcApps as Json[];
      assert.deepEqual(
        apps.map((a) => a.id),
        [keep.appId],
      );
      notFound(await h().query("get_tvc_app", { tvcAppId: app.appId }, { as: org }), /no TVC app/);
      notFound(await h().query("list_tvc_app_deployments", { appId: app.appId }, { as: org }), /no TVC app/);
      for (const d of [live, pending]) assert.equal((await getDeployment(h(), org, d.deploymentId)).status, "deleted");
      const rows = await h().service.store.db.selectFrom("tvc_deployments").select("deleted_at").where("app_id", "=", app.appId).execute();
      assert.ok(rows.length === 2 && rows.every((r) => r.deleted_at !== null));
      // No new deployment for it; a twice-deleted app is 404.
      notFound(
        await h().submit(
          "create_tvc_deployment",
          "ACTIVITY_TYPE_CREATE_TVC_DEPLOYMENT",
          {
            appId: app.appId,
            qosVersion: "1",
            pivotContainerImageUrl: imageUrl("a"),
            pivotPath: "b",
            pivotArgs: [],
            expectedPivotDigest: "0".repeat(64),
            healthCheckType: "TVC_HEALTH_CHECK_TYPE_HTTP",
            healthCheckPort: 1,
            publicIngressPort: 1,
          },
          { as: org },
        ),
      );
      notFound(await h().submit(OP, TYPE, { appId: app.appId }, { as: org }), /no TVC app/);
      // The name is free again; the old sets are reused by id.
      const again = completed(
        await createApp(
          h(),
          { name: "doomed", quorumPublicKey: quorumKey(), manifestSetId: app.manifestSetId, shareSetId: app.shareSetId },
          org,
        ),
        createTvcApp,
      );
      assert.equal(again.manifestSetId, app.manifestSetId);
      assert.equal((await getDeployment(h(), org, (await newDeployment(h(), org, keep.appId)).deploymentId)).delete, false);
    });

    it("an unknown or foreign app is 404; policies govern it (TVC_APP / DELETE)", async () => {
      const org = await h().newOrg("tvc-del-app-policy");
      notFound(await h().submit(OP, TYPE, { appId: crypto.randomUUID() }, { as: org }), /no TVC app/);
      const otherOrg = await h().newOrg("tvc-del-app-foreign");
      const foreign = await newApp(h(), otherOrg);
      notFound(await h().submit(OP, TYPE, { appId: foreign.appId }, { as: org }), /no TVC app/);
      const [member] = await addUsersWithKeys(h(), 1, org);
      const app = await newApp(h(), org);
      forbidden(await h().submit(OP, TYPE, { appId: app.appId }, { as: member! }));
      completed(
        await h().submit(
          "create_policy",
          "ACTIVITY_TYPE_CREATE_POLICY_V3",
          {
            policyName: "del app",
            effect: "EFFECT_ALLOW",
            condition: "activity.resource == 'TVC_APP' && activity.action == 'DELETE' && activity.kind == 'DELETE_TVC_APP_AND_DEPLOYMENTS'",
            consensus: "",
            notes: "",
          },
          { as: org },
        ),
        "createPolicyResult",
      );
      completed(await h().submit(OP, TYPE, { appId: app.appId }, { as: member! }), deleteTvcAppAndDeployments);
    });
  },
  undefined,
  TVC,
);
