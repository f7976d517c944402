// /healthz asked back to back while a piece of work runs: how long each answer took. A server
// whose event loop is held by one request answers /healthz late (docs/signing.md §6).
import assert from "node:assert/strict";

/** `work`'s result and the latency (ms) of every /healthz answer that came while it ran. */
export async function healthLatencies<T>(url: string, work: Promise<T>): Promise<{ result: T; latencies: number[] }> {
  let running = true;
  const latencies: number[] = [];
  const poller = (async () => {
    while (running) {
      const start = performance.now();
      const res = await fetch(`${url}/healthz`);
      await res.arrayBuffer();
      assert.equal(res.status, 200);
      latencies.push(performance.now() - start);
    }
  })();
  try {
    return { result: await work, latencies };
  } finally {
    running = false;
    await poller;
  }
}
