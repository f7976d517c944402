// The TVC records of query responses (docs/tvc.md §7): TvcApp, operator sets, operators,
// TvcDeployment. Timestamps are `{seconds, nanos}` objects; bytes (the manifest, approval
// signatures) are base64, as protojson renders them.
import { Type } from "@sinclair/typebox";
import { Timestamp } from "../schemas/common.ts";
import type { AppRow, ApprovalRow, DeploymentRow, OperatorRow, OperatorSetWithMembers } from "../store/tvc.ts";
import { json, timestampObject } from "../store/util.ts";
import type { ObservedDeployment } from "../tvc/observed.ts";
import type { DeploymentSpec } from "../tvc/spec.ts";

export const TvcOperatorSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  publicKey: Type.String({ description: "compressed P-256 point, hex" }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  encryptPublicKey: Type.String({ description: "empty: operators have one key, used to sign" }),
  signPublicKey: Type.String(),
  keySource: Type.String(),
});

export const TvcOperatorSetSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  organizationId: Type.String(),
  operators: Type.Array(TvcOperatorSchema),
  threshold: Type.Integer(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const TvcAppSchema = Type.Object({
  id: Type.String(),
  organizationId: Type.String(),
  name: Type.String(),
  quorumPublicKey: Type.String(),
  manifestSet: TvcOperatorSetSchema,
  shareSet: TvcOperatorSetSchema,
  enableEgress: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  liveDeploymentId: Type.Optional(Type.String()),
  publicDomain: Type.String({ description: "<address>/apps/<appId>: the app's live deployment through the service's TVC ingress" }),
  enableDebugModeDeployments: Type.Boolean(),
});

export const TvcDeploymentSchema = Type.Object({
  id: Type.String(),
  organizationId: Type.String(),
  appId: Type.String(),
  manifestSet: TvcOperatorSetSchema,
  shareSet: TvcOperatorSetSchema,
  manifest: Type.Object({
    id: Type.String(),
    manifest: Type.String({ description: "the manifest's exact bytes, base64" }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
  manifestApprovals: Type.Array(
    Type.Object({
      id: Type.String(),
      manifestId: Type.String(),
      operator: TvcOperatorSchema,
      approval: Type.String({ description: "DER signature, base64" }),
      createdAt: Timestamp,
      updatedAt: Timestamp,
    }),
  ),
  qosVersion: Type.String(),
  pivotContainer: Type.Object({
    containerUrl: Type.String(),
    path: Type.String(),
    args: Type.Array(Type.String()),
    hasPullSecret: Type.Boolean(),
    healthCheckType: Type.String(),
    healthCheckPort: Type.Integer(),
    publicIngressPort: Type.Integer(),
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  delete: Type.Boolean(),
  debugMode: Type.Boolean(),
  // Sigil's own fields.
  replicas: Type.Integer(),
  manifestDigest: Type.String({ description: "sha256 of the manifest bytes, hex" }),
  status: Type.String({ description: "deleted | refused: <why> | approved | awaiting approvals <n>/<threshold>" }),
});

/**
 * Where an app's live deployment answers: the service's TVC ingress routes
 * `http://<address>/apps/<appId>/…` to it. `address` is what the ingress was started with
 * (ServiceState.tvc.ingressAddress: SIGIL_TVC_PUBLIC_ADDRESS, else localhost and the bound
 * port); a process without an ingress names the default port.
 */
export function publicDomain(appId: string, address = "localhost:8082"): string {
  return `${address}/apps/${appId}`;
}

export function operatorView(o: OperatorRow) {
  return {
    id: o.id,
    name: o.name,
    publicKey: o.public_key,
    createdAt: timestampObject(o.created_at),
    updatedAt: timestampObject(o.updated_at),
    encryptPublicKey: "",
    signPublicKey: o.public_key,
    keySource: "EXTERNAL_KEY",
  };
}

export function operatorSetView(s: OperatorSetWithMembers) {
  return {
    id: s.id,
    name: s.name,
    organizationId: s.organization_id,
    operators: s.operators.map(operatorView),
    threshold: s.threshold,
    createdAt: timestampObject(s.created_at),
    updatedAt: timestampObject(s.updated_at),
  };
}

export function appView(a: AppRow, sets: Map<string, OperatorSetWithMembers>, ingressAddress?: string) {
  return {
    id: a.id,
    organizationId: a.organization_id,
    name: a.name,
    quorumPublicKey: a.quorum_public_key,
    manifestSet: operatorSetView(sets.get(a.manifest_set_id)!),
    shareSet: operatorSetView(sets.get(a.share_set_id)!),
    enableEgress: a.enable_egress === 1,
    createdAt: timestampObject(a.created_at),
    updatedAt: timestampObject(a.updated_at),
    ...(a.live_deployment_id !== null ? { liveDeploymentId: a.live_deployment_id } : {}),
    publicDomain: publicDomain(a.id, ingressAddress),
    enableDebugModeDeployments: a.enable_debug_mode_deployments === 1,
  };
}

/** The deployment's state in one phrase: deleted, refused by the runtime, approved, or how far its approvals are. */
export function deploymentStatus(d: DeploymentRow, approvals: number, threshold: number, observed?: ObservedDeployment): string {
  if (d.deleted_at !== null) return "deleted";
  if (observed?.refusal) return `refused: ${observed.refusal}`;
  if (d.approved_at !== null) return "approved";
  return `awaiting approvals ${approvals}/${threshold}`;
}

export function deploymentView(
  d: DeploymentRow,
  app: AppRow,
  sets: Map<string, OperatorSetWithMembers>,
  approvals: readonly ApprovalRow[],
  observed: ObservedDeployment | undefined,
) {
  const spec = json<DeploymentSpec>(d.spec)!;
  const manifestSet = sets.get(app.manifest_set_id)!;
  const operators = new Map<string, OperatorRow>(manifestSet.operators.map((o) => [o.id, o]));
  const mine = approvals.filter((a) => a.deployment_id === d.id && operators.has(a.operator_id));
  return {
    id: d.id,
    organizationId: d.organization_id,
    appId: d.app_id,
    manifestSet: operatorSetView(manifestSet),
    shareSet: operatorSetView(sets.get(app.share_set_id)!),
    manifest: {
      id: d.manifest_id,
      manifest: d.manifest,
      createdAt: timestampObject(d.created_at),
      updatedAt: timestampObject(d.created_at),
    },
    manifestApprovals: mine.map((a) => ({
      id: a.id,
      manifestId: a.manifest_id,
      operator: operatorView(operators.get(a.operator_id)!),
      approval: Buffer.from(a.signature, "hex").toString("base64"),
      createdAt: timestampObject(a.created_at),
      updatedAt: timestampObject(a.created_at),
    })),
    qosVersion: spec.qosVersion,
    pivotContainer: {
      containerUrl: spec.pivotContainerImageUrl,
      path: spec.pivotPath,
      args: spec.pivotArgs,
      hasPullSecret: spec.hasPullSecret,
      healthCheckType: spec.healthCheckType,
      healthCheckPort: spec.healthCheckPort,
      publicIngressPort: spec.publicIngressPort,
    },
    createdAt: timestampObject(d.created_at),
    updatedAt: timestampObject(d.updated_at),
    delete: d.deleted_at !== null,
    debugMode: spec.debugMode,
    replicas: d.replicas,
    manifestDigest: d.manifest_digest,
    status: deploymentStatus(d, mine.length, manifestSet.threshold, observed),
  };
}
