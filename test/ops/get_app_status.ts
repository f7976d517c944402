import { it } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createHash } from "node:crypto";
import path from "node:path";
import { pathToFileURL } from "node:url";
import pino from "pino";
import { invalidRequest, notFound, perEngine, UUID } from "../helpers/inproc.ts";
import { approvedDeployment, newApp, plainIsolation, TVC, TVC_IMAGE_ROOT } from "../helpers/tvc.ts";
import { pollUntil } from "../helpers/raw-http.ts";
import { LocalRuntime } from "../../src/tvc/local-runtime.ts";
import { startController } from "../../src/tvc/controller.ts";
import { newId } from "../../src/store/util.ts";

const OP = "get_app_status";
const FIXTURE = path.resolve(import.meta.dirname, "../fixtures/tvc-app/server.mjs");

perEngine(
  "get_app_status",
  (h) => {
    it("an unknown app, or another organization's, is 404; a malformed appId is 400", async () => {
      notFound(await h().query(OP, { appId: newId() }), /no TVC app/);
      const other = await h().newOrg("app-status-other");
      const app = await newApp(h(), other);
      notFound(await h().query(OP, { appId: app.appId }), /no TVC app/);
      assert.equal((await h().query(OP, { appId: app.appId }, { as: other })).status, 200);
      invalidRequest(await h().query(OP, { appId: "not-an-id" }), /app id/, ["appId"]);
    });

    it("an app with nothing running: 200, no deployments, no target", async () => {
      const app = await newApp(h(), h().root);
      const res = await h().query(OP, { appId: app.appId });
      assert.equal(res.status, 200, JSON.stringify(res.json));
      assert.deepEqual(res.json, { appStatus: { appId: app.appId, deployments: [], targetedDeploymentId: "" } });
    });

    it("what the runtime observes: ready/desired replicas, the live deployment targeted, a refused one with its reason; through the official SDK", async () => {
      const dir = mkdtempSync(path.join(TVC_IMAGE_ROOT, "app-status-"));
      mkdirSync(path.join(dir, "bin"));
      copyFileSync(FIXTURE, path.join(dir, "bin", "server.mjs"));
      const digest = createHash("sha256")
        .update(readFileSync(path.join(dir, "bin", "server.mjs")))
        .digest("hex");
      const app = await newApp(h(), h().root);
      const image = { pivotContainerImageUrl: pathToFileURL(dir).href, pivotPath: "bin/server.mjs", pivotArgs: [] };
      // The first approved deployment goes live; the second's digest is wrong.
      const good = await approvedDeployment(h(), h().root, app, 2, { ...image, expectedPivotDigest: digest, replicas: 2 });
      const bad = await approvedDeployment(h(), h().root, app, 2, { ...image, expectedPivotDigest: "ab".repeat(32), replicas: 1 });
      const { db } = h().service.store;
      const log = pino({ level: "silent" });
      const runtime = new LocalRuntime({
        log,
        imageRoot: TVC_IMAGE_ROOT,
        isolation: plainIsolation(),
        healthIntervalMs: 100,
        backoffBaseMs: 100,
        backoffCapMs: 500,
      });
      const controller = startController({ db, runtime, observations: h().service.state.tvc, log, intervalMs: 100 });
      try {
        const status = await pollUntil("2 ready replicas and a refusal", 15_000, 50, async () => {
          const res = await h().query(OP, { appId: app.appId });
          const ds = res.json.appStatus?.deployments as { deploymentId: string; readyReplicas: number; refusal?: string }[] | undefined;
          const g = ds?.find((d) => d.deploymentId === good.deploymentId);
          const b = ds?.find((d) => d.deploymentId === bad.deploymentId);
          return g?.readyReplicas === 2 && b?.refusal ? res.json.appStatus : undefined;
        });
        assert.equal(status.appId, app.appId);
        assert.equal(status.targetedDeploymentId, good.deploymentId);
        const g = status.deployments.find((d: { deploymentId: string }) => d.deploymentId === good.deploymentId);
        assert.equal(g.desiredReplicas, 2);
        assert.equal(g.refusal, undefined);
        assert.match(g.lastUpdatedTime.seconds, /^\d+$/);
        assert.match(g.lastUpdatedTime.nanos, /^\d+$/);
        assert.ok(Math.abs(Number(g.lastUpdatedTime.seconds) - Date.now() / 1000) < 120);
        const b = status.deployments.find((d: { deploymentId: string }) => d.deploymentId === bad.deploymentId);
        assert.deepEqual([b.readyReplicas, b.desiredReplicas], [0, 1]);
        assert.match(b.refusal, /sha256 is [0-9a-f]{64}, not the expectedPivotDigest (ab){32}/);

        const sdk = await h().sdk();
        const viaSdk = await sdk.getAppStatus({ organizationId: h().root.organizationId, appId: app.appId });
        assert.equal(viaSdk.appStatus.targetedDeploymentId, good.deploymentId);
        assert.match(viaSdk.appStatus.deployments[0]!.deploymentId, UUID);
      } finally {
        await controller.stop();
        rmSync(dir, { recursive: true, force: true });
      }
      // Stopped: nothing runs, nothing is reported.
      const after = await h().query(OP, { appId: app.appId });
      assert.deepEqual(after.json.appStatus.deployments, []);
    });
  },
  undefined,
  TVC,
);
