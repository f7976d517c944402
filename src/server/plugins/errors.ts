// Every error and every unknown route is answered with the SDK's error body (error-handler.ts).
import { ApiError, Grpc, notFound } from "../../errors.ts";
import { errorHandler } from "../error-handler.ts";
import { globalPlugin } from "./global.ts";

export const errorsPlugin = globalPlugin<{ bodyLimitBytes: number }>("sigil-errors", async (app, opts) => {
  // The body limit's refusal names the limit (docs/network.md §6.1).
  const bodyLimitError = new ApiError(
    Grpc.INVALID_ARGUMENT,
    "REQUEST_INVALID",
    `request body is too large: at most ${opts.bodyLimitBytes} bytes (SIGIL_BODY_LIMIT_BYTES)`,
    [],
    413,
  );
  app.setErrorHandler((err, req, reply) =>
    errorHandler((err as { code?: string } | null)?.code === "FST_ERR_CTP_BODY_TOO_LARGE" ? bodyLimitError : err, req, reply),
  );
  app.setNotFoundHandler((req, reply) => {
    const e = notFound(`no route ${req.method} ${req.url.slice(0, 200)}`);
    void reply.status(404).send(e.toBody());
  });
});
