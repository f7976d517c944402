// The public API as a fastify app: plugins registered in a fixed order, each a part of the
// request path (docs/request-path.md §7). Bodies are kept as raw bytes: stamps sign the exact
// bytes, so JSON is parsed by the pipeline, after the bytes are safely in hand.
import { randomUUID } from "node:crypto";
import Fastify, { type FastifyInstance } from "fastify";
import type client from "prom-client";
import type { FastifyBaseLogger } from "fastify";
import type { WebhookUrlPolicy } from "../webhooks/url-policy.ts";
import { DEFAULT_OAUTH_SETTINGS } from "../logins/oauth/configure.ts";
import type { MasterKey } from "../crypto/envelope.ts";
import type { PipelineDeps } from "../pipeline/submit.ts";
import type { Store } from "../store/db.ts";
import type { ServiceState } from "../service-state.ts";
import type { LoginSettings } from "../logins/settings.ts";
import { fastifyTrustProxy, type TrustProxy } from "../network/trust-proxy.ts";
import type { RateLimiter } from "../network/rate-limit.ts";
import { STAMP_HEADERS } from "../auth/strategies.ts";
import { rawBodyPlugin } from "./plugins/raw-body.ts";
import { errorsPlugin } from "./plugins/errors.ts";
import { drainingPlugin } from "./plugins/draining.ts";
import { addressLimitPlugin, corsPlugin } from "./plugins/network.ts";
import { metricsPlugin } from "./plugins/metrics.ts";
import { publicApiPlugin } from "./plugins/public-api.ts";
import { discoveryPlugin } from "./plugins/discovery.ts";
import { probesPlugin } from "./plugins/probes.ts";
import { proxyOriginsAdmitter } from "../auth-proxy/origins.ts";
import { authProxyChannel } from "./auth-proxy-channel.ts";
import { consolePlugin } from "../console/serve.ts";

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
  /** Serve the operator console at /console (SIGIL_CONSOLE; docs/console.md §2). Default: not served. */
  console?: boolean;
}

export interface NetworkOptions {
  trustProxy?: TrustProxy;
  corsOrigins?: readonly string[];
  /** How long CORS keeps the enabled auth proxy configurations' origins (SIGIL_AUTH_PROXY_CONFIG_TTL_MS). */
  proxyOriginsTtlMs?: number;
  /** Rate limits (rateLimiter(config)); closed with the app. */
  limiter?: RateLimiter;
}

export function buildApp(opts: AppOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: opts.logger,
    bodyLimit: opts.bodyLimitBytes,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    // Requests arriving while closing are answered by drainingPlugin, with the SDK's error body.
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
  const limiter = opts.network?.limiter;
  // In this order (docs/request-path.md §7): the global parts first — their hooks run in the
  // order they are added — then the routes.
  void app.register(rawBodyPlugin);
  void app.register(errorsPlugin, { bodyLimitBytes: opts.bodyLimitBytes });
  void app.register(drainingPlugin);
  // Auth proxy origins are admitted too (docs/auth-proxy.md §5).
  void app.register(corsPlugin, {
    origins: opts.network?.corsOrigins ?? [],
    stampHeaders: STAMP_HEADERS,
    admit: proxyOriginsAdmitter(opts.store.db, opts.network?.proxyOriginsTtlMs),
  });
  void app.register(addressLimitPlugin, limiter ? { limiter } : {});
  void app.register(metricsPlugin, opts.metricsRegistry ? { registry: opts.metricsRegistry } : {});
  void app.register(publicApiPlugin, { deps, version: opts.version, ...(limiter ? { limiter } : {}) });
  // The internal routes the auth proxy reads its configuration from (docs/auth-proxy.md §4).
  // With the OTP channels it has a transport for: wallet_kit_config offers no other (docs/auth-proxy-service.md §5.1).
  const otpChannels = (["email", "sms"] as const).filter((c) => opts.logins?.[c] !== undefined);
  void app.register(authProxyChannel, { db: opts.store.db, masterKey: opts.masterKey, otpChannels });
  void app.register(discoveryPlugin, {
    db: opts.store.db,
    state: opts.state,
    publicUrl: (opts.logins?.oauth ?? DEFAULT_OAUTH_SETTINGS).publicUrl,
    ...(opts.masterKey ? { masterKey: opts.masterKey } : {}),
  });
  void app.register(probesPlugin, { store: opts.store });
  if (opts.console) void app.register(consolePlugin);
  return app;
}
