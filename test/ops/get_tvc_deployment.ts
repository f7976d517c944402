import { it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { invalidRequest, notFound, perEngine, type Json } from "../helpers/inproc.ts";
import { approvedDeployment, newApp, newDeployment, sign, TVC, imageUrl } from "../helpers/tvc.ts";
import { verifyOperatorSignature } from "../../src/tvc/operator-keys.ts";

const OP = "get_tvc_deployment";

perEngine(
  OP,
  (h) => {
    it("through the official SDK (getTvcDeployment): manifest bytes that verify the approvals given, sets, container, status", async () => {
      const org = await h().newOrg("tvc-get-dep");
      const app = await newApp(h(), org);
      const d = await approvedDeployment(h(), org, app);
      const sdk = await h().sdk(org);
      const { tvcDeployment } = await sdk.getTvcDeployment({ deploymentId: d.deploymentId });
      const t = tvcDeployment as typeof tvcDeployment & { status: string; manifestDigest: string };
      assert.equal(t.id, d.deploymentId);
      assert.equal(t.organizationId, org.organizationId);
      assert.equal(t.manifestSet.id, app.manifestSetId);
      assert.equal(t.shareSet.id, app.shareSetId);
      assert.equal(t.manifest.id, d.manifestId);
      assert.match(t.manifest.createdAt.seconds, /^[0-9]+$/);
      const bytes = Buffer.from(t.manifest.manifest, "base64");
      assert.equal(t.manifestDigest, createHash("sha256").update(bytes).digest("hex"));
      assert.equal(t.manifestApprovals.length, 2);
      for (const [i, a] of t.manifestApprovals.entries()) {
        assert.equal(a.operator.id, app.manifestSetOperatorIds[i]);
        assert.ok(verifyOperatorSignature(a.operator.publicKey, bytes, Buffer.from(a.approval, "base64").toString("hex")));
        // Signatures are randomised: another one by the same key verifies too, over these bytes only.
        assert.ok(verifyOperatorSignature(a.operator.publicKey, bytes, sign(app.operators[i]!, bytes)));
      }
      assert.equal(t.pivotContainer.containerUrl, imageUrl());
      assert.equal(t.qosVersion, "local-1");
      assert.equal(t.status, "approved");
      assert.equal(t.delete, false);
    });

    it("shows the runtime's refusal (e.g. a digest mismatch) as its status", async () => {
      const org = await h().newOrg("tvc-get-dep-refused");
      const app = await newApp(h(), org);
      const d = await approvedDeployment(h(), org, app);
      const pending = await newDeployment(h(), org, app.appId);
      h().service.state.tvc.set({
        deploymentId: d.deploymentId,
        appId: app.appId,
        desiredReplicas: 1,
        readyReplicas: 0,
        lastUpdatedMs: Date.now(),
        refusal: "executable digest 00ab… is not expectedPivotDigest",
      });
      try {
        const res = await h().query(OP, { deploymentId: d.deploymentId }, { as: org });
        assert.equal(res.json.tvcDeployment.status, "refused: executable digest 00ab… is not expectedPivotDigest");
        assert.equal(
          (await h().query(OP, { deploymentId: pending.deploymentId }, { as: org })).json.tvcDeployment.status,
          "awaiting approvals 0/2",
        );
      } finally {
        h().service.state.tvc.delete(d.deploymentId);
      }
      assert.equal((await h().query(OP, { deploymentId: d.deploymentId }, { as: org })).json.tvcDeployment.status, "approved");
    });

    it("an unknown or foreign deployment is 404; a malformed id 400", async () => {
      const org = await h().newOrg("tvc-get-dep-missing");
      const otherOrg = await h().newOrg("tvc-get-dep-foreign");
      const foreign = await newDeployment(h(), otherOrg, (await newApp(h(), otherOrg)).appId);
      notFound(await h().query(OP, { deploymentId: crypto.randomUUID() }, { as: org }), /no TVC deployment/);
      notFound(await h().query(OP, { deploymentId: foreign.deploymentId }, { as: org }), /no TVC deployment/);
      invalidRequest(await h().query(OP, { deploymentId: "x" } as Json, { as: org }), /UUID/, ["deploymentId"]);
    });
  },
  undefined,
  TVC,
);
