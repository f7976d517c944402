// The TVC runtime's metrics (docs/tvc.md §8: everything the runtime does shows in logs and
// metrics), registered on the registry /metrics serves (server/app.ts `metricsRegistry`).
// Replica gauges are read from the runtime at scrape time, so a removed deployment's series
// disappear with it. Labels are deployment and app ids the database holds (bounded by what
// operators approved), never anything a request names.
import client from "prom-client";
import type { ObservedDeployment } from "./observed.ts";

type Ids = "app_id" | "deployment_id";

export class TvcMetrics {
  readonly restarts: client.Counter<Ids>;
  readonly refusals: client.Counter<Ids>;
  readonly ingressRequests: client.Counter<"app_id" | "status">;
  readonly reconcilePasses: client.Counter<"outcome">;
  #observe: () => ObservedDeployment[] = () => [];

  constructor(registry?: client.Registry) {
    const registers = registry ? [registry] : [];
    const observe = () => this.#observe();
    new client.Gauge<Ids>({
      name: "sigil_tvc_replicas_desired",
      help: "Replicas a TVC deployment should run (approved, not deleted)",
      labelNames: ["app_id", "deployment_id"],
      registers,
      collect() {
        this.reset();
        for (const o of observe()) this.set({ app_id: o.appId, deployment_id: o.deploymentId }, o.desiredReplicas);
      },
    });
    new client.Gauge<Ids>({
      name: "sigil_tvc_replicas_ready",
      help: "Replicas of a TVC deployment passing their health check",
      labelNames: ["app_id", "deployment_id"],
      registers,
      collect() {
        this.reset();
        for (const o of observe()) this.set({ app_id: o.appId, deployment_id: o.deploymentId }, o.readyReplicas);
      },
    });
    new client.Gauge<Ids>({
      name: "sigil_tvc_deployment_refused",
      help: "1 while the runtime refuses to start a TVC deployment (e.g. executable digest mismatch)",
      labelNames: ["app_id", "deployment_id"],
      registers,
      collect() {
        this.reset();
        for (const o of observe()) if (o.refusal) this.set({ app_id: o.appId, deployment_id: o.deploymentId }, 1);
      },
    });
    this.restarts = new client.Counter<Ids>({
      name: "sigil_tvc_replica_restarts_total",
      help: "Replica processes restarted after they exited or failed to start",
      labelNames: ["app_id", "deployment_id"],
      registers,
    });
    this.refusals = new client.Counter<Ids>({
      name: "sigil_tvc_start_refusals_total",
      help: "Replica starts refused because the executable is missing, outside the image, or its sha256 is not expectedPivotDigest",
      labelNames: ["app_id", "deployment_id"],
      registers,
    });
    this.ingressRequests = new client.Counter<"app_id" | "status">({
      name: "sigil_tvc_ingress_requests_total",
      help: 'Requests through the TVC ingress by app and answer status (app_id "unknown" for apps that do not exist)',
      labelNames: ["app_id", "status"],
      registers,
    });
    this.reconcilePasses = new client.Counter<"outcome">({
      name: "sigil_tvc_reconcile_passes_total",
      help: "Controller reconcile passes by outcome (ok, error)",
      labelNames: ["outcome"],
      registers,
    });
  }

  /** Where the replica gauges read from at scrape time (the runtime's observations). */
  observeFrom(fn: () => ObservedDeployment[]): void {
    this.#observe = fn;
  }
}
