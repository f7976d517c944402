// create_tvc_deployment (docs/tvc.md §3): records what is to run and derives its manifest
// (tvc/manifest.ts) — the bytes the app's manifest-set operators sign. Nothing runs until
// their approvals reach the set's threshold (create_tvc_manifest_approvals).
//
// The local runtime runs an executable from a directory of this host: the image URL is
// `file://<absolute directory>` under SIGIL_TVC_IMAGE_ROOT and pivotPath the executable inside
// it (a leading "/" means the directory's root); other schemes, and directories outside the
// image root (docs/tvc-isolation.md §2), are refused here rather than at run time.
import { Type, type Static } from "@sinclair/typebox";
import { invalid, notFound } from "../../errors.ts";
import { Id, maxItems } from "../../schemas/common.ts";
import { findApp, insertDeployment, operatorSets, type OperatorSetWithMembers } from "../../store/tvc.ts";
import { newOrderedId } from "../../store/util.ts";
import { buildManifest, type ManifestOperatorSet } from "../../tvc/manifest.ts";
import type { DeploymentSpec } from "../../tvc/spec.ts";
import { defineActivity, type AdmitEnv, type ExecuteContext } from "../define.ts";
import { checkImageUnderRoot, TVC_SCOPE, tvcNotEnabled } from "./gate.ts";
import { Int64, intOf, MAX_REPLICAS } from "./fields.ts";

const MAX_ARGS = 64;
const MAX_ARG_LENGTH = 4096;
const MAX_ARGS_TOTAL = 32 * 1024;

const Params = Type.Object({
  appId: Id("app"),
  qosVersion: Type.String({
    minLength: 1,
    maxLength: 128,
    pattern: "\\S",
    errorMessage: "qosVersion must be 1 to 128 characters and not blank",
  }),
  pivotContainerImageUrl: Type.String({
    minLength: 1,
    maxLength: 2048,
    errorMessage: "pivotContainerImageUrl must be file://<absolute directory> (at most 2048 characters)",
  }),
  pivotPath: Type.String({ minLength: 1, maxLength: 1024, errorMessage: "pivotPath must be 1 to 1024 characters" }),
  pivotArgs: maxItems(
    Type.String({ maxLength: MAX_ARG_LENGTH, errorMessage: `each pivot argument is at most ${MAX_ARG_LENGTH} characters` }),
    "pivotArgs",
    MAX_ARGS,
  ),
  expectedPivotDigest: Type.String({
    pattern: "^[0-9a-fA-F]{64}$",
    errorMessage: "expectedPivotDigest must be the executable's sha256 as 64 hex characters",
  }),
  nonce: Type.Optional(Int64("nonce")),
  pivotContainerEncryptedPullSecret: Type.Optional(Type.String({ maxLength: 65536 })),
  debugMode: Type.Optional(Type.Boolean()),
  healthCheckType: Type.Union([Type.Literal("TVC_HEALTH_CHECK_TYPE_HTTP"), Type.Literal("TVC_HEALTH_CHECK_TYPE_GRPC")], {
    errorMessage: "healthCheckType must be TVC_HEALTH_CHECK_TYPE_HTTP or TVC_HEALTH_CHECK_TYPE_GRPC",
  }),
  healthCheckPort: Int64("healthCheckPort"),
  publicIngressPort: Int64("publicIngressPort"),
  replicas: Type.Optional(Int64("replicas")),
  // Sizes of an enclave instance upstream; the local runtime has no such knob (accepted, ignored).
  instanceSizeCpus: Type.Optional(Int64("instanceSizeCpus")),
  instanceSizeRam: Type.Optional(Int64("instanceSizeRam")),
});
type P = Static<typeof Params>;

const bad = (field: string, description: string) =>
  invalid(`parameters.${field}: ${description}`, [{ field: `parameters.${field}`, description }]);

function inRange(v: number | string | undefined, field: string, min: number, max: number): void {
  if (v === undefined) return;
  const n = intOf(v);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw bad(field, `must be an integer from ${min} to ${max}`);
}

/** The image directory of a `file://` URL, or a 400 naming the field. */
export function imageDirectory(url: string): string {
  // Before parsing: the URL parser resolves "..", which would hide it.
  if (/(^|\/)(\.|%2e){2}(\/|$)/i.test(url.replace(/^[a-z]+:\/\//i, "")))
    throw bad("pivotContainerImageUrl", "must name an absolute directory without '..' segments");
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw bad("pivotContainerImageUrl", "must be a URL of the form file://<absolute directory>");
  }
  if (u.protocol !== "file:")
    throw bad(
      "pivotContainerImageUrl",
      `scheme ${u.protocol.replace(/:$/, "")} is not supported by the local runtime: use file://<absolute directory>`,
    );
  if (u.host !== "" && u.host !== "localhost")
    throw bad("pivotContainerImageUrl", "a file:// URL names a directory of this host: no host name (file:///dir)");
  if (u.search || u.hash) throw bad("pivotContainerImageUrl", "must not carry a query or a fragment");
  const dir = decodeURIComponent(u.pathname);
  if (!dir.startsWith("/") || dir.includes("\0") || dir.split("/").includes(".."))
    throw bad("pivotContainerImageUrl", "must name an absolute directory without '..' segments");
  return dir;
}

/**
 * The image must come from under SIGIL_TVC_IMAGE_ROOT, links resolved (docs/tvc-isolation.md §2):
 * a 400 naming pivotContainerImageUrl at submission; the runtime checks again before every start.
 */
async function admit(p: P, env: AdmitEnv): Promise<void> {
  // The pipeline refused already when TVC is off (gate.ts); never treat a missing root as "anything goes".
  if (!env.tvcImageRoot) throw tvcNotEnabled(env.organizationId);
  await checkImageUnderRoot(imageDirectory(p.pivotContainerImageUrl), env.tvcImageRoot);
}

function check(p: P): void {
  imageDirectory(p.pivotContainerImageUrl);
  if (p.pivotPath.includes("\0") || p.pivotPath.split("/").includes(".."))
    throw bad("pivotPath", "must be a path inside the image directory (no '..' segments, no NUL)");
  if (p.pivotPath.replace(/\/+$/, "").replace(/^\/+/, "") === "")
    throw bad("pivotPath", "must name the executable inside the image directory");
  p.pivotArgs.forEach((a, i) => {
    if (a.includes("\0")) throw bad(`pivotArgs[${i}]`, "must not contain NUL");
  });
  if (p.pivotArgs.reduce((n, a) => n + a.length, 0) > MAX_ARGS_TOTAL) throw bad("pivotArgs", `at most ${MAX_ARGS_TOTAL} characters in all`);
  inRange(p.healthCheckPort, "healthCheckPort", 1, 65535);
  inRange(p.publicIngressPort, "publicIngressPort", 1, 65535);
  inRange(p.replicas, "replicas", 1, MAX_REPLICAS);
  inRange(p.nonce, "nonce", 0, Number.MAX_SAFE_INTEGER);
  inRange(p.instanceSizeCpus, "instanceSizeCpus", 0, 1024);
  inRange(p.instanceSizeRam, "instanceSizeRam", 0, 4096);
}

const manifestSet = (s: OperatorSetWithMembers): ManifestOperatorSet => ({
  id: s.id,
  name: s.name,
  threshold: s.threshold,
  operators: s.operators.map((o) => ({ id: o.id, name: o.name, publicKey: o.public_key })),
});

async function execute(ctx: ExecuteContext, p: P) {
  const { tx, organization, now } = ctx;
  // Shared: the app must go on existing until this commits; deployments of one app don't queue.
  const app = await findApp(tx, organization.id, p.appId.toLowerCase(), "shared");
  if (!app) throw notFound(`parameters.appId: no TVC app ${p.appId} in organization ${organization.id}`);
  if (p.debugMode && app.enable_debug_mode_deployments !== 1) {
    throw bad("debugMode", "this app was created without enableDebugModeDeployments: its deployments cannot run in debug mode");
  }
  const sets = await operatorSets(tx, organization.id, [app.manifest_set_id, app.share_set_id]);
  const spec: DeploymentSpec = {
    qosVersion: p.qosVersion,
    pivotContainerImageUrl: p.pivotContainerImageUrl,
    pivotPath: p.pivotPath,
    pivotArgs: p.pivotArgs,
    expectedPivotDigest: p.expectedPivotDigest.toLowerCase(),
    healthCheckType: p.healthCheckType,
    healthCheckPort: intOf(p.healthCheckPort),
    publicIngressPort: intOf(p.publicIngressPort),
    replicas: p.replicas === undefined ? 1 : intOf(p.replicas),
    debugMode: p.debugMode === true,
    nonce: p.nonce === undefined ? Math.floor(now / 1000) : intOf(p.nonce),
    // The secret itself is not kept: the local runtime pulls nothing.
    hasPullSecret: (p.pivotContainerEncryptedPullSecret ?? "") !== "",
  };
  const deploymentId = newOrderedId(now);
  const manifestId = newOrderedId(now);
  const manifest = buildManifest({
    manifestId,
    deploymentId,
    appId: app.id,
    appName: app.name,
    quorumPublicKey: app.quorum_public_key,
    enableEgress: app.enable_egress === 1,
    spec,
    manifestSet: manifestSet(sets.get(app.manifest_set_id)!),
    shareSet: manifestSet(sets.get(app.share_set_id)!),
  });
  await insertDeployment(tx, {
    id: deploymentId,
    organization_id: organization.id,
    app_id: app.id,
    manifest_id: manifestId,
    manifest: manifest.bytes.toString("base64"),
    manifest_digest: manifest.digest,
    spec: JSON.stringify(spec),
    replicas: spec.replicas,
    approved_at: null,
    deleted_at: null,
    created_at: now,
    updated_at: now,
  });
  return { deploymentId, manifestId };
}

export const createTvcDeployment = defineActivity({
  type: "ACTIVITY_TYPE_CREATE_TVC_DEPLOYMENT",
  resource: "TVC_DEPLOYMENT",
  scope: TVC_SCOPE,
  action: "CREATE",
  kind: "CREATE_TVC_DEPLOYMENT",
  summary:
    "Create a deployment of a TVC app and its manifest; it runs once the manifest set's threshold of operators approved the manifest.",
  params: Params,
  returns: Type.Object({ deploymentId: Type.String(), manifestId: Type.String() }),
  check,
  admit,
  execute,
});
