// TVC is an operator feature (docs/tvc-isolation.md §1–2): which activities the gate covers, what
// it lets through, the image-root check with links, the knobs that switch it on, and the
// desired state that never includes a sub-organization's deployment.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ACTIVITIES } from "../../src/activities/registry.ts";
import { AUTH_PROXY_SCOPE } from "../../src/activities/auth-proxy/gate.ts";
import { checkImageUnderRoot, TVC_SCOPE } from "../../src/activities/tvc/gate.ts";
import { refuseOutsideScope } from "../../src/pipeline/scope.ts";
import { ApiError } from "../../src/errors.ts";
import { loadConfig } from "../../src/config.ts";
import { readDesired } from "../../src/tvc/desired.ts";
import { openService, type Service } from "../../src/service.ts";
import { newId } from "../../src/store/util.ts";
import { newInstance, type Instance } from "../helpers/server.ts";

let root: string;
before(() => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), "sigil-tvc-gate-")));
  mkdirSync(path.join(root, "images", "app"), { recursive: true });
  symlinkSync("/usr/bin", path.join(root, "images", "out"));
  symlinkSync(path.join(root, "images", "app"), path.join(root, "images", "in"));
});
after(() => rmSync(root, { recursive: true, force: true }));

const refused = (f: () => unknown, code: number, re: RegExp) =>
  assert.throws(f, (e: unknown) => e instanceof ApiError && e.code === code && re.test(e.message));

describe("the TVC gate", () => {
  it("covers every TVC activity and nothing else; the auth proxy's three are the only other gated ones", () => {
    const tvc = ACTIVITIES.filter((d) => /TVC/.test(d.type))
      .map((d) => d.type)
      .sort();
    assert.deepEqual(
      tvc,
      ACTIVITIES.filter((d) => d.scope === TVC_SCOPE)
        .map((d) => d.type)
        .sort(),
    );
    assert.equal(tvc.length, 6, tvc.join(", "));
    const proxy = ACTIVITIES.filter((d) => d.scope === AUTH_PROXY_SCOPE)
      .map((d) => d.type)
      .sort();
    assert.deepEqual(proxy, [
      "ACTIVITY_TYPE_DISABLE_AUTH_PROXY",
      "ACTIVITY_TYPE_ENABLE_AUTH_PROXY",
      "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG",
    ]);
    assert.equal(ACTIVITIES.filter((d) => d.scope).length, tvc.length + proxy.length);
  });

  it("refuses (403, code 7) without an image root, for a sub-organization, and for a parent's credential; lets a top-level organization through", () => {
    const def = { scope: TVC_SCOPE };
    const org = { fromAncestor: false, organizationId: "o" };
    refused(() => refuseOutsideScope(def, org, true, {}), 7, /TVC is not enabled for organization o/);
    refused(() => refuseOutsideScope(def, org, false, { tvcImageRoot: root }), 7, /TVC is not enabled/);
    refused(() => refuseOutsideScope(def, { ...org, fromAncestor: true }, true, { tvcImageRoot: root }), 7, /TVC is not enabled/);
    assert.doesNotThrow(() => refuseOutsideScope(def, org, true, { tvcImageRoot: root }));
    assert.doesNotThrow(() => refuseOutsideScope({}, org, false, {}), "activities without a scope are not its business");
  });

  it("images only from under the root, links resolved; a directory that does not exist yet is judged by its existing part", async () => {
    await checkImageUnderRoot(path.join(root, "images", "app"), root);
    await checkImageUnderRoot(path.join(root, "images", "not-yet", "deeper"), root);
    await checkImageUnderRoot(path.join(root, "images", "in"), root);
    for (const outside of ["/usr/bin", path.dirname(root), path.join(root, "images", "out"), path.join(root, "images", "out", "sub")]) {
      await assert.rejects(
        checkImageUnderRoot(outside, root),
        (e: unknown) => e instanceof ApiError && e.code === 3 && /parameters\.pivotContainerImageUrl/.test(e.message),
        outside,
      );
    }
  });
});

describe("SIGIL_TVC_* knobs", () => {
  it("TVC is off by default; the image root is kept as its real path; bad values stop startup", () => {
    const base = { SIGIL_DATA_DIR: path.join(root, "data") };
    const d = loadConfig(base);
    assert.equal(d.tvcImageRoot, undefined);
    assert.equal(d.tvcUser, "nobody");
    assert.equal(d.tvcSandbox, "auto");
    assert.equal(
      loadConfig({ ...base, SIGIL_TVC_IMAGE_ROOT: path.join(root, "images", "in") }).tvcImageRoot,
      path.join(root, "images", "app"),
    );
    assert.throws(
      () => loadConfig({ ...base, SIGIL_TVC_IMAGE_ROOT: path.join(root, "missing") }),
      /SIGIL_TVC_IMAGE_ROOT names no existing directory/,
    );
    assert.throws(() => loadConfig({ ...base, SIGIL_TVC_IMAGE_ROOT: "relative/dir" }), /absolute/);
    assert.throws(() => loadConfig({ ...base, SIGIL_TVC_IMAGE_ROOT: "/" }), /must not be \//);
    assert.throws(
      () => loadConfig({ SIGIL_DATA_DIR: path.join(root, "images", "app", "data"), SIGIL_TVC_IMAGE_ROOT: path.join(root, "images") }),
      /must not contain one another/,
    );
    assert.throws(() => loadConfig({ ...base, SIGIL_TVC_SANDBOX: "docker" }), /SIGIL_TVC_SANDBOX/);
    assert.throws(() => loadConfig({ ...base, SIGIL_TVC_USER: "bad user" }), /SIGIL_TVC_USER/);
    assert.equal(loadConfig({ ...base, SIGIL_TVC_USER: "1000:1000", SIGIL_TVC_SANDBOX: "none" }).tvcUser, "1000:1000");
  });
});

describe("the desired state", () => {
  let inst: Instance;
  let service: Service;
  before(async () => {
    inst = await newInstance("sqlite");
    service = await openService([], inst.env);
  });
  after(async () => {
    await service.store.close();
    await inst.cleanup();
  });

  it("never includes a deployment of a sub-organization (one recorded before TVC was an operator feature)", async () => {
    const db = service.store.db;
    const now = Date.now();
    const ids: Record<string, string> = {};
    const parent = newId();
    for (const [name, parentId] of [
      ["top", null],
      ["sub", parent],
    ] as const) {
      const orgId = name === "top" ? parent : newId();
      const setId = newId();
      const appId = newId();
      const depId = newId();
      await db
        .insertInto("organizations")
        .values({
          id: orgId,
          name,
          parent_id: parentId,
          root_quorum_threshold: 1,
          policy_version: 0,
          settings: "{}",
          created_at: now,
          updated_at: now,
        })
        .execute();
      await db
        .insertInto("tvc_operator_sets")
        .values({ id: setId, organization_id: orgId, name: "s", threshold: 1, identity: newId(), created_at: now, updated_at: now })
        .execute();
      await db
        .insertInto("tvc_apps")
        .values({
          id: appId,
          organization_id: orgId,
          name: "a",
          quorum_public_key: "02" + "11".repeat(32),
          manifest_set_id: setId,
          share_set_id: setId,
          enable_egress: 0,
          enable_debug_mode_deployments: 0,
          live_deployment_id: depId,
          created_at: now,
          updated_at: now,
        })
        .execute();
      const spec = {
        qosVersion: "1",
        pivotContainerImageUrl: "file:///usr/bin",
        pivotPath: "dash",
        pivotArgs: ["-c", "id"],
        expectedPivotDigest: "0".repeat(64),
        replicas: 1,
      };
      await db
        .insertInto("tvc_deployments")
        .values({
          id: depId,
          organization_id: orgId,
          app_id: appId,
          manifest_id: newId(),
          manifest: "",
          manifest_digest: "",
          spec: JSON.stringify(spec),
          replicas: 1,
          approved_at: now,
          deleted_at: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
      ids[name] = depId;
    }
    const { desired } = await readDesired(db);
    assert.deepEqual(
      desired.map((d) => d.deploymentId),
      [ids.top],
    );
  });
});
