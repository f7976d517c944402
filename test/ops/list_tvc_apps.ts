import { it } from "node:test";
import assert from "node:assert/strict";
import { perEngine, UUID, type Json } from "../helpers/inproc.ts";
import { approvedDeployment, newApp, TVC } from "../helpers/tvc.ts";

const OP = "list_tvc_apps";
const TIMESTAMP = { seconds: /^[0-9]+$/, nanos: /^[0-9]+$/ };
const isTimestamp = (t: Json) => TIMESTAMP.seconds.test(t.seconds) && TIMESTAMP.nanos.test(t.nanos);

perEngine(
  OP,
  (h) => {
    it("an organization without apps: an empty list", async () => {
      const org = await h().newOrg("tvc-list-empty");
      const res = await h().query(OP, {}, { as: org });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { tvcApps: [] });
    });

    it("the TvcApp shape through the official SDK (getTvcApps): sets with operators, timestamps, live id, publicDomain; only this organization's", async () => {
      const org = await h().newOrg("tvc-list");
      const one = await newApp(h(), org, { name: "one" });
      const two = await newApp(h(), org, { name: "two", extra: { enableEgress: true } });
      const live = await approvedDeployment(h(), org, two);
      await newApp(h(), await h().newOrg("tvc-list-other"));
      const sdk = await h().sdk(org);
      const { tvcApps } = await sdk.getTvcApps({});
      assert.deepEqual(
        tvcApps.map((a) => a.name),
        ["one", "two"],
      );
      const [a, b] = tvcApps as unknown as [Json, Json];
      assert.equal(a.id, one.appId);
      assert.equal(a.organizationId, org.organizationId);
      assert.match(a.quorumPublicKey, /^04[0-9a-f]{128}$/);
      assert.equal(a.enableEgress, false);
      assert.equal(b.enableEgress, true);
      assert.equal(a.enableDebugModeDeployments, false);
      assert.equal(a.liveDeploymentId, undefined, "no live deployment: absent");
      assert.equal(b.liveDeploymentId, live.deploymentId);
      assert.ok(a.publicDomain.endsWith(`/apps/${one.appId}`), a.publicDomain);
      assert.ok(isTimestamp(a.createdAt) && isTimestamp(a.updatedAt));
      assert.equal(a.manifestSet.id, one.manifestSetId);
      assert.equal(a.manifestSet.threshold, 2);
      assert.equal(a.manifestSet.organizationId, org.organizationId);
      assert.ok(isTimestamp(a.manifestSet.createdAt));
      assert.equal(a.shareSet.id, one.shareSetId);
      assert.equal(a.shareSet.operators.length, 2);
      const op = a.manifestSet.operators[0] as Json;
      assert.match(op.id, UUID);
      assert.equal(op.name, one.operators[0]!.name);
      assert.equal(op.publicKey, one.operators[0]!.key.publicCompressed);
      assert.equal(op.signPublicKey, op.publicKey);
      assert.ok(isTimestamp(op.createdAt) && isTimestamp(op.updatedAt));
    });
  },
  undefined,
  TVC,
);
