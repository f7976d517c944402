// The seam between desired TVC deployments (the database, tvc/desired.ts) and whatever runs
// them. The controller (tvc/controller.ts) calls `apply` with the complete desired set on
// every pass and publishes `observe()`; the ingress (tvc/ingress.ts) asks `endpoints` where a
// deployment's ready replicas answer. The local process runtime (tvc/local-runtime.ts) is the
// built-in implementation (SIGIL_TVC_RUNTIME=local).
//
// How a Kubernetes adapter maps onto the same interface:
// - apply(desired): one apps/v1 Deployment per deployment id (labels app-id, deployment-id),
//   `replicas` = spec.replicas, the container image pinned by digest (image@sha256:… plays the
//   part of expectedPivotDigest), command = pivotPath + pivotArgs, PORT from the container
//   port, a readinessProbe from healthCheckType (httpGet /health or grpc) on that port. Ones no
//   longer desired are deleted (Kubernetes does the SIGTERM / grace / SIGKILL). `live` moves
//   one Service per app (selector deployment-id = the live one): a label switch.
// - observe(): from each Deployment's status (readyReplicas, replicas, the Progressing/Available
//   conditions' lastUpdateTime); an image pull or digest failure becomes `refusal`.
// - endpoints(): the Service's cluster address (Kubernetes balances), or the ready pod IPs of
//   its EndpointSlice.
// - events: from a watch on the Deployments and Pods (restarts = containerStatuses.restartCount).
import type { DesiredDeployment } from "./spec.ts";
import type { ObservedDeployment } from "./observed.ts";

/** Where one ready replica answers (the ingress forwards there). */
export interface ReplicaEndpoint {
  host: string;
  port: number;
}

/** Something the runtime did or saw; the controller logs it and refreshes the observations. */
export interface RuntimeEvent {
  kind: "started" | "ready" | "unready" | "exited" | "restart-scheduled" | "refused" | "stopped" | "removed";
  deploymentId: string;
  appId: string;
  /** Replica index (0-based) when the event is about one replica. */
  replica?: number;
  pid?: number;
  port?: number;
  /** Exit code/signal, refusal reason, backoff delay… in words. */
  detail?: string;
  /** Backoff before the next start, for restart-scheduled. */
  delayMs?: number;
}

export interface TvcRuntime {
  /** What the runtime is, for logs ("local"). */
  readonly name: string;
  /**
   * Converge on `desired`, the complete set of deployments that should run now (approved, not
   * deleted). Deployments missing from it are stopped. Idempotent: called on every
   * reconcile pass with the same list when nothing changed. Resolves once the changes are
   * under way (processes started or stopping), not once replicas are ready.
   */
  apply(desired: readonly DesiredDeployment[]): Promise<void>;
  /** What runs, per deployment the runtime knows (desired ones, including refused ones). */
  observe(): ObservedDeployment[];
  /** Where the ready replicas of a deployment answer; empty when none is ready. */
  endpoints(deploymentId: string): ReplicaEndpoint[];
  /** Subscribe to events; returns the unsubscribe function. */
  onEvent(listener: (e: RuntimeEvent) => void): () => void;
  /** Stop everything it runs (graceful, then forced) and forget it. */
  stop(): Promise<void>;
}
