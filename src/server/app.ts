// The public API as a fastify app. Bodies are kept as raw bytes: stamps sign the exact
// bytes, so JSON is parsed by the pipeline, after the bytes are safely in hand.
import { randomUUID } from "node:crypto";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import client from "prom-client";
import type { FastifyBaseLogger } from "fastify";
import { ApiError, Grpc, notFound } from "../errors.ts";
import { jwks } from "../webhooks/signing-keys.ts";
import type { WebhookUrlPolicy } from "../webhooks/url-policy.ts";
import { appProofKeys } from "../app-proofs/proofs.ts";
import { discoveryDocument, ensureServiceKeys } from "../auth/service-keys.ts";
import { DISCOVERY_PATH, JWKS_PATH, oidcJwks, openidConfiguration } from "../auth/oauth/oidc-issuer.ts";
import { DEFAULT_OAUTH_SETTINGS } from "../auth/oauth/configure.ts";
import type { MasterKey } from "../crypto/envelope.ts";

const JWKS_MAX_AGE_SECONDS = 300;
import { errorHandler } from "./error-handler.ts";
import { openApiDocument } from "./openapi.ts";
import { submitActivity, type PipelineDeps } from "../pipeline/submit.ts";
import { runQuery } from "../pipeline/query.ts";
import type { Store } from "../store/db.ts";
import type { ServiceState } from "../service-state.ts";
import type { LoginSettings } from "../auth/login-settings.ts";
import { fastifyTrustProxy, type TrustProxy } from "../network/trust-proxy.ts";
import { RateLimited, type RateLimiter } from "../network/rate-limit.ts";
import { registerCors } from "../network/cors.ts";
import { STAMP_HEADERS } from "../auth/strategies.ts";
import { proxyOriginsAdmitter } from "../auth-proxy/origins.ts";
import { authProxyChannel } from "./auth-proxy-channel.ts";

export interface AppOptions {
  store: Store;
  /** The store's caches (Service.state): one per store, shared with its dispatcher. */
  state: ServiceState;
  logger: FastifyBaseLogger;
  /** Called after commits that wrote webhook events. */
  onEvents?: () => void;
  /** Opens sealed service keys (app proofs). */
  masterKey?: MasterKey;
  bodyLimitBytes: number;
  timestampMaxAgeMs: number;
  timestampMaxFutureMs: number;
  version: string;
  /** Sessions, passkeys and OTP delivery (loginSettingsFrom(config)). */
  logins?: LoginSettings;
  /** Client address, CORS and rate limits (network/*). Default: socket peer, no CORS, no limits. */
  network?: NetworkOptions;
  /** SIGIL_TVC_IMAGE_ROOT (real path): TVC activities are refused without it (docs/tvc-isolation.md §1). */
  tvcImageRoot?: string;
  /** Where webhook endpoints may point (webhookUrlPolicy(config)); default: public https only. */
  webhookUrls?: WebhookUrlPolicy;
  /** The registry /metrics serves, when other parts of the service (the TVC runtime) add to it; default a new one. */
  metricsRegistry?: client.Registry;
}

export interface NetworkOptions {
  trustProxy?: TrustProxy;
  corsOrigins?: readonly string[];
  /** Rate limits (rateLimiter(config)); closed with the app. */
  limiter?: RateLimiter;
}

function metrics(given?: client.Registry) {
  const registry = given ?? new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const duration = new client.Histogram({
    name: "sigil_http_request_duration_seconds",
    help: "HTTP request latency by route and status",
    labelNames: ["route", "status"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
    registers: [registry],
  });
  return { registry, duration };
}

export function buildApp(opts: AppOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: opts.logger,
    bodyLimit: opts.bodyLimitBytes,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    // Requests arriving while closing are answered below, with the SDK's error body.
    return503OnClosing: false,
    // Which proxies' X-Forwarded-For is believed for request.ip (SIGIL_TRUST_PROXY).
    trustProxy: fastifyTrustProxy(opts.network?.trustProxy ?? false),
  });
  const deps: PipelineDeps = {
    db: opts.store.db,
    state: opts.state,
    transact: opts.store.transact,
    timestampMaxAgeMs: opts.timestampMaxAgeMs,
    timestampMaxFutureMs: opts.timestampMaxFutureMs,
    log: opts.logger,
    onEvents: opts.onEvents,
    masterKey: opts.masterKey,
    ...(opts.logins ? { logins: opts.logins } : {}),
    ...(opts.tvcImageRoot ? { tvcImageRoot: opts.tvcImageRoot } : {}),
    ...(opts.webhookUrls ? { webhookUrls: opts.webhookUrls } : {}),
  };
  const m = metrics(opts.metricsRegistry);

  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_req, body, done) => done(null, body));
  // The body limit's refusal names the limit (docs/network.md §6.1).
  const bodyLimitError = new ApiError(Grpc.INVALID_ARGUMENT, "REQUEST_INVALID", `request body is too large: at most ${opts.bodyLimitBytes} bytes (SIGIL_BODY_LIMIT_BYTES)`, [], 413);
  app.setErrorHandler((err, req, reply) =>
    errorHandler((err as { code?: string } | null)?.code === "FST_ERR_CTP_BODY_TOO_LARGE" ? bodyLimitError : err, req, reply),
  );
  app.setNotFoundHandler((req, reply) => {
    const e = notFound(`no route ${req.method} ${req.url.slice(0, 200)}`);
    void reply.status(404).send(e.toBody());
  });
  // Graceful close (SIGTERM): app.close() stops accepting connections and closes idle
  // keep-alive ones; requests already in flight complete, and their answers carry
  // `Connection: close` so their connections end too instead of idling until the keep-alive
  // timeout. A request that still arrives on an open connection is told to go elsewhere.
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
  // Auth proxy origins are admitted too (docs/auth-proxy.md §5).
  registerCors(app, opts.network?.corsOrigins ?? [], STAMP_HEADERS, proxyOriginsAdmitter(opts.store.db));
  // The client address, for the allowlist check after authentication; the per-address rate
  // limit before anything else is done for the request (the body is not even read yet).
  const limiter = opts.network?.limiter;
  if (limiter) app.addHook("onClose", async () => limiter.close());
  // Callback style, no promise unless Redis is asked: this runs for every API request.
  // Health and metrics are for the operator's probes, never limited.
  const UNLIMITED = new Set(["/healthz", "/readyz", "/metrics"]);
  // Added once CORS is loaded, so a browser's refused request still carries the CORS headers
  // (and it sees the 429, not a CORS failure).
  app.after(() => app.addHook("onRequest", (req, reply, done) => {
    if (UNLIMITED.has(req.url.split("?", 1)[0]!)) return done();
    if (!limiter?.addressLimited) return done();
    const refuse = (err: unknown) => {
      if (!(err instanceof RateLimited)) return done(err as Error);
      void reply.status(err.httpStatus).header("retry-after", String(err.retryAfterSeconds)).send(err.toBody());
    };
    let pending: void | Promise<void>;
    try {
      pending = limiter.address(req.ip);
    } catch (err) {
      return refuse(err);
    }
    if (!pending) return done();
    pending.then(() => done(), refuse);
  }));
  app.addHook("onResponse", async (req, reply) => {
    m.duration.observe({ route: req.routeOptions.url ?? "unknown", status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  });

  const raw = (req: FastifyRequest) => (Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));

  // A caller over its rate limit is told when to come back.
  const retryAfter = (reply: FastifyReply, err: unknown): never => {
    if (err instanceof ApiError && err.retryAfterSeconds !== undefined) void reply.header("retry-after", String(err.retryAfterSeconds));
    throw err;
  };
  app.post<{ Params: { op: string } }>("/public/v1/submit/:op", async (req, reply) => {
    const out = await submitActivity(deps, req.params.op, raw(req), req.headers, { address: req.ip, limiter }).catch((err: unknown) => retryAfter(reply, err));
    req.log.info({ organizationId: out.activity.organizationId, activityId: out.activity.id, type: out.activity.type }, "activity");
    return out;
  });
  app.post<{ Params: { op: string } }>("/public/v1/query/:op", async (req, reply) =>
    runQuery(deps, req.params.op, raw(req), req.headers, { address: req.ip, limiter }).catch((err: unknown) => retryAfter(reply, err)),
  );

  // The internal routes the auth proxy reads its configuration from (docs/auth-proxy.md §4).
  void app.register(authProxyChannel, { db: opts.store.db, masterKey: opts.masterKey });
  const doc = openApiDocument(opts.version);
  app.get("/openapi.json", async () => doc);
  app.get("/healthz", async () => ({ status: "ok" }));
  // The webhook key set: public, no authentication. Receivers cache it for max-age and
  // refetch once when a delivery names a key they do not know (a rotation).
  app.get("/public/v1/discovery/webhooks/jwks", async (_req, reply) => {
    void reply.header("cache-control", `public, max-age=${JWKS_MAX_AGE_SECONDS}`).type("application/json");
    return jwks(opts.store.db);
  });
  // The key app proofs are signed with (service-key signatures, not enclave attestations).
  app.get("/public/v1/discovery/app-proofs/keys", async (_req, reply) => {
    if (!opts.masterKey) throw notFound("app proofs are not enabled on this server");
    void reply.header("cache-control", `public, max-age=${JWKS_MAX_AGE_SECONDS}`).type("application/json");
    return appProofKeys(opts.state.appProofKey, opts.store.db, opts.masterKey);
  });
  // The service's P-256 keys by purpose (session JWTs, OTP target bundles, verification
  // tokens): what clients pass to the SDK's dangerouslyOverride… parameters.
  app.get("/public/v1/discovery/keys", async (_req, reply) => {
    if (!opts.masterKey) throw notFound("service keys are not enabled on this server");
    await ensureServiceKeys(opts.state.serviceKeys, opts.store.db, opts.masterKey);
    void reply.header("cache-control", `public, max-age=${JWKS_MAX_AGE_SECONDS}`).type("application/json");
    return discoveryDocument(opts.store.db);
  });
  // Sigil as an OIDC issuer: the document and key set OIDC libraries verify the tokens of
  // oauth2_authenticate with. Both name SIGIL_PUBLIC_URL, never the request's host.
  const oidcDiscovery = openidConfiguration((opts.logins?.oauth ?? DEFAULT_OAUTH_SETTINGS).publicUrl);
  app.get(DISCOVERY_PATH, async (_req, reply) => {
    void reply.header("cache-control", `public, max-age=${JWKS_MAX_AGE_SECONDS}`).type("application/json");
    return oidcDiscovery;
  });
  app.get(JWKS_PATH, async (_req, reply) => {
    if (!opts.masterKey) throw notFound("service keys are not enabled on this server");
    await ensureServiceKeys(opts.state.serviceKeys, opts.store.db, opts.masterKey);
    void reply.header("cache-control", `public, max-age=${JWKS_MAX_AGE_SECONDS}`).type("application/json");
    return oidcJwks(opts.store.db);
  });
  // Bounded by the connect timeout (store.ping): a hung database answers 503, not never.
  app.get("/readyz", async (_req, reply) => {
    try {
      await opts.store.ping();
      return { status: "ready", engine: opts.store.engine };
    } catch {
      return reply.status(503).send({ status: "unavailable", engine: opts.store.engine });
    }
  });
  app.get("/metrics", async (_req, reply) => {
    void reply.header("content-type", m.registry.contentType);
    return m.registry.metrics();
  });
  return app;
}
