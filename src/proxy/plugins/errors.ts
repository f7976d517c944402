// Errors have the public API's SDK body {code, message, details}; the API's own errors pass
// through (docs/auth-proxy-service.md §2). An unknown route is 404 in that shape, with the
// allow-origin header when an enabled config allows the Origin (plugins/cors.ts).
import { randomUUID } from "node:crypto";
import type { FastifyError, FastifyReply } from "fastify";
import { ApiError, Grpc, invalid, notFound } from "../../errors.ts";
import { globalPlugin } from "../../server/plugins/global.ts";
import { UpstreamError } from "../api-client.ts";
import type { ConfigSource } from "../config-source.ts";
import { allowIfKnownOrigin } from "./cors.ts";

export const proxyErrorsPlugin = globalPlugin<{ configs: ConfigSource }>("auth-proxy-errors", async (app, { configs }) => {
  app.setNotFoundHandler(async (request) => {
    await allowIfKnownOrigin(configs, request);
    throw notFound(`no auth proxy endpoint ${request.method} ${request.url.split("?")[0]!.slice(0, 100)}`);
  });

  app.setErrorHandler((err: unknown, request, reply: FastifyReply) => {
    if (err instanceof UpstreamError) {
      if (err.retryAfter !== undefined) void reply.header("retry-after", err.retryAfter);
      void reply.status(err.status).send(err.body);
      return;
    }
    const api = proxyError(err);
    if (api) {
      if (api.retryAfterSeconds !== undefined) void reply.header("retry-after", String(api.retryAfterSeconds));
      void reply.status(api.httpStatus).send(api.toBody());
      return;
    }
    const id = randomUUID();
    request.log.error(
      { errorId: id, err: { name: (err as Error)?.name, message: (err as Error)?.message, stack: (err as Error)?.stack } },
      "auth proxy internal error",
    );
    void reply.status(500).send(new ApiError(Grpc.INTERNAL, "INTERNAL", `internal server error (${id})`).toBody());
  });
});

function proxyError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  const fe = err as FastifyError;
  if (fe?.code === "FST_ERR_CTP_BODY_TOO_LARGE")
    return new ApiError(Grpc.INVALID_ARGUMENT, "REQUEST_INVALID", "request body is too large", [], 413);
  if (typeof fe?.statusCode === "number" && fe.statusCode >= 400 && fe.statusCode < 500) return invalid(`bad request: ${fe.message}`);
  return undefined;
}
