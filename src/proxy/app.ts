// The auth proxy's HTTP side (docs/auth-proxy-service.md §2, §3): fastify, POST /v1/<endpoint>
// and CORS preflights. Every POST first takes the per-address limit, then names its config
// (X-Auth-Proxy-Config-ID, any casing); the config is found (404 unknown, 403 disabled), the
// request's Origin is checked against it (403 before any other work), the per-origin limit is
// taken, and then the endpoint runs. Errors have the public API's SDK body {code, message,
// details}; the API's own errors pass through.
import { randomUUID } from "node:crypto";
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { ApiError, Grpc, invalid, notFound, permissionDenied } from "../errors.ts";
import { fastifyTrustProxy } from "../network/trust-proxy.ts";
import { ApiClient, UpstreamError } from "./api-client.ts";
import { ConfigSource } from "./config-source.ts";
import { ENDPOINTS } from "./endpoints.ts";
import { proxyLimiter, type ProxyLimiter } from "./limits.ts";
import { originAllowed, preflightAllowed } from "./origins.ts";
import { readBody } from "./bodies.ts";
import { parseJsonBody } from "../pipeline/body.ts";
import { VerificationKeys } from "./account-pii.ts";
import type { ProxySettings } from "./settings.ts";

export const CONFIG_ID_HEADER = "x-auth-proxy-config-id";
export const CAPTCHA_HEADER = "x-captcha-token";
/** What a preflight allows (what @turnkey/core sends). */
export const ALLOWED_HEADERS = ["content-type", CONFIG_ID_HEADER, CAPTCHA_HEADER, "x-client-version"] as const;
const PREFLIGHT_MAX_AGE_SECONDS = 600;

export interface ProxyApp {
  app: FastifyInstance;
  configs: ConfigSource;
  limiter: ProxyLimiter;
}

declare module "fastify" {
  interface FastifyRequest {
    /** The Origin to answer with Access-Control-Allow-Origin, once it is known to be allowed. */
    allowOrigin?: string;
  }
}

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  if (Array.isArray(v)) throw invalid(`${name} must be given once`);
  return v === undefined ? undefined : v;
}

export function buildProxyApp(settings: ProxySettings, logger: FastifyBaseLogger): ProxyApp {
  const api = new ApiClient(settings.apiUrl, settings.secret);
  const configs = new ConfigSource(api, settings.configTtlMs);
  const limiter = proxyLimiter(settings.limits, settings.redisUrl, logger);
  const verificationKeys = new VerificationKeys(api);
  const app = Fastify({
    loggerInstance: logger,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    bodyLimit: settings.bodyLimitBytes,
    trustProxy: fastifyTrustProxy(settings.trustProxy),
  });

  // JSON whatever the content type says; an empty body is {} (wallet_kit_config is sometimes sent without one).
  app.removeAllContentTypeParsers();
  // Parsed as the public API parses (pipeline/body.ts: nesting bounded, an object): the proxy
  // re-serializes what it forwards.
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_req, body, done) => {
    const raw = body as Buffer;
    if (raw.toString("utf8").trim() === "") return done(null, {});
    try {
      done(null, parseJsonBody(raw));
    } catch (err) {
      done(err as Error, undefined);
    }
  });

  // The browser may read an error only when it carries the allow header: before the config is
  // known, an origin some enabled config allows gets it.
  async function allowIfKnownOrigin(request: FastifyRequest): Promise<void> {
    const origin = header(request, "origin");
    if (origin === undefined) return;
    try {
      if (preflightAllowed(await configs.origins(), origin)) request.allowOrigin = origin;
    } catch {
      /* the API is away: the error goes out without the header */
    }
  }

  app.addHook("onSend", async (request, reply, payload) => {
    void reply.header("vary", "Origin");
    if (request.allowOrigin !== undefined) void reply.header("access-control-allow-origin", request.allowOrigin);
    return payload;
  });

  app.options("/*", async (request, reply) => {
    const origin = header(request, "origin");
    if (!preflightAllowed(await configs.origins(), origin)) {
      throw permissionDenied("this origin is not allowed by any auth proxy configuration");
    }
    request.allowOrigin = origin;
    void reply
      .header("access-control-allow-methods", "POST")
      .header("access-control-allow-headers", ALLOWED_HEADERS.join(", "))
      .header("access-control-max-age", String(PREFLIGHT_MAX_AGE_SECONDS))
      .status(204);
    return reply.send();
  });

  app.post("/v1/:endpoint", async (request) => {
    // Before any look-up or forwarded call, whatever config id or Origin the request names
    // (docs/auth-proxy-service.md §4.1). request.ip honours SIGIL_TRUST_PROXY only.
    try {
      await limiter.address(request.ip);
    } catch (err) {
      await allowIfKnownOrigin(request);
      throw err;
    }
    const endpoint = ENDPOINTS.get(request.url.split("?")[0]!);
    if (!endpoint) {
      await allowIfKnownOrigin(request);
      throw notFound(`no auth proxy endpoint ${request.url.split("?")[0]!.slice(0, 100)}`);
    }
    const configId = header(request, CONFIG_ID_HEADER);
    if (configId === undefined || configId === "") {
      await allowIfKnownOrigin(request);
      throw invalid("the X-Auth-Proxy-Config-ID header is required", [{ field: "X-Auth-Proxy-Config-ID", description: "required" }]);
    }
    if (configId.length > 128 || !/^[A-Za-z0-9._:-]+$/.test(configId)) {
      await allowIfKnownOrigin(request);
      throw invalid("X-Auth-Proxy-Config-ID is not a config id", [{ field: "X-Auth-Proxy-Config-ID", description: "a config id" }]);
    }
    const entry = await configs.get(configId);
    if (!entry) {
      await allowIfKnownOrigin(request);
      throw notFound(`auth proxy config ${configId} not found`);
    }
    const origin = header(request, "origin");
    // Refused before any work: no forwarded call, no message (docs/auth-proxy-service.md §3).
    if (!originAllowed(entry.config.allowedOrigins, origin)) throw permissionDenied("this origin is not allowed by the auth proxy configuration", "FORBIDDEN");
    if (origin !== undefined) request.allowOrigin = origin;
    if (!entry.config.enabled) throw permissionDenied("the auth proxy is disabled for this configuration", "FORBIDDEN");
    await limiter.origin(configId, entry.config.allowedOrigins, origin);
    const body = readBody(request.body ?? {}, endpoint.body);
    return endpoint.run(
      {
        entry,
        api,
        settings,
        limiter,
        verificationKeys,
        clientIp: request.ip,
        captchaToken: header(request, CAPTCHA_HEADER),
      },
      body,
    );
  });

  app.setNotFoundHandler(async (request) => {
    await allowIfKnownOrigin(request);
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
    request.log.error({ errorId: id, err: { name: (err as Error)?.name, message: (err as Error)?.message, stack: (err as Error)?.stack } }, "auth proxy internal error");
    void reply.status(500).send(new ApiError(Grpc.INTERNAL, "INTERNAL", `internal server error (${id})`).toBody());
  });

  return { app, configs, limiter };
}

function proxyError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  const fe = err as FastifyError;
  if (fe?.code === "FST_ERR_CTP_BODY_TOO_LARGE") return new ApiError(Grpc.INVALID_ARGUMENT, "REQUEST_INVALID", "request body is too large", [], 413);
  if (typeof fe?.statusCode === "number" && fe.statusCode >= 400 && fe.statusCode < 500) return invalid(`bad request: ${fe.message}`);
  return undefined;
}
