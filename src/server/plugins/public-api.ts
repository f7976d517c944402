// The public API: activities (submit) and queries, each through its pipeline
// (docs/request-path.md §2, §4), and the OpenAPI document describing them.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../../errors.ts";
import { submitActivity, type PipelineDeps } from "../../pipeline/submit.ts";
import { runQuery } from "../../pipeline/query.ts";
import type { RateLimiter } from "../../network/rate-limit.ts";
import { openApiDocument } from "../openapi.ts";
import { LARGE_BODY_BYTES, nextTurn } from "../../pipeline/body.ts";

export interface PublicApiOptions {
  deps: PipelineDeps;
  limiter?: RateLimiter;
  version: string;
}

const raw = (req: FastifyRequest) => (Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));

/**
 * The answer as JSON, what fastify's own serializer would send, but a large one in turns of
 * its own: the store's work, the serialization and the socket write of a megabyte each take
 * milliseconds, and in one turn they would add up while other tenants wait
 * (docs/network.md §6.1). `afterLargeBody`: the request's body was large, so its answer (the
 * vote carries the body back) is too.
 */
async function answer(reply: FastifyReply, out: unknown, afterLargeBody: boolean): Promise<string> {
  if (afterLargeBody) await nextTurn();
  const json = JSON.stringify(out);
  if (json.length >= LARGE_BODY_BYTES) await nextTurn();
  void reply.type("application/json; charset=utf-8");
  return json;
}

/** A caller over its rate limit is told when to come back. */
const retryAfter = (reply: FastifyReply, err: unknown): never => {
  if (err instanceof ApiError && err.retryAfterSeconds !== undefined) void reply.header("retry-after", String(err.retryAfterSeconds));
  throw err;
};

export async function publicApiPlugin(app: FastifyInstance, opts: PublicApiOptions): Promise<void> {
  const { deps, limiter } = opts;
  app.post<{ Params: { op: string } }>("/public/v1/submit/:op", async (req, reply) => {
    const out = await submitActivity(deps, req.params.op, raw(req), req.headers, { address: req.ip, limiter }).catch((err: unknown) =>
      retryAfter(reply, err),
    );
    req.log.info({ organizationId: out.activity.organizationId, activityId: out.activity.id, type: out.activity.type }, "activity");
    return answer(reply, out, raw(req).length >= LARGE_BODY_BYTES);
  });
  app.post<{ Params: { op: string } }>("/public/v1/query/:op", async (req, reply) => {
    const out = await runQuery(deps, req.params.op, raw(req), req.headers, { address: req.ip, limiter }).catch((err: unknown) =>
      retryAfter(reply, err),
    );
    return answer(reply, out, false);
  });
  // Built on first request: most servers (and every in-process test app) never serve it,
  // and it walks every schema of the registry.
  let doc: Record<string, unknown> | undefined;
  app.get("/openapi.json", async () => (doc ??= openApiDocument(opts.version)));
}
