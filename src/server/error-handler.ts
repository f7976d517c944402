// The one place where errors become HTTP responses. ApiErrors carry their own status and
// body; fastify's own errors (body too large, bad content) are translated; the database
// being away (refused, terminated, timed out, locked by another process past the wait), or the
// key store (docs/custody.md §3), is 503 UNAVAILABLE — the client may retry; anything else is a bug: logged with an id,
// answered 500 with that id and nothing more.
import { randomUUID } from "node:crypto";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { ApiError, Grpc, invalid } from "../errors.ts";
import { isStoreUnavailable } from "../store/db.ts";
import { isKeyUnavailable } from "../crypto/key-unavailable.ts";

export function unavailable(message = "the database is unavailable; retry later"): ApiError {
  return new ApiError(Grpc.UNAVAILABLE, "UNSPECIFIED", message);
}

export function toApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (isStoreUnavailable(err)) return unavailable();
  if (isKeyUnavailable(err)) return unavailable("the key store (HSM) is unavailable; retry later");
  const fe = err as FastifyError;
  switch (fe?.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new ApiError(Grpc.INVALID_ARGUMENT, "REQUEST_INVALID", "request body is too large", [], 413);
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return invalid(`bad request body: ${fe.message}`);
  }
  if (typeof fe?.statusCode === "number" && fe.statusCode >= 400 && fe.statusCode < 500) {
    return invalid(`bad request: ${fe.message}`);
  }
  return undefined;
}

export function errorHandler(err: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const api = toApiError(err);
  if (api) {
    // Outages are worth a line in the log (without the stack: it is not our bug).
    if (api.code === Grpc.UNAVAILABLE && !(err instanceof ApiError)) {
      request.log.warn({ reason: (err as Error)?.message }, isKeyUnavailable(err) ? "key store unavailable" : "database unavailable");
    }
    if (api.retryAfterSeconds !== undefined) void reply.header("retry-after", String(api.retryAfterSeconds));
    void reply.status(api.httpStatus).send(api.toBody());
    return;
  }
  const id = randomUUID();
  request.log.error({ err, errorId: id }, "internal error");
  const e = new ApiError(Grpc.INTERNAL, "INTERNAL", `internal server error (${id})`);
  void reply.status(500).send(e.toBody());
}
