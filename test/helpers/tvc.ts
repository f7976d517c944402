// Shared steps of the TVC op tests (test/ops/*tvc*.ts): operators with real P-256 keys, an
// app with a new manifest set, a deployment, the manifest bytes from get_tvc_deployment and
// approvals signed over them — as an operator would do it with node:crypto.
import { createHash } from "node:crypto";
import { chmodSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { generateP256, signP256, type P256Private } from "../../src/crypto/p256.ts";
import type { Isolation } from "../../src/tvc/isolation.ts";
import { completed, type Creds, type Harness, type InprocOptions, type Json } from "./inproc.ts";
import { createTvcDeployment } from "../../src/activities/tvc/create_tvc_deployment.ts";
import { createTvcManifestApprovals } from "../../src/activities/tvc/create_tvc_manifest_approvals.ts";

/**
 * The TVC image root of this test process (SIGIL_TVC_IMAGE_ROOT): TVC is off without one
 * (docs/tvc-isolation.md §1). A real path, readable by the replica user; removed at exit.
 */
export const TVC_IMAGE_ROOT = realpathSync(mkdtempSync(path.join(tmpdir(), "sigil-tvc-root-")));
chmodSync(TVC_IMAGE_ROOT, 0o755);
process.once("exit", () => rmSync(TVC_IMAGE_ROOT, { recursive: true, force: true }));

/** Harness options of the TVC op tests: TVC on, images under TVC_IMAGE_ROOT. */
export const TVC: InprocOptions = { env: { SIGIL_TVC_IMAGE_ROOT: TVC_IMAGE_ROOT } };

/**
 * Replicas as the runtime tests run them: no sandbox, no user switch (they test the process
 * lifecycle; test/e2e/security-tvc.test.ts tests the isolation), working directories in a
 * scratch directory of their own.
 */
export function plainIsolation(): Isolation {
  const workBase = mkdtempSync(path.join(tmpdir(), "sigil-tvc-work-test-"));
  process.once("exit", () => rmSync(workBase, { recursive: true, force: true }));
  return { sandbox: "none", workBase, hide: [] };
}

/** An image directory URL under the image root (need not exist: nothing runs in the op tests). */
export const imageUrl = (name = "apps/tiny") => `file://${TVC_IMAGE_ROOT}/${name}`;

export interface Operator {
  name: string;
  key: P256Private;
}

let n = 0;
export const newOperators = (count: number, prefix = "op"): Operator[] =>
  Array.from({ length: count }, () => ({ name: `${prefix}-${++n}`, key: generateP256() }));

export const operatorParams = (ops: Operator[]) => ops.map((o) => ({ name: o.name, publicKey: o.key.publicCompressed }));

export const quorumKey = () => generateP256().publicUncompressed;

export const uniqueName = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

export const createApp = (h: Harness, parameters: Json, as?: Creds) =>
  h.submit("create_tvc_app", "ACTIVITY_TYPE_CREATE_TVC_APP", parameters, as ? { as } : {});

export interface App {
  appId: string;
  manifestSetId: string;
  manifestSetOperatorIds: string[];
  shareSetId: string;
  /** The manifest set's operators, in set order (their ids are manifestSetOperatorIds). */
  operators: Operator[];
  result: Json;
}

/** An app with a new `threshold`-of-`size` manifest set and a new 2-of-2 share set. */
export async function newApp(
  h: Harness,
  as: Creds,
  opts: { size?: number; threshold?: number; name?: string; extra?: Json } = {},
): Promise<App> {
  const operators = newOperators(opts.size ?? 3);
  const sharers = newOperators(2, "share");
  const result = completed(
    await createApp(
      h,
      {
        name: opts.name ?? uniqueName("app"),
        quorumPublicKey: quorumKey(),
        manifestSetParams: { name: uniqueName("manifest"), newOperators: operatorParams(operators), threshold: opts.threshold ?? 2 },
        shareSetParams: { name: uniqueName("share"), newOperators: operatorParams(sharers), threshold: 2 },
        ...opts.extra,
      },
      as,
    ),
    "createTvcAppResult",
  );
  return {
    appId: result.appId,
    manifestSetId: result.manifestSetId,
    manifestSetOperatorIds: result.manifestSetOperatorIds,
    shareSetId: result.shareSetId,
    operators,
    result,
  };
}

export const DIGEST = createHash("sha256").update("a tiny app").digest("hex");

export const deploymentParams = (appId: string, over: Json = {}): Json => ({
  appId,
  qosVersion: "local-1",
  pivotContainerImageUrl: imageUrl(),
  pivotPath: "bin/server",
  pivotArgs: ["--quiet"],
  expectedPivotDigest: DIGEST,
  healthCheckType: "TVC_HEALTH_CHECK_TYPE_HTTP",
  healthCheckPort: 8080,
  publicIngressPort: 8080,
  ...over,
});

export const createDeployment = (h: Harness, parameters: Json, as?: Creds) =>
  h.submit("create_tvc_deployment", "ACTIVITY_TYPE_CREATE_TVC_DEPLOYMENT", parameters, as ? { as } : {});

export async function newDeployment(
  h: Harness,
  as: Creds,
  appId: string,
  over: Json = {},
): Promise<{ deploymentId: string; manifestId: string }> {
  const r = completed(await createDeployment(h, deploymentParams(appId, over), as), createTvcDeployment);
  return { deploymentId: r.deploymentId, manifestId: r.manifestId };
}

export async function getDeployment(h: Harness, as: Creds, deploymentId: string): Promise<Json> {
  const res = await h.query("get_tvc_deployment", { deploymentId }, { as });
  if (res.status !== 200) throw new Error(`get_tvc_deployment: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json.tvcDeployment as Json;
}

/** What an operator signs: the manifest bytes exactly as get_tvc_deployment returns them. */
export async function manifestBytes(h: Harness, as: Creds, deploymentId: string): Promise<Buffer> {
  return Buffer.from((await getDeployment(h, as, deploymentId)).manifest.manifest as string, "base64");
}

export const sign = (op: Operator, bytes: Buffer) => signP256(op.key, bytes, "der").toString("hex");

export const approve = (h: Harness, manifestId: string, approvals: Json[], as?: Creds) =>
  h.submit("create_tvc_manifest_approvals", "ACTIVITY_TYPE_CREATE_TVC_MANIFEST_APPROVALS", { manifestId, approvals }, as ? { as } : {});

/** A deployment of `app` approved by its first `threshold` operators. */
export async function approvedDeployment(
  h: Harness,
  as: Creds,
  app: App,
  threshold = 2,
  over: Json = {},
): Promise<{ deploymentId: string; manifestId: string }> {
  const d = await newDeployment(h, as, app.appId, over);
  const bytes = await manifestBytes(h, as, d.deploymentId);
  const approvals = app.operators
    .slice(0, threshold)
    .map((op, i) => ({ operatorId: app.manifestSetOperatorIds[i]!, signature: sign(op, bytes) }));
  completed(await approve(h, d.manifestId, approvals, as), createTvcManifestApprovals);
  return d;
}
