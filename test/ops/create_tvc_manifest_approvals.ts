import { it } from "node:test";
import assert from "node:assert/strict";
import {
  addUsersWithKeys,
  completed,
  conflict,
  forbidden,
  invalidRequest,
  notFound,
  perEngine,
  UUID,
  type Json,
  type Res,
} from "../helpers/inproc.ts";
import { approve, getDeployment, manifestBytes, newApp, newDeployment, newOperators, sign, TVC } from "../helpers/tvc.ts";
import { signP256 } from "../../src/crypto/p256.ts";
import { createTvcManifestApprovals } from "../../src/activities/tvc/create_tvc_manifest_approvals.ts";
import { deleteTvcDeployment } from "../../src/activities/tvc/delete_tvc_deployment.ts";

const OP = "create_tvc_manifest_approvals";

perEngine(
  OP,
  (h) => {
    it("2-of-3: one approval is not enough; forged, foreign, raw, other-bytes and repeated ones count for nothing; the second makes it approved and live", async () => {
      const org = await h().newOrg("tvc-approve");
      const app = await newApp(h(), org);
      const [a, b, c] = app.operators as [(typeof app.operators)[0], (typeof app.operators)[0], (typeof app.operators)[0]];
      const [ida, idb, idc] = app.manifestSetOperatorIds as [string, string, string];
      const d = await newDeployment(h(), org, app.appId);
      const bytes = await manifestBytes(h(), org, d.deploymentId);
      const sdk = await h().sdk(org);

      const first = await sdk.createTvcManifestApprovals({
        manifestId: d.manifestId,
        approvals: [{ operatorId: ida, signature: sign(a, bytes) }],
      });
      assert.equal(first.approvalIds.length, 1);
      assert.match(first.approvalIds[0]!, UUID);
      let dep = await getDeployment(h(), org, d.deploymentId);
      assert.equal(dep.status, "awaiting approvals 1/2");
      assert.equal((await h().query("get_tvc_app", { tvcAppId: app.appId }, { as: org })).json.tvcApp.liveDeploymentId, undefined);

      const [stranger] = newOperators(1);
      const other = await newDeployment(h(), org, app.appId);
      const otherBytes = await manifestBytes(h(), org, other.deploymentId);
      const shareOperator = (await h().query("get_tvc_app", { tvcAppId: app.appId }, { as: org })).json.tvcApp.shareSet.operators[0].id;
      const refused: [string, Json[], (r: Res) => void][] = [
        [
          "signed by a key not the operator's",
          [{ operatorId: idb, signature: sign(stranger!, bytes) }],
          (r) => invalidRequest(r, /does not verify/, ["parameters.approvals[0].signature"]),
        ],
        [
          "over another manifest's bytes",
          [{ operatorId: idb, signature: sign(b, otherBytes) }],
          (r) => invalidRequest(r, /does not verify/, ["parameters.approvals[0].signature"]),
        ],
        [
          "raw r||s, not DER",
          [{ operatorId: idb, signature: signP256(b.key, bytes, "raw").toString("hex") }],
          (r) => invalidRequest(r, /DER/, ["parameters.approvals[0].signature"]),
        ],
        ["not hex", [{ operatorId: idb, signature: "zz" }], (r) => invalidRequest(r, /hex/, ["parameters.approvals[0].signature"])],
        [
          "a share-set operator",
          [{ operatorId: shareOperator, signature: sign(b, bytes) }],
          (r) => invalidRequest(r, /not an operator of the app's manifest set/, ["parameters.approvals[0].operatorId"]),
        ],
        [
          "an unknown operator",
          [{ operatorId: crypto.randomUUID(), signature: sign(b, bytes) }],
          (r) => invalidRequest(r, /not an operator/, ["parameters.approvals[0].operatorId"]),
        ],
        [
          "a valid one with a forged one: all or nothing",
          [
            { operatorId: idb, signature: sign(b, bytes) },
            { operatorId: idc, signature: sign(b, bytes) },
          ],
          (r) => invalidRequest(r, /does not verify/, ["parameters.approvals[1].signature"]),
        ],
        [
          "one operator twice in a request",
          [
            { operatorId: idb, signature: sign(b, bytes) },
            { operatorId: idb, signature: sign(b, bytes) },
          ],
          (r) => invalidRequest(r, /second approval/, ["parameters.approvals[1].operatorId"]),
        ],
        ["a second approval by an operator", [{ operatorId: ida, signature: sign(a, bytes) }], (r) => conflict(r, /already approved/)],
        ["no approvals", [], (r) => invalidRequest(r, /approvals/, ["parameters.approvals"])],
      ];
      for (const [what, approvals, expect] of refused) {
        const res = await approve(h(), d.manifestId, approvals, org);
        assert.ok(res.status >= 400 && res.status < 500, `${what}: ${res.status} ${JSON.stringify(res.json)}`);
        expect(res);
      }
      dep = await getDeployment(h(), org, d.deploymentId);
      assert.equal(dep.manifestApprovals.length, 1, "nothing refused was recorded");
      assert.equal(dep.status, "awaiting approvals 1/2");

      const second = completed(
        await approve(h(), d.manifestId, [{ operatorId: idb.toUpperCase(), signature: sign(b, bytes) }], org),
        createTvcManifestApprovals,
      );
      assert.equal(second.approvalIds.length, 1);
      dep = await getDeployment(h(), org, d.deploymentId);
      assert.equal(dep.status, "approved");
      assert.deepEqual(
        dep.manifestApprovals.map((x: Json) => x.operator.id),
        [ida, idb],
      );
      assert.equal(dep.manifestApprovals[0].manifestId, d.manifestId);
      assert.equal(dep.manifestApprovals[0].id, first.approvalIds[0]);
      // `approval` is the signature's bytes (base64): it verifies over the manifest as given.
      const sigHex = Buffer.from(dep.manifestApprovals[1].approval, "base64").toString("hex");
      assert.equal(
        completed(
          await approve(h(), other.manifestId, [{ operatorId: idb, signature: sign(b, otherBytes) }], org),
          createTvcManifestApprovals,
        ).approvalIds.length,
        1,
      );
      assert.ok(sigHex.startsWith("30"));
      assert.equal((await h().query("get_tvc_app", { tvcAppId: app.appId }, { as: org })).json.tvcApp.liveDeploymentId, d.deploymentId);

      // A third approval after the threshold is recorded; the deployment stays approved and live.
      completed(await approve(h(), d.manifestId, [{ operatorId: idc, signature: sign(c, bytes) }], org), createTvcManifestApprovals);
      assert.equal((await getDeployment(h(), org, d.deploymentId)).manifestApprovals.length, 3);
      // Another deployment reaching its threshold runs, but the live one stays.
      completed(
        await approve(h(), other.manifestId, [{ operatorId: idc, signature: sign(c, otherBytes) }], org),
        createTvcManifestApprovals,
      );
      assert.equal((await getDeployment(h(), org, other.deploymentId)).status, "approved");
      assert.equal((await h().query("get_tvc_app", { tvcAppId: app.appId }, { as: org })).json.tvcApp.liveDeploymentId, d.deploymentId);
    });

    it("approvals sent at once by different operators reach the threshold (none is lost to a race); the same operator at once: one wins, 409", async () => {
      const org = await h().newOrg("tvc-approve-race");
      const app = await newApp(h(), org, { size: 5, threshold: 3 });
      const d = await newDeployment(h(), org, app.appId);
      const bytes = await manifestBytes(h(), org, d.deploymentId);
      const results = await Promise.all(
        app.operators
          .slice(0, 3)
          .map((op, i) => approve(h(), d.manifestId, [{ operatorId: app.manifestSetOperatorIds[i]!, signature: sign(op, bytes) }], org)),
      );
      for (const r of results) completed(r, createTvcManifestApprovals);
      assert.equal((await getDeployment(h(), org, d.deploymentId)).status, "approved");
      assert.equal((await h().query("get_tvc_app", { tvcAppId: app.appId }, { as: org })).json.tvcApp.liveDeploymentId, d.deploymentId);
      const op = app.operators[3]!;
      const id = app.manifestSetOperatorIds[3]!;
      const same = await Promise.all(
        [1, 2, 3].map(() => approve(h(), d.manifestId, [{ operatorId: id, signature: sign(op, bytes) }], org)),
      );
      assert.deepEqual(same.map((r) => r.status).sort(), [200, 409, 409]);
      assert.equal((await getDeployment(h(), org, d.deploymentId)).manifestApprovals.length, 4);
    });

    it("an unknown or foreign manifest is 404; a deleted deployment's manifest is 400", async () => {
      const org = await h().newOrg("tvc-approve-missing");
      const app = await newApp(h(), org);
      const foreignOrg = await h().newOrg("tvc-approve-foreign");
      const foreign = await newApp(h(), foreignOrg);
      const fd = await newDeployment(h(), foreignOrg, foreign.appId);
      const fbytes = await manifestBytes(h(), foreignOrg, fd.deploymentId);
      notFound(
        await approve(
          h(),
          crypto.randomUUID(),
          [{ operatorId: app.manifestSetOperatorIds[0]!, signature: sign(app.operators[0]!, fbytes) }],
          org,
        ),
        /no TVC manifest/,
      );
      notFound(
        await approve(
          h(),
          fd.manifestId,
          [{ operatorId: foreign.manifestSetOperatorIds[0]!, signature: sign(foreign.operators[0]!, fbytes) }],
          org,
        ),
        /no TVC manifest/,
      );
      const d = await newDeployment(h(), org, app.appId);
      const bytes = await manifestBytes(h(), org, d.deploymentId);
      completed(
        await h().submit("delete_tvc_deployment", "ACTIVITY_TYPE_DELETE_TVC_DEPLOYMENT", { deploymentId: d.deploymentId }, { as: org }),
        deleteTvcDeployment,
      );
      invalidRequest(
        await approve(h(), d.manifestId, [{ operatorId: app.manifestSetOperatorIds[0]!, signature: sign(app.operators[0]!, bytes) }], org),
        /deleted/,
        ["parameters.manifestId"],
      );
    });

    it("policies govern it (TVC_DEPLOYMENT / UPDATE / CREATE_TVC_MANIFEST_APPROVALS)", async () => {
      const org = await h().newOrg("tvc-approve-policy");
      const [member] = await addUsersWithKeys(h(), 1, org);
      const app = await newApp(h(), org);
      const d = await newDeployment(h(), org, app.appId);
      const bytes = await manifestBytes(h(), org, d.deploymentId);
      const approvals = [{ operatorId: app.manifestSetOperatorIds[0]!, signature: sign(app.operators[0]!, bytes) }];
      forbidden(await approve(h(), d.manifestId, approvals, member));
      completed(
        await h().submit(
          "create_policy",
          "ACTIVITY_TYPE_CREATE_POLICY_V3",
          {
            policyName: "approvals",
            effect: "EFFECT_ALLOW",
            condition:
              "activity.resource == 'TVC_DEPLOYMENT' && activity.action == 'UPDATE' && activity.kind == 'CREATE_TVC_MANIFEST_APPROVALS'",
            consensus: "",
            notes: "",
          },
          { as: org },
        ),
        "createPolicyResult",
      );
      completed(await approve(h(), d.manifestId, approvals, member), createTvcManifestApprovals);
    });
  },
  undefined,
  TVC,
);
