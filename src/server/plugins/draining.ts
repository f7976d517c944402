// Graceful close (SIGTERM, docs/operations.md §1): app.close() stops accepting connections and
// closes idle keep-alive ones; requests already in flight complete, and their answers carry
// `Connection: close` so their connections end too instead of idling until the keep-alive
// timeout. A request that still arrives on an open connection is told to go elsewhere.
import { ApiError, Grpc } from "../../errors.ts";
import { globalPlugin } from "./global.ts";

export const drainingPlugin = globalPlugin("sigil-draining", async (app) => {
  let draining = false;
  app.addHook("preClose", async () => {
    draining = true;
  });
  app.addHook("onRequest", async (_req, reply) => {
    if (!draining) return;
    const e = new ApiError(Grpc.UNAVAILABLE, "UNSPECIFIED", "the server is shutting down; retry on another connection");
    return reply.status(503).header("connection", "close").send(e.toBody());
  });
  app.addHook("onSend", async (_req, reply) => {
    if (draining) void reply.header("connection", "close");
  });
});
