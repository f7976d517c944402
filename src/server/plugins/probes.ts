// The operator's probes (never rate limited: docs/network.md §3). /readyz is bounded by the
// connect timeout (store.ping): a hung database answers 503, not never.
import type { FastifyInstance } from "fastify";
import type { Store } from "../../store/db.ts";

export async function probesPlugin(app: FastifyInstance, opts: { store: Store }): Promise<void> {
  const { store } = opts;
  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_req, reply) => {
    try {
      await store.ping();
      return { status: "ready", engine: store.engine };
    } catch {
      return reply.status(503).send({ status: "unavailable", engine: store.engine });
    }
  });
}
