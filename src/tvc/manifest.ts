// The manifest of a TVC deployment (docs/tvc.md §3.2): what operators of the app's manifest set sign
// before the deployment may run. Derived once, at create_tvc_deployment, from the deployment's
// spec and the app's operator sets, and stored as its exact bytes: approvals are verified
// against those bytes, never against a re-derivation (a later change to this module must not
// invalidate signatures already given).
//
// Bytes: canonical JSON — UTF-8, no whitespace, object keys sorted by code unit at every
// level, arrays in their meaningful order — so one deployment always gives one byte string
// and one digest (sha256, lower-case hex).
import { createHash } from "node:crypto";
import type { DeploymentSpec } from "./spec.ts";

export const MANIFEST_FORMAT = "sigil-tvc-manifest/1";

export interface ManifestOperator {
  id: string;
  name: string;
  /** Compressed lower-case hex (tvc/operator-keys.ts). */
  publicKey: string;
}

export interface ManifestOperatorSet {
  id: string;
  name: string;
  threshold: number;
  /** In the set's member order. */
  operators: ManifestOperator[];
}

export interface ManifestInput {
  manifestId: string;
  deploymentId: string;
  appId: string;
  appName: string;
  quorumPublicKey: string;
  enableEgress: boolean;
  spec: DeploymentSpec;
  manifestSet: ManifestOperatorSet;
  shareSet: ManifestOperatorSet;
}

export interface Manifest {
  bytes: Buffer;
  /** sha256 of `bytes`, lower-case hex. */
  digest: string;
}

type JsonValue = string | number | boolean | null | JsonValue[] | { [k: string]: JsonValue };

/** JSON with sorted keys and no whitespace. Only what JSON holds: no undefined, no non-finite numbers. */
export function canonicalJson(value: JsonValue): string {
  if (value === null || typeof value === "string" || typeof value === "boolean") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error("canonicalJson: non-finite number");
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k]!)}`).join(",")}}`;
}

const setJson = (s: ManifestOperatorSet): JsonValue => ({
  id: s.id,
  name: s.name,
  threshold: s.threshold,
  members: s.operators.map((o) => ({ id: o.id, name: o.name, publicKey: o.publicKey })),
});

/** The manifest's content as a JSON value (what the bytes encode). */
export function manifestContent(m: ManifestInput): JsonValue {
  const s = m.spec;
  return {
    format: MANIFEST_FORMAT,
    manifestId: m.manifestId,
    deploymentId: m.deploymentId,
    namespace: { appId: m.appId, name: m.appName, nonce: s.nonce, quorumPublicKey: m.quorumPublicKey },
    qosVersion: s.qosVersion,
    pivot: {
      containerUrl: s.pivotContainerImageUrl,
      path: s.pivotPath,
      args: s.pivotArgs,
      expectedDigest: s.expectedPivotDigest,
      hasPullSecret: s.hasPullSecret,
    },
    healthCheck: { type: s.healthCheckType, port: s.healthCheckPort },
    publicIngressPort: s.publicIngressPort,
    replicas: s.replicas,
    debugMode: s.debugMode,
    enableEgress: m.enableEgress,
    manifestSet: setJson(m.manifestSet),
    shareSet: setJson(m.shareSet),
  };
}

export function buildManifest(m: ManifestInput): Manifest {
  const bytes = Buffer.from(canonicalJson(manifestContent(m)), "utf8");
  return { bytes, digest: createHash("sha256").update(bytes).digest("hex") };
}
