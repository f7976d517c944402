// What the TVC runtime last observed, per deployment (docs/tvc.md §5.1): written by the controller
// (tvc/controller.ts) after every reconcile pass and runtime event, read by the queries
// (get_app_status, get_tvc_deployment). Per process and per store (on ServiceState): the
// desired state is in the database, what runs is this process's runtime's.

export interface ObservedDeployment {
  deploymentId: string;
  appId: string;
  desiredReplicas: number;
  readyReplicas: number;
  /** Epoch ms of the last change the runtime saw. */
  lastUpdatedMs: number;
  /** Why the runtime refuses to run it (e.g. the executable's digest is not expectedPivotDigest). */
  refusal?: string;
}

export class TvcObservations {
  readonly #byDeployment = new Map<string, ObservedDeployment>();
  /**
   * host[:port] clients reach this process's TVC ingress at (SIGIL_TVC_PUBLIC_ADDRESS, else
   * localhost and the port it bound): the start of every app's publicDomain. Set by startTvc.
   */
  ingressAddress: string | undefined;

  set(o: ObservedDeployment): void {
    this.#byDeployment.set(o.deploymentId, o);
  }
  delete(deploymentId: string): void {
    this.#byDeployment.delete(deploymentId);
  }
  get(deploymentId: string): ObservedDeployment | undefined {
    return this.#byDeployment.get(deploymentId);
  }
  forApp(appId: string): ObservedDeployment[] {
    return [...this.#byDeployment.values()].filter((o) => o.appId === appId);
  }
}
