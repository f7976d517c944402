// The TVC reconcile loop (docs/tvc.md §5.1): read the desired deployments from the database, hand the
// whole set to the runtime, publish what the runtime observes on ServiceState.tvc (which
// get_app_status and get_tvc_deployment read). One pass at start, then one every `intervalMs`
// after the previous one ended (passes never overlap). A failing pass (database down…) is
// logged and counted; the next one runs as usual and the runtime keeps what it runs meanwhile.
//
// Restarts: nothing is adopted. A new controller starts from an empty runtime and starts what
// the database says is desired (a killed service's leftovers are ended by the local runtime's
// reapStale first).
import type { Db } from "../store/schema.ts";
import type { TvcObservations } from "./observed.ts";
import type { TvcRuntime } from "./runtime.ts";
import type { TvcMetrics } from "./metrics.ts";
import type { RuntimeLog } from "./local-runtime.ts";
import { readDesired } from "./desired.ts";

export interface ControllerOptions {
  db: Db;
  runtime: TvcRuntime;
  observations: TvcObservations;
  log: RuntimeLog;
  metrics?: TvcMetrics;
  /** Between the end of one pass and the start of the next. Default 1000 ms. */
  intervalMs?: number;
}

export interface TvcController {
  /** Runs one pass now (after the one under way, if any). */
  reconcileNow(): Promise<void>;
  /** Stops the loop, then the runtime (its processes), and clears the observations. */
  stop(): Promise<void>;
}

export function startController(opts: ControllerOptions): TvcController {
  const { db, runtime, observations, log, metrics } = opts;
  const intervalMs = opts.intervalMs ?? 1000;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  /** Passes run one after another (the timer's and reconcileNow's). */
  let chain: Promise<void> = Promise.resolve();
  /** Deployments the observations hold, so vanished ones are removed. */
  let published = new Set<string>();
  /** Invalid specs already logged (once each, not every second). */
  const reportedInvalid = new Set<string>();
  let failing = false;

  const publish = () => {
    const now = new Set<string>();
    for (const o of runtime.observe()) {
      observations.set(o);
      now.add(o.deploymentId);
    }
    for (const id of published) if (!now.has(id)) observations.delete(id);
    published = now;
  };
  // Ready/unready/refused between passes show at once, not a pass later.
  const unsubscribe = runtime.onEvent(() => {
    if (!stopped) publish();
  });

  const pass = async () => {
    try {
      const { desired, invalid } = await readDesired(db);
      for (const bad of invalid) {
        if (reportedInvalid.has(bad.deploymentId)) continue;
        reportedInvalid.add(bad.deploymentId);
        log.error({ tvc: bad }, "tvc deployment has a spec the runtime cannot read; it is not run");
      }
      if (stopped) return;
      await runtime.apply(desired);
      publish();
      metrics?.reconcilePasses.inc({ outcome: "ok" });
      if (failing) log.info({}, "tvc reconcile passes again");
      failing = false;
    } catch (err) {
      metrics?.reconcilePasses.inc({ outcome: "error" });
      // Logged on the first failure of a run of them, then at debug: a database outage would
      // otherwise write a line a second.
      if (!failing) log.error({ err }, "tvc reconcile pass failed; retrying every interval");
      else log.debug({ err }, "tvc reconcile pass failed");
      failing = true;
    }
  };

  const serial = () => (chain = chain.then(pass));
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = undefined;
      void serial().finally(schedule);
    }, intervalMs);
    timer.unref();
  };
  void serial().finally(schedule);
  log.info({ runtime: runtime.name, intervalMs }, "tvc controller started");

  return {
    reconcileNow() {
      return serial();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (timer) clearTimeout(timer);
      await chain;
      unsubscribe();
      await runtime.stop();
      for (const id of published) observations.delete(id);
      published.clear();
      log.info({}, "tvc controller stopped");
    },
  };
}
