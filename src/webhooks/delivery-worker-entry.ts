// The delivery worker's thread (delivery-worker.ts starts it): sends the lanes posted to it,
// many at once, each answered by its id, over this thread's own kept-alive connections. It
// signs, resolves and checks addresses, and speaks HTTP; it never touches the database.
import { parentPort, workerData } from "node:worker_threads";
import { DeliveryAgents } from "./deliver.ts";
import { sendBatch } from "./send-batch.ts";
import type { SigningKey } from "./signing-keys.ts";
import { webhookUrlPolicy } from "./url-policy.ts";
import type { FromWorker, ToWorker, WorkerSettings } from "./delivery-worker-protocol.ts";

const port = parentPort!;
const settings = workerData as WorkerSettings;
// The main thread's policy, rebuilt from the plain settings it sent.
const urls = webhookUrlPolicy({ allowLoopback: settings.allowLoopback });
const agents = new DeliveryAgents(settings.maxSocketsPerOrigin);
const stopping = new AbortController();
/** The signing key last sent (the dispatcher sends a key once, then only its id). */
let key: SigningKey | undefined;

const answer = (m: FromWorker) => port.postMessage(m);

port.on("message", (m: ToWorker) => {
  if (m.type === "abort") {
    stopping.abort();
    return;
  }
  if (m.key) key = m.key;
  if (!key || key.id !== m.keyId) {
    answer({ type: "answer", id: m.id, error: `signing key ${m.keyId} was not sent to the delivery worker` });
    return;
  }
  sendBatch(m.batch, key, { signal: stopping.signal, agents, urls }).then(
    (result) => answer({ type: "answer", id: m.id, result }),
    (err: unknown) => answer({ type: "answer", id: m.id, error: (err as Error).message }),
  );
});
answer({ type: "ready" });
