// The delivery worker (src/webhooks/delivery-worker.ts): lanes are sent on a worker thread;
// a worker that dies mid-burst costs resends, never a delivery or the endpoint's order; a
// stop cuts the worker's attempts in flight. Real service (SQLite, in process), real
// dispatcher and worker thread, a real loopback receiver.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { completed, inproc, LOOPBACK_WEBHOOKS, webhookUrlsOf, type Harness } from "../helpers/inproc.ts";
import { pollUntil } from "../helpers/raw-http.ts";
import { startDispatcher, type Dispatcher, type DispatcherOptions } from "../../src/webhooks/dispatcher.ts";

interface Receiver {
  url: string;
  /** Activity ids in the order their deliveries arrived (repeats included). */
  got: string[];
  /** Called with each request before it is answered; answering is up to `hold`. */
  hold?: (n: number, res: http.ServerResponse) => boolean;
  close(): Promise<void>;
}

async function receiver(): Promise<Receiver> {
  const r: Receiver = { url: "", got: [], close: async () => {} };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      r.got.push(String((JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: unknown }).id));
      if (r.hold?.(r.got.length, res)) return;
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  r.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return r;
}

/** Activities each writing one event, in order; returns their ids. */
async function burst(h: Harness, n: number, label: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await h.submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: `${label}-${i}`, userIds: [] });
    completed(res, "createUserTagResult");
    ids.push(res.json.activity.id as string);
  }
  return ids;
}

/** Every id of `sent` arrived, and each first arrived after every earlier one (repeats allowed). */
function assertInOrder(got: readonly string[], sent: readonly string[]): void {
  const mine = new Set(sent);
  const firsts: string[] = [];
  for (const id of got) if (mine.has(id) && !firsts.includes(id)) firsts.push(id);
  assert.deepEqual(firsts, sent);
}

describe("webhook delivery worker", () => {
  let h: Harness;
  let rx: Receiver;
  const warnings: string[] = [];
  const log = { info() {}, warn: (_o: object, m: string) => void warnings.push(m) };

  function dispatcher(over: Partial<DispatcherOptions> = {}): Dispatcher {
    const d = startDispatcher({
      db: h.service.store.db,
      state: h.service.state,
      masterKey: h.service.masterKey,
      log,
      pollMs: 10,
      timeoutMs: 2000,
      maxAttempts: 3,
      retrySchedule: [0, 10, 10],
      webhookUrls: webhookUrlsOf(h.service),
      ...over,
    });
    h.onEvents(d.wake);
    return d;
  }

  before(async () => {
    h = await inproc("sqlite", LOOPBACK_WEBHOOKS);
    rx = await receiver();
    completed(
      await h.submit("create_webhook_endpoint", "ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT", { url: rx.url, name: "worker" }),
      "createWebhookEndpointResult",
    );
  });
  after(async () => {
    h.onEvents(undefined);
    await rx.close();
    await h.close();
  });

  it("a worker killed mid-burst: every delivery still arrives, in order; a new worker takes over", async () => {
    warnings.length = 0;
    rx.got.length = 0;
    const d = dispatcher();
    try {
      // The 10th request kills the worker before it is answered: the lane in flight is given back.
      let killed: Promise<boolean> | undefined;
      rx.hold = (n) => {
        if (n === 10) killed = d.killWorker();
        return false;
      };
      const sent = await burst(h, 40, "a");
      await pollUntil("the burst delivered", 20_000, 10, async () => (sent.every((id) => rx.got.includes(id)) ? true : undefined));
      assert.equal(await killed, true, "a worker was running and was killed");
      assertInOrder(rx.got, sent);
      assert.deepEqual(warnings.filter((w) => /delivery worker died/.test(w)).length, 1, warnings.join("\n"));
      // Recorded after the receiver answered: awaited, not assumed.
      await pollUntil("every delivery recorded as delivered", 5_000, 10, async () => {
        const rows = await h.service.store.db.selectFrom("webhook_deliveries").select(["status"]).execute();
        return rows.every((r) => r.status === "delivered") ? true : undefined;
      });

      // After the backoff the next lanes go to a new worker (killing it reports a running one).
      rx.hold = undefined;
      await pollUntil("a new worker", 5_000, 20, async () => {
        const more = await burst(h, 1, `b${rx.got.length}`);
        await pollUntil("delivered", 5_000, 5, async () => (rx.got.includes(more[0]!) ? true : undefined));
        return (await d.killWorker()) ? true : undefined;
      });
    } finally {
      rx.hold = undefined;
      await d.stop();
    }
  });

  it("SIGIL_WEBHOOK_WORKER=false: sent on the main thread, in order, no worker", async () => {
    rx.got.length = 0;
    const d = dispatcher({ worker: false });
    try {
      const sent = await burst(h, 10, "c");
      await pollUntil("the burst delivered", 10_000, 10, async () => (sent.every((id) => rx.got.includes(id)) ? true : undefined));
      assertInOrder(rx.got, sent);
      assert.equal(await d.killWorker(), false);
    } finally {
      await d.stop();
    }
  });

  it("stop() cuts the worker's attempts in flight: the delivery is given back uncounted", async () => {
    rx.got.length = 0;
    const d = dispatcher({ timeoutMs: 60_000 });
    const held: http.ServerResponse[] = [];
    let arrived!: () => void;
    const first = new Promise<void>((resolve) => (arrived = resolve));
    rx.hold = (_n, res) => {
      held.push(res);
      arrived();
      return true; // never answered
    };
    try {
      const [id] = await burst(h, 1, "d");
      await first;
      const t0 = Date.now();
      await d.stop();
      assert.ok(Date.now() - t0 < 5_000, `stop took ${Date.now() - t0} ms (attempt deadline 60 s)`);
      const events = await h.service.store.db.selectFrom("webhook_events").select("id").where("payload", "like", `%${id}%`).execute();
      const row = await h.service.store.db
        .selectFrom("webhook_deliveries")
        .select(["status", "attempts", "lease_until"])
        .where("event_id", "=", events[0]!.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, { status: "pending", attempts: 0, lease_until: 0 });
    } finally {
      rx.hold = undefined;
      for (const res of held) res.destroy();
    }
  });
});
