// Sends lanes' batches (send-batch.ts) on a worker thread. While the API keeps the main event
// loop busy, a lane awaiting an HTTP answer there advances about once per loop turn; on the
// worker's own loop it advances as answers come. The database work (claims, records, fan-out)
// stays with the dispatcher on the main thread.
//
// Failure never costs more than a resend: if the worker cannot start or dies, the lanes it had
// are answered as given back (released uncounted; at-least-once allows the same event id to go
// again), one warning is logged, and lanes are sent in this thread until a new worker is
// started after a backoff. A worker that dies before it ever started is not tried again: the
// lanes go on in this thread for good.
import { Worker } from "node:worker_threads";
import { DeliveryAgents } from "./deliver.ts";
import { givenBackWhole, sendBatch, type Batch, type BatchResult } from "./send-batch.ts";
import type { SigningKey } from "./signing-keys.ts";
import type { WebhookUrlPolicy } from "./url-policy.ts";
import type { FromWorker, ToWorker, WorkerSettings } from "./delivery-worker-protocol.ts";

/** First wait before a new worker after one died; doubled per death, up to the cap. */
const RESTART_MIN_MS = 100;
const RESTART_MAX_MS = 30_000;
/** A worker that ran this long before dying resets the backoff. */
const HEALTHY_MS = 60_000;

export interface LaneSender {
  send(batch: Batch, key: SigningKey): Promise<BatchResult>;
  /** Cuts attempts in flight (their lanes are answered, given back), then ends the worker. */
  stop(): Promise<void>;
  /** Tests: ends the worker as a crash would. False when no worker runs. */
  killWorker(): Promise<boolean>;
}

export interface LaneSenderOptions {
  /** Send on a worker thread (false: always in this thread). */
  worker: boolean;
  maxSocketsPerOrigin: number;
  log: { warn(obj: object, msg: string): void };
  /** Where deliveries may go; the worker thread is given the same. */
  urls: WebhookUrlPolicy;
}

interface Running {
  worker: Worker;
  ready: boolean;
  startedAt: number;
  /** The signing key this worker holds. */
  keyId?: string;
  pending: Map<number, { batch: Batch; resolve: (r: BatchResult) => void; reject: (e: Error) => void }>;
}

export function laneSender(opts: LaneSenderOptions): LaneSender {
  const stopping = new AbortController();
  let stopped = false;
  // This thread's own connections, for lanes sent here (no worker, or between workers).
  let agents: DeliveryAgents | undefined;
  let current: Running | undefined;
  let useWorker = opts.worker;
  let retryAt = 0;
  let backoff = RESTART_MIN_MS;
  let nextId = 1;

  function inProcess(batch: Batch, key: SigningKey): Promise<BatchResult> {
    agents ??= new DeliveryAgents(opts.maxSocketsPerOrigin);
    return sendBatch(batch, key, { signal: stopping.signal, agents, urls: opts.urls });
  }

  function start(): Running {
    const settings: WorkerSettings = { allowLoopback: opts.urls.allowLoopback, maxSocketsPerOrigin: opts.maxSocketsPerOrigin };
    // src/webhooks/delivery-worker.mjs registers tsx; dist/cli/delivery-worker.mjs is the bundle's.
    const worker = new Worker(new URL("./delivery-worker.mjs", import.meta.url), { workerData: settings });
    const r: Running = { worker, ready: false, startedAt: Date.now(), pending: new Map() };
    worker.unref(); // referenced only while lanes are out (see send)
    worker.on("message", (m: FromWorker) => {
      if (m.type === "ready") {
        r.ready = true;
        return;
      }
      const p = r.pending.get(m.id);
      if (!p) return;
      r.pending.delete(m.id);
      if (r.pending.size === 0) worker.unref();
      if (m.result) p.resolve(m.result);
      else p.reject(new Error(`delivery worker: ${m.error ?? "no result"}`));
    });
    worker.on("error", (err) => lost(r, err.message));
    worker.on("exit", (code) => lost(r, `exit code ${code}`));
    return r;
  }

  /** The worker died (or could not start): its lanes go again; the next one starts later. */
  function lost(r: Running, why: string): void {
    if (current !== r) return; // 'error' is followed by 'exit': handled once
    current = undefined;
    if (!stopped) {
      if (!r.ready) useWorker = false;
      else {
        if (Date.now() - r.startedAt >= HEALTHY_MS) backoff = RESTART_MIN_MS;
        retryAt = Date.now() + backoff;
        backoff = Math.min(backoff * 2, RESTART_MAX_MS);
      }
      opts.log.warn(
        { why, lanes: r.pending.size, ...(useWorker ? { restartInMs: retryAt - Date.now() } : {}) },
        useWorker
          ? "webhook delivery worker died; its lanes go again, sent on the main thread until a new worker starts"
          : "webhook delivery worker could not start; deliveries are sent on the main thread",
      );
    }
    for (const p of r.pending.values()) p.resolve(givenBackWhole(p.batch));
    r.pending.clear();
    void r.worker.terminate().catch(() => {});
  }

  return {
    send(batch, key) {
      if (stopped) return Promise.resolve(givenBackWhole(batch));
      if (!useWorker || (!current && Date.now() < retryAt)) return inProcess(batch, key);
      let r: Running;
      try {
        r = current ??= start();
      } catch (err) {
        useWorker = false;
        opts.log.warn({ why: (err as Error).message }, "webhook delivery worker could not start; deliveries are sent on the main thread");
        return inProcess(batch, key);
      }
      const id = nextId++;
      return new Promise<BatchResult>((resolve, reject) => {
        const m: ToWorker = { type: "lane", id, batch, keyId: key.id, ...(r.keyId === key.id ? {} : { key }) };
        r.pending.set(id, { batch, resolve, reject });
        if (r.pending.size === 1) r.worker.ref();
        try {
          r.worker.postMessage(m);
          r.keyId = key.id;
        } catch (err) {
          r.pending.delete(id);
          reject(err as Error);
        }
      });
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      stopping.abort();
      const r = current;
      if (r) {
        // The worker aborts its attempts and answers every lane it has (given back).
        const answered = new Promise<void>((resolve) => {
          const check = () => r.pending.size === 0 && resolve();
          r.worker.on("message", check);
          r.worker.once("exit", () => resolve());
          check();
        });
        r.worker.postMessage({ type: "abort" } satisfies ToWorker);
        await answered;
        current = undefined;
        await r.worker.terminate();
        for (const p of r.pending.values()) p.resolve(givenBackWhole(p.batch));
      }
      agents?.destroy();
    },
    async killWorker() {
      const r = current;
      if (!r) return false;
      await r.worker.terminate();
      return true;
    },
  };
}
