// The public API: activities (submit) and queries, each through its pipeline
// (docs/request-path.md §2, §4), and the OpenAPI document describing them.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../../errors.ts";
import { submitActivity, type PipelineDeps } from "../../pipeline/submit.ts";
import { runQuery } from "../../pipeline/query.ts";
import type { RateLimiter } from "../../network/rate-limit.ts";
import { openApiDocument } from "../openapi.ts";

export interface PublicApiOptions {
  deps: PipelineDeps;
  limiter?: RateLimiter;
  version: string;
}

const raw = (req: FastifyRequest) => (Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));

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
    return out;
  });
  app.post<{ Params: { op: string } }>("/public/v1/query/:op", async (req, reply) =>
    runQuery(deps, req.params.op, raw(req), req.headers, { address: req.ip, limiter }).catch((err: unknown) => retryAfter(reply, err)),
  );
  // Built on first request: most servers (and every in-process test app) never serve it,
  // and it walks every schema of the registry.
  let doc: Record<string, unknown> | undefined;
  app.get("/openapi.json", async () => (doc ??= openApiDocument(opts.version)));
}
