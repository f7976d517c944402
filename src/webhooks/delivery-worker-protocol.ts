// Messages between the dispatcher's thread and the delivery worker (delivery-worker.ts).
import type { Batch, BatchResult } from "./send-batch.ts";
import type { SigningKey } from "./signing-keys.ts";

export interface WorkerSettings {
  /** The main thread's WebhookUrlPolicy (url-policy.ts), as plain data. */
  allowLoopback: boolean;
  maxSocketsPerOrigin: number;
}

export type ToWorker =
  /** A lane to send; `key` (a KeyObject, cloned by postMessage) only when it changed. */
  | { type: "lane"; id: number; batch: Batch; keyId: string; key?: SigningKey }
  /** Stopping: cut attempts in flight; the lanes are answered (given back). */
  | { type: "abort" };

export type FromWorker = { type: "ready" } | { type: "answer"; id: number; result?: BatchResult; error?: string };
