// The TVC half of `sigil serve`: the runtime SIGIL_TVC_RUNTIME names, its controller and the
// ingress, started once the store is open and stopped before it closes.
import path from "node:path";
import type client from "prom-client";
import type { Config } from "../config.ts";
import type { Db } from "../store/schema.ts";
import type { ServiceState } from "../service-state.ts";
import { LocalRuntime, type RuntimeLog } from "./local-runtime.ts";
import { startController, type TvcController } from "./controller.ts";
import { startIngress, type TvcIngress } from "./ingress.ts";
import { TvcMetrics } from "./metrics.ts";
import { resolveIsolation } from "./isolation.ts";

export interface TvcService {
  /** Undefined when TVC is off (no SIGIL_TVC_IMAGE_ROOT). */
  controller: TvcController | undefined;
  /** Undefined when its port could not be bound (logged): the API runs on without it. */
  ingress: TvcIngress | undefined;
  stop(): Promise<void>;
}

export async function startTvc(opts: {
  config: Pick<
    Config,
    | "tvcRuntime"
    | "tvcIngressPort"
    | "tvcReconcileMs"
    | "tvcPublicAddress"
    | "host"
    | "dataDir"
    | "shutdownGraceMs"
    | "tvcImageRoot"
    | "tvcUser"
    | "tvcSandbox"
  >;
  db: Db;
  state: ServiceState;
  log: RuntimeLog;
  registry?: client.Registry;
}): Promise<TvcService> {
  const { config, db, state, log } = opts;
  // TVC is an operator feature (docs/tvc-isolation.md §1): without an image root nothing runs —
  // not even deployments approved earlier — and get_app_status reports nothing running.
  const imageRoot = config.tvcImageRoot;
  if (!imageRoot) {
    log.info({}, "tvc is off (SIGIL_TVC_IMAGE_ROOT is not set): TVC activities are refused and no replica runs");
    return { controller: undefined, ingress: undefined, async stop() {} };
  }
  // Before anything runs: a sandbox or user that cannot be had stops startup (tvc/isolation.ts).
  const isolation = await resolveIsolation(config, log);
  const metrics = new TvcMetrics(opts.registry);
  const runtime = new LocalRuntime({
    log,
    metrics,
    imageRoot,
    isolation,
    pidDir: path.join(config.dataDir, "tvc-replicas"),
    // Replicas must be gone before the shutdown deadline cuts the service.
    stopGraceMs: Math.max(100, Math.min(5_000, Math.floor(config.shutdownGraceMs / 2))),
  });
  metrics.observeFrom(() => runtime.observe());
  // Processes a killed predecessor left behind go before the desired ones start.
  await runtime.reapStale();
  const controller = startController({ db, runtime, observations: state.tvc, log, metrics, intervalMs: config.tvcReconcileMs });
  let ingress: TvcIngress | undefined;
  try {
    ingress = await startIngress({ db, runtime, log, metrics, host: config.host, port: config.tvcIngressPort });
    state.tvc.ingressAddress = config.tvcPublicAddress ?? `localhost:${ingress.port}`;
    log.info({ port: ingress.port, url: `${ingress.url}/apps/<appId>/`, publicAddress: state.tvc.ingressAddress }, "tvc ingress listening");
  } catch (err) {
    log.error(
      { err, port: config.tvcIngressPort },
      "tvc ingress could not listen (SIGIL_TVC_INGRESS_PORT); apps are not reachable through it",
    );
  }
  return {
    controller,
    ingress,
    async stop() {
      await ingress?.close();
      await controller.stop();
    },
  };
}
