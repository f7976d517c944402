// Pieces for end-to-end webhook tests: a real node:http receiver on 127.0.0.1 that records
// every request (raw body bytes, headers as received) and answers per path as the test
// says (a status, or a promise of one to hold the request open); a deadline-bounded poll;
// and a read-only view of an instance's delivery bookkeeping (SQLite file or PostgreSQL).
import http from "node:http";
import net from "node:net";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
export { freePort } from "./ports.ts";
import type { Instance } from "./server.ts";

export interface Receipt {
  /** Arrival order across this sink, from 0. */
  seq: number;
  method: string;
  path: string;
  /** Lower-cased names, as node parses them. */
  headers: http.IncomingHttpHeaders;
  /** Name/value pairs exactly as sent (to count repeated headers). */
  rawHeaders: string[];
  /** The exact body bytes received. */
  body: Buffer;
  receivedAt: number;
  /** What the sink answered, once it did (undefined while held, or if the peer vanished). */
  answered?: number;
  /** When the exchange ended (answer finished, or the sender closed the connection). */
  closedAt?: number;
}

/**
 * An answer: a status, a status with extra headers (e.g. a redirect's Location), or a
 * trickle: the status line and headers at once, then one body byte every `everyMs` for
 * `forMs` (a receiver that never goes quiet long enough for an inactivity timeout).
 */
export type Answer =
  number | { status: number; headers: Record<string, string> } | { trickle: { status: number; everyMs: number; forMs: number } };
/** How a path answers: now, or a promise of an answer (the request is held until then). */
export type Responder = (r: Receipt) => Answer | Promise<Answer>;

export class WebhookSink {
  readonly receipts: Receipt[] = [];
  port = 0;
  #server: http.Server | undefined;
  readonly #responders = new Map<string, Responder>();

  /** Answers requests to `path` with `responder` (default: 200 for every path). */
  on(path: string, responder: Responder): this {
    this.#responders.set(path, responder);
    return this;
  }

  /** Listens on 127.0.0.1:`port` (0: any free port). */
  async start(port = 0): Promise<this> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const r: Receipt = {
          seq: this.receipts.length,
          method: req.method ?? "",
          path: req.url ?? "",
          headers: req.headers,
          rawHeaders: req.rawHeaders,
          body: Buffer.concat(chunks),
          receivedAt: Date.now(),
        };
        this.receipts.push(r);
        res.on("close", () => (r.closedAt = Date.now()));
        const responder = this.#responders.get(r.path) ?? (() => 200);
        void Promise.resolve()
          .then(() => responder(r))
          .then(
            (answer) => {
              if (res.destroyed) return; // the sender is gone (e.g. killed mid-request)
              if (typeof answer === "object" && "trickle" in answer) {
                const { status, everyMs, forMs } = answer.trickle;
                res.writeHead(status, { "content-type": "text/plain" });
                res.flushHeaders();
                r.answered = status;
                const until = Date.now() + forMs;
                const drip = setInterval(() => {
                  if (res.destroyed || Date.now() > until) {
                    clearInterval(drip);
                    if (!res.destroyed) res.end(".");
                    return;
                  }
                  res.write(".");
                }, everyMs);
                res.on("close", () => clearInterval(drip));
                return;
              }
              const { status, headers } = typeof answer === "number" ? { status: answer, headers: {} } : answer;
              res.writeHead(status, { ...headers, "content-type": "text/plain" });
              res.end(String(status));
              r.answered = status;
            },
            () => res.destroy(),
          );
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
    this.#server = server;
    this.port = (server.address() as net.AddressInfo).port;
    return this;
  }

  url(p: string): string {
    return `http://127.0.0.1:${this.port}${p}`;
  }

  at(p: string): Receipt[] {
    return this.receipts.filter((r) => r.path === p);
  }

  async stop(): Promise<void> {
    const s = this.#server;
    if (!s) return;
    this.#server = undefined;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}

/**
 * Polls `probe` until it returns something other than undefined/false, or fails after
 * `timeoutMs` with `what` and the last probed state (`describe`).
 */
export async function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  opts: { timeoutMs?: number; intervalMs?: number; describe?: () => unknown } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) {
      const state = opts.describe ? `\nlast state: ${JSON.stringify(opts.describe(), null, 1)?.slice(0, 4000)}` : "";
      throw new Error(`timed out after ${opts.timeoutMs ?? 20_000} ms waiting for: ${what}${state}`);
    }
    await new Promise((resolve) => setTimeout(resolve, opts.intervalMs ?? 25));
  }
}

export interface DeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  status: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
}

export interface EventRow {
  id: string;
  organization_id: string;
  event_type: string;
  activity_id: string;
  fanned_out: number;
  created_at: number;
}

/** Read-only access to an instance's webhook tables. */
export interface WebhookTables {
  /** An endpoint's deliveries, in delivery order (created_at, id). */
  deliveries(endpointId: string): Promise<DeliveryRow[]>;
  /** Deliveries of one event, to any endpoint. */
  deliveriesOfEvent(eventId: string): Promise<DeliveryRow[]>;
  /** Events of one activity, oldest first. */
  events(activityId: string): Promise<EventRow[]>;
  close(): Promise<void>;
}

const DELIVERY_COLUMNS = "id, event_id, endpoint_id, status, attempts, last_status, last_error, created_at";
const EVENT_COLUMNS = "id, organization_id, event_type, activity_id, fanned_out, created_at";

function deliveryRow(r: Record<string, unknown>): DeliveryRow {
  return {
    id: String(r.id),
    event_id: String(r.event_id),
    endpoint_id: String(r.endpoint_id),
    status: String(r.status),
    attempts: Number(r.attempts),
    last_status: r.last_status === null ? null : Number(r.last_status),
    last_error: r.last_error === null ? null : String(r.last_error),
    created_at: Number(r.created_at),
  };
}

function eventRow(r: Record<string, unknown>): EventRow {
  return {
    id: String(r.id),
    organization_id: String(r.organization_id),
    event_type: String(r.event_type),
    activity_id: String(r.activity_id),
    fanned_out: Number(r.fanned_out),
    created_at: Number(r.created_at),
  };
}

export async function openWebhookTables(inst: Instance): Promise<WebhookTables> {
  const url = inst.env.DATABASE_URL;
  if (url) {
    const client = new pg.Pool({ connectionString: url, max: 2 });
    const q = async (text: string, values: unknown[]) => (await client.query(text, values)).rows as Record<string, unknown>[];
    return {
      deliveries: async (id) =>
        (await q(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY created_at, id`, [id])).map(
          deliveryRow,
        ),
      deliveriesOfEvent: async (id) =>
        (await q(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE event_id = $1 ORDER BY id`, [id])).map(deliveryRow),
      events: async (id) =>
        (await q(`SELECT ${EVENT_COLUMNS} FROM webhook_events WHERE activity_id = $1 ORDER BY created_at, id`, [id])).map(eventRow),
      close: () => client.end(),
    };
  }
  const db = new Database(path.join(inst.dataDir, "sigil.db"), { readonly: true, fileMustExist: true });
  const all = (sql: string, v: string) => db.prepare(sql).all(v) as Record<string, unknown>[];
  return {
    deliveries: async (id) =>
      all(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY created_at, id`, id).map(deliveryRow),
    deliveriesOfEvent: async (id) =>
      all(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE event_id = ? ORDER BY id`, id).map(deliveryRow),
    events: async (id) =>
      all(`SELECT ${EVENT_COLUMNS} FROM webhook_events WHERE activity_id = ? ORDER BY created_at, id`, id).map(eventRow),
    close: async () => {
      db.close();
    },
  };
}
