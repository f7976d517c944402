// The TVC ingress (docs/tvc.md §6): one address per app, `http://<host>:<port>/apps/<appId>/<path>`,
// forwarded to a ready replica of the app's LIVE deployment (round robin) as `/<path>` with the
// query string. The live deployment is read from the database per request (a primary-key
// read), so set_tvc_app_live_deployment takes effect on the next request. Bodies stream both
// ways; hop-by-hop headers are dropped, X-Forwarded-For/-Host/-Proto/-Prefix are set.
//
// Answers of its own are JSON `{error, appId?}`: 404 unknown app (or a path outside /apps/),
// 503 the app has no live deployment or none of its replicas is ready, 502 the replica failed
// (connection refused/reset), 504 the replica did not answer in time.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Db } from "../store/schema.ts";
import type { TvcRuntime } from "./runtime.ts";
import type { TvcMetrics } from "./metrics.ts";
import type { RuntimeLog } from "./local-runtime.ts";

export interface IngressOptions {
  db: Db;
  runtime: TvcRuntime;
  log: RuntimeLog;
  metrics?: TvcMetrics;
  host: string;
  /** 0 = any free port. */
  port: number;
  /** Connect + response headers from the replica. Default 30 s. */
  upstreamTimeoutMs?: number;
  /** Idle socket on either side. Default 60 s. */
  idleTimeoutMs?: number;
}

export interface TvcIngress {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

const APP_PATH = /^\/apps\/([A-Za-z0-9-]{1,100})(\/[^?#]*)?(\?.*)?$/;

function forwardHeaders(headers: http.IncomingHttpHeaders | http.OutgoingHttpHeaders): http.OutgoingHttpHeaders {
  const drop = new Set(HOP_BY_HOP);
  // Headers named in Connection are hop-by-hop too.
  const conn = headers["connection"];
  if (typeof conn === "string") for (const h of conn.split(",")) drop.add(h.trim().toLowerCase());
  const out: http.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !drop.has(k.toLowerCase())) out[k] = v;
  return out;
}

export async function startIngress(opts: IngressOptions): Promise<TvcIngress> {
  const { db, runtime, log, metrics } = opts;
  const upstreamTimeoutMs = opts.upstreamTimeoutMs ?? 30_000;
  const idleTimeoutMs = opts.idleTimeoutMs ?? 60_000;
  const cursor = new Map<string, number>();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256, timeout: idleTimeoutMs });

  const answer = (res: http.ServerResponse, status: number, error: string, appId?: string) => {
    metrics?.ingressRequests.inc({ app_id: appId ?? "unknown", status: String(status) });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const body = JSON.stringify(appId ? { error, appId } : { error });
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const m = APP_PATH.exec(req.url ?? "");
    if (!m) return answer(res, 404, "no such route: apps are served at /apps/<appId>/…");
    const appId = m[1]!;
    const rest = (m[2] ?? "/") + (m[3] ?? "");
    let app: { live_deployment_id: string | null } | undefined;
    try {
      app = await db.selectFrom("tvc_apps").select("live_deployment_id").where("id", "=", appId).executeTakeFirst();
    } catch (err) {
      log.warn({ err, appId }, "tvc ingress: the database is not reachable");
      return answer(res, 503, "the service cannot read the app's live deployment right now", appId);
    }
    if (!app) return answer(res, 404, "no such app");
    const deploymentId = app.live_deployment_id;
    if (!deploymentId) return answer(res, 503, "the app has no live deployment", appId);
    const ready = runtime.endpoints(deploymentId);
    if (ready.length === 0) return answer(res, 503, "no replica of the app's live deployment is ready", appId);
    const n = cursor.get(deploymentId) ?? 0;
    cursor.set(deploymentId, (n + 1) % 1_000_000);
    const target = ready[n % ready.length]!;

    const headers = forwardHeaders(req.headers);
    const peer = req.socket.remoteAddress ?? "";
    const xff = req.headers["x-forwarded-for"];
    headers["x-forwarded-for"] = xff ? `${Array.isArray(xff) ? xff.join(", ") : xff}, ${peer}` : peer;
    if (req.headers.host) headers["x-forwarded-host"] = req.headers.host;
    headers["x-forwarded-proto"] = "http";
    headers["x-forwarded-prefix"] = `/apps/${appId}`;

    const up = http.request({ host: target.host, port: target.port, method: req.method, path: rest, headers, agent });
    let settled = false;
    const fail = (status: number, error: string, err?: Error) => {
      if (settled) return;
      settled = true;
      log.warn({ appId, deploymentId, port: target.port, err: err?.message }, `tvc ingress: ${error}`);
      answer(res, status, error, appId);
    };
    const headerTimer = setTimeout(() => {
      fail(504, "the replica did not answer in time");
      up.destroy();
    }, upstreamTimeoutMs);
    up.on("response", (ur) => {
      clearTimeout(headerTimer);
      if (settled) {
        ur.resume();
        return;
      }
      settled = true;
      metrics?.ingressRequests.inc({ app_id: appId, status: String(ur.statusCode ?? 502) });
      res.writeHead(ur.statusCode ?? 502, ur.statusMessage, forwardHeaders(ur.headers));
      ur.pipe(res);
      ur.on("error", () => res.destroy());
      ur.on("aborted", () => res.destroy());
    });
    up.on("error", (err) => {
      clearTimeout(headerTimer);
      if (settled) {
        res.destroy();
        return;
      }
      fail(502, "the replica failed to answer", err);
    });
    // The client went away: stop talking to the replica.
    res.on("close", () => {
      clearTimeout(headerTimer);
      if (!res.writableFinished) up.destroy();
    });
    req.pipe(up);
    req.on("error", () => up.destroy());
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.error({ err }, "tvc ingress request failed");
      answer(res, 502, "the ingress failed to forward the request");
    });
  });
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 30_000;
  server.requestTimeout = 0; // bodies may stream for long; idle sockets are cut by setTimeout
  server.setTimeout(idleTimeoutMs, (socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = opts.host === "0.0.0.0" || opts.host === "::" ? "127.0.0.1" : opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  return {
    port,
    url: `http://${shownHost}:${port}`,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // In-flight proxied requests get a moment, then are cut: the replicas stop next.
        setTimeout(() => server.closeAllConnections(), 2_000).unref();
      });
      agent.destroy();
    },
  };
}
