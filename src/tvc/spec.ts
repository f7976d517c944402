// What a TVC deployment asks for (docs/tvc.md §3.1), as the create_tvc_deployment activity records it
// in tvc_deployments.spec (JSON) and the controller hands it to the runtime. One type for both
// sides: the API half (activities/tvc) writes it, the runtime half (tvc/controller.ts) reads it.

export type HealthCheckType = "TVC_HEALTH_CHECK_TYPE_HTTP" | "TVC_HEALTH_CHECK_TYPE_GRPC";

export interface DeploymentSpec {
  qosVersion: string;
  /** file://<absolute directory> for the local runtime. */
  pivotContainerImageUrl: string;
  /** Relative to the image directory; a leading "/" means its root. */
  pivotPath: string;
  pivotArgs: string[];
  /** sha256 (lower-case hex) the executable must have before every start. */
  expectedPivotDigest: string;
  healthCheckType: HealthCheckType;
  /** Recorded; the local runtime gives each replica its real port in PORT. */
  healthCheckPort: number;
  publicIngressPort: number;
  replicas: number;
  debugMode: boolean;
  nonce: number;
  hasPullSecret: boolean;
}

/** A deployment the controller wants running: approved (threshold reached) and not deleted. */
export interface DesiredDeployment {
  deploymentId: string;
  appId: string;
  organizationId: string;
  spec: DeploymentSpec;
  /** The app's live deployment: the one the ingress routes to. */
  live: boolean;
}
