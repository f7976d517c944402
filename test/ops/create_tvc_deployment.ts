import { it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { addUsersWithKeys, completed, forbidden, invalidRequest, notFound, perEngine, UUID, type Json } from "../helpers/inproc.ts";
import { createDeployment, deploymentParams, DIGEST, getDeployment, newApp, TVC, imageUrl } from "../helpers/tvc.ts";
import { createTvcDeployment } from "../../src/activities/tvc/create_tvc_deployment.ts";

const OP = "create_tvc_deployment";

perEngine(
  OP,
  (h) => {
    it("through the official SDK: ids, the recorded container, and the manifest (canonical JSON, its digest) awaiting approvals", async () => {
      const org = await h().newOrg("tvc-deploy");
      const app = await newApp(h(), org);
      const sdk = await h().sdk(org);
      const before = Math.floor(Date.now() / 1000);
      const r = await sdk.createTvcDeployment({
        appId: app.appId,
        qosVersion: "local-1",
        pivotContainerImageUrl: imageUrl(),
        pivotPath: "/bin/server",
        pivotArgs: ["--port-from-env", "x y"],
        expectedPivotDigest: DIGEST.toUpperCase(),
        healthCheckType: "TVC_HEALTH_CHECK_TYPE_HTTP",
        healthCheckPort: 3000,
        publicIngressPort: 3001,
        replicas: 3,
      });
      assert.match(r.deploymentId, UUID);
      assert.match(r.manifestId, UUID);
      const d = await getDeployment(h(), org, r.deploymentId);
      assert.equal(d.appId, app.appId);
      assert.equal(d.qosVersion, "local-1");
      assert.deepEqual(d.pivotContainer, {
        containerUrl: imageUrl(),
        path: "/bin/server",
        args: ["--port-from-env", "x y"],
        hasPullSecret: false,
        healthCheckType: "TVC_HEALTH_CHECK_TYPE_HTTP",
        healthCheckPort: 3000,
        publicIngressPort: 3001,
      });
      assert.equal(d.replicas, 3);
      assert.equal(d.delete, false);
      assert.equal(d.debugMode, false);
      assert.equal(d.status, "awaiting approvals 0/2");
      assert.equal(d.manifest.id, r.manifestId);
      const bytes = Buffer.from(d.manifest.manifest, "base64");
      assert.equal(d.manifestDigest, createHash("sha256").update(bytes).digest("hex"));
      const m = JSON.parse(bytes.toString("utf8")) as Json;
      // Canonical: re-serialising with sorted keys gives the same bytes.
      const sorted = (v: unknown): unknown =>
        Array.isArray(v)
          ? v.map(sorted)
          : v && typeof v === "object"
            ? Object.fromEntries(
                Object.keys(v)
                  .sort()
                  .map((k) => [k, sorted((v as Json)[k])]),
              )
            : v;
      assert.equal(JSON.stringify(sorted(m)), bytes.toString("utf8"));
      assert.equal(m.namespace.appId, app.appId);
      assert.ok(m.namespace.nonce >= before, "nonce defaults to now (s)");
      assert.equal(m.pivot.expectedDigest, DIGEST, "digest recorded lower-case");
      assert.equal(m.replicas, 3);
      assert.deepEqual(m.healthCheck, { port: 3000, type: "TVC_HEALTH_CHECK_TYPE_HTTP" });
      assert.equal(m.manifestSet.threshold, 2);
      assert.deepEqual(
        m.manifestSet.members.map((o: Json) => o.id),
        app.manifestSetOperatorIds,
      );
      assert.deepEqual(
        m.manifestSet.members.map((o: Json) => o.publicKey),
        app.operators.map((o) => o.key.publicCompressed),
      );
      assert.equal(m.shareSet.id, app.shareSetId);
      // Defaults and numeric strings; a given nonce is kept.
      const two = completed(
        await createDeployment(h(), deploymentParams(app.appId, { nonce: "42", healthCheckPort: "8080" }), org),
        createTvcDeployment,
      );
      const d2 = await getDeployment(h(), org, two.deploymentId);
      assert.equal(d2.replicas, 1);
      assert.equal(JSON.parse(Buffer.from(d2.manifest.manifest, "base64").toString()).namespace.nonce, 42);
      assert.notEqual(d2.manifestDigest, d.manifestDigest);
    });

    it("every field is validated: 400 naming it; an unknown or foreign app is 404", async () => {
      const org = await h().newOrg("tvc-deploy-invalid");
      const app = await newApp(h(), org);
      const foreign = await newApp(h(), await h().newOrg("tvc-deploy-foreign"));
      const cases: [string, Json, RegExp, string][] = [
        [
          "an https image",
          { pivotContainerImageUrl: "https://registry.example/app:1" },
          /scheme https is not supported/,
          "parameters.pivotContainerImageUrl",
        ],
        ["a docker reference", { pivotContainerImageUrl: "ghcr.io/x/y:1" }, /file:\/\//, "parameters.pivotContainerImageUrl"],
        ["a relative file URL", { pivotContainerImageUrl: "file://relative/dir" }, /no host name/, "parameters.pivotContainerImageUrl"],
        ["a file URL with ..", { pivotContainerImageUrl: "file:///opt/../etc" }, /absolute directory/, "parameters.pivotContainerImageUrl"],
        ["a path escaping the image", { pivotPath: "../../bin/sh" }, /inside the image/, "parameters.pivotPath"],
        ["an empty path", { pivotPath: "/" }, /executable/, "parameters.pivotPath"],
        ["a short digest", { expectedPivotDigest: "ab" }, /64 hex/, "parameters.expectedPivotDigest"],
        ["port 0", { healthCheckPort: 0 }, /from 1 to 65535/, "parameters.healthCheckPort"],
        ["port 65536", { publicIngressPort: "65536" }, /from 1 to 65535/, "parameters.publicIngressPort"],
        ["a port that is no number", { publicIngressPort: "http" }, /integer/, "parameters.publicIngressPort"],
        ["0 replicas", { replicas: 0 }, /from 1 to 8/, "parameters.replicas"],
        ["9 replicas", { replicas: 9 }, /from 1 to 8/, "parameters.replicas"],
        ["an unknown health check", { healthCheckType: "TVC_HEALTH_CHECK_TYPE_TCP" }, /HTTP or/, "parameters.healthCheckType"],
        ["an empty qosVersion", { qosVersion: "" }, /qosVersion/, "parameters.qosVersion"],
        ["a missing qosVersion", { qosVersion: undefined }, /must be set/, "parameters.qosVersion"],
        ["65 arguments", { pivotArgs: Array.from({ length: 65 }, () => "a") }, /at most 64/, "parameters.pivotArgs"],
        ["a NUL in an argument", { pivotArgs: ["a\u0000b"] }, /NUL/, "parameters.pivotArgs[0]"],
        ["a negative nonce", { nonce: -1 }, /from 0/, "parameters.nonce"],
        ["debug mode on an app without it", { debugMode: true }, /enableDebugModeDeployments/, "parameters.debugMode"],
        ["an app id that is no UUID", { appId: "app" }, /UUID/, "parameters.appId"],
      ];
      for (const [what, over, message, field] of cases) {
        const res = await createDeployment(h(), deploymentParams(app.appId, over), org);
        assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.json)}`);
        invalidRequest(res, message, [field]);
      }
      notFound(await createDeployment(h(), deploymentParams(crypto.randomUUID()), org), /no TVC app/);
      notFound(await createDeployment(h(), deploymentParams(foreign.appId), org), /no TVC app/);
      assert.equal((await h().query("list_tvc_app_deployments", { appId: app.appId }, { as: org })).json.tvcDeployments.length, 0);
    });

    it("debug mode on an app created with enableDebugModeDeployments; a pull secret shows as hasPullSecret only", async () => {
      const org = await h().newOrg("tvc-deploy-debug");
      const app = await newApp(h(), org, { extra: { enableDebugModeDeployments: true } });
      const r = completed(
        await createDeployment(h(), deploymentParams(app.appId, { debugMode: true, pivotContainerEncryptedPullSecret: "c2VjcmV0" }), org),
        createTvcDeployment,
      );
      const d = await getDeployment(h(), org, r.deploymentId);
      assert.equal(d.debugMode, true);
      assert.equal(d.pivotContainer.hasPullSecret, true);
      assert.ok(!Buffer.from(d.manifest.manifest, "base64").toString().includes("c2VjcmV0"), "the secret is not in the manifest");
    });

    it("policies govern it (TVC_DEPLOYMENT / CREATE)", async () => {
      const org = await h().newOrg("tvc-deploy-policy");
      const [member] = await addUsersWithKeys(h(), 1, org);
      const app = await newApp(h(), org);
      forbidden(await createDeployment(h(), deploymentParams(app.appId), member));
      completed(
        await h().submit(
          "create_policy",
          "ACTIVITY_TYPE_CREATE_POLICY_V3",
          {
            policyName: "deploy",
            effect: "EFFECT_ALLOW",
            condition: "activity.resource == 'TVC_DEPLOYMENT' && activity.action == 'CREATE'",
            consensus: "",
            notes: "",
          },
          { as: org },
        ),
        "createPolicyResult",
      );
      completed(await createDeployment(h(), deploymentParams(app.appId), member), createTvcDeployment);
    });
  },
  undefined,
  TVC,
);
