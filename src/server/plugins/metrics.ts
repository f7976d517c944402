// Prometheus metrics: the process's default metrics and every answer's latency by route and
// status, served at /metrics (never rate limited: docs/network.md §3).
import client from "prom-client";
import { globalPlugin } from "./global.ts";

export const metricsPlugin = globalPlugin<{ registry?: client.Registry }>("sigil-metrics", async (app, opts) => {
  const registry = opts.registry ?? new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const duration = new client.Histogram({
    name: "sigil_http_request_duration_seconds",
    help: "HTTP request latency by route and status",
    labelNames: ["route", "status"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
    registers: [registry],
  });
  app.addHook("onResponse", async (req, reply) => {
    duration.observe({ route: req.routeOptions.url ?? "unknown", status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  });
  app.get("/metrics", async (_req, reply) => {
    void reply.header("content-type", registry.contentType);
    return registry.metrics();
  });
});
