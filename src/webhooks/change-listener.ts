// PostgreSQL only: a dedicated connection LISTENing for changes to the set of webhook
// endpoints (store/webhooks.ts bumpWebhookVersion NOTIFYs in the changing transaction, so
// the notice arrives at commit, from whichever server made the change). While it listens,
// a dispatcher that knows of no active endpoint need not poll at all. When the connection
// is lost it reconnects with backoff, and `listening` is false meanwhile (the dispatcher
// polls then); after each (re)connect `onChange` is called, since notices may have been
// missed.
import pg from "pg";
import { WEBHOOK_CHANNEL } from "../store/webhooks.ts";

export interface ChangeListener {
  readonly listening: boolean;
  close(): Promise<void>;
}

export function listenForChanges(
  connectionString: string,
  onChange: () => void,
  log: { warn(obj: object, msg: string): void },
): ChangeListener {
  let client: pg.Client | undefined;
  let listening = false;
  let closed = false;
  let retryMs = 500;
  let timer: NodeJS.Timeout | undefined;

  const lost = (err: unknown) => {
    if (closed) return;
    if (listening) log.warn({ err }, "webhook change listener lost its connection; polling until it is back");
    listening = false;
    const c = client;
    client = undefined;
    c?.removeAllListeners();
    c?.on("error", () => {}); // a late error on a dropped client must not crash the process
    void c?.end().catch(() => {});
    timer = setTimeout(() => void connect(), retryMs); // connect() catches its own failures
    retryMs = Math.min(retryMs * 2, 30_000);
  };

  async function connect(): Promise<void> {
    if (closed) return;
    const c = new pg.Client({ connectionString });
    client = c;
    c.on("error", lost);
    c.on("end", () => lost(new Error("connection ended")));
    c.on("notification", () => onChange());
    try {
      await c.connect();
      await c.query(`LISTEN ${WEBHOOK_CHANNEL}`);
      if (closed || client !== c) return;
      listening = true;
      retryMs = 500;
      onChange();
    } catch (err) {
      if (client === c) lost(err);
    }
  }
  void connect();

  return {
    get listening() {
      return listening;
    },
    async close() {
      closed = true;
      listening = false;
      if (timer) clearTimeout(timer);
      const c = client;
      client = undefined;
      c?.removeAllListeners();
      c?.on("error", () => {});
      await c?.end().catch(() => {});
    },
  };
}
