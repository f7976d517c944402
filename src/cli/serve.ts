import { readFileSync } from "node:fs";
import pino from "pino";
import { openService } from "../service.ts";
import { buildApp } from "../server/app.ts";
import { sweepExpired } from "../store/sweeper.ts";
import { ensureServiceKeys } from "../auth/service-keys.ts";
import { loginSettingsFrom } from "../logins/configure.ts";
import { startDispatcher } from "../webhooks/dispatcher.ts";
import { activeSigningKey } from "../webhooks/signing-keys.ts";
import { webhookUrlPolicy } from "../webhooks/url-policy.ts";
import { rateLimiter } from "../network/rate-limit.ts";
import { setEvaluationLimits } from "../policy/budget.ts";
import { STAMP_HEADERS } from "../auth/strategies.ts";
import client from "prom-client";
import { startTvc } from "../tvc/service.ts";
import { proxySettingsFrom } from "../proxy/settings.ts";
import { PROXY_REDACT_PATHS, startProxy, type RunningProxy } from "../proxy/start.ts";
import { ACTIVITIES, VOTES } from "../activities/registry.ts";
import { checkParentStampable } from "../pipeline/parent-writes.ts";
import { secretLogPaths } from "../activities/secret-params.ts";
import { startFramesServer, type RunningFramesServer } from "../frames/serve.ts";
import { framesSettingsFrom } from "../frames/settings.ts";

const VERSION = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

/**
 * What pino redacts. Stamps are signatures, not secrets, but headers are never logged
 * wholesale anyway: every stamp header auth/strategies.ts lists is redacted, so a new stamp
 * kind is too (docs/stamps.md §7). Request bodies are not logged; should one (or an
 * activity's parameters) ever be, the secret parameters every definition declares are
 * redacted as well (docs/activities.md §10.4).
 */
export const LOG_REDACT_PATHS: readonly string[] = [
  "req.headers.authorization",
  ...STAMP_HEADERS.map((h) => `req.headers[${JSON.stringify(h)}]`),
  ...secretLogPaths(ACTIVITIES),
];

export async function serve(argv: string[]): Promise<void> {
  // A definition opening a type to parents that may not be stops the service (docs/request-path.md §5.2).
  checkParentStampable([...ACTIVITIES, ...VOTES]);
  const service = await openService(argv);
  const { config, store } = service;
  const logger = pino({
    level: config.logLevel,
    // The auth proxy may run in this process: its captcha header is redacted too.
    redact: [...LOG_REDACT_PATHS, ...PROXY_REDACT_PATHS],
  });
  for (const w of service.warnings) logger.warn(w);
  // What startup has opened, closed in reverse order should a later step fail (a taken port,
  // an unreadable file): a pool or a LISTEN connection left open would otherwise keep a
  // process that will never serve alive forever (docs/operations.md §1).
  const opened: Array<() => Promise<unknown>> = [() => service.masterKey.close(), () => store.close()];
  try {
    await startServing(service, logger, opened);
  } catch (err) {
    await releaseAll(opened, config.shutdownGraceMs);
    throw err;
  }
}

async function releaseAll(opened: Array<() => Promise<unknown>>, graceMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
  const closeInOrder = async () => {
    for (const close of opened.reverse()) await close().catch(() => undefined);
  };
  await Promise.race([closeInOrder(), deadline]);
  clearTimeout(timer);
}

async function startServing(
  service: Awaited<ReturnType<typeof openService>>,
  logger: pino.Logger,
  opened: Array<() => Promise<unknown>>,
): Promise<void> {
  const { config, store } = service;
  // A stray rejection is a bug to log, not a reason to drop every in-flight request.
  process.on("unhandledRejection", (err) => logger.error({ err }, "unhandled rejection"));
  store.checkpointInBackground((msg) => logger.warn(msg));
  // One value for the endpoint activities and the dispatcher (docs/webhooks.md §1.2).
  const webhookUrls = webhookUrlPolicy({ allowLoopback: config.webhooksAllowLoopback });
  // The key set is published before the first delivery needs it.
  await activeSigningKey(service.state.signingKey, store.db, service.masterKey);
  if (config.webhooksAllowLoopback)
    logger.warn("SIGIL_WEBHOOKS_ALLOW_LOOPBACK is on: webhooks may target loopback addresses (development only)");
  // Expired OTPs, verification tokens, limit slots, session keys and import targets are swept every 10 minutes
  // (through the store's transaction path, so SQLite's commit group orders it with activities).
  const sweep = setInterval(() => {
    store
      .transact((tx) => sweepExpired(tx, Date.now()))
      .then((swept) => logger.debug({ swept }, "swept expired login records"))
      .catch((err: unknown) =>
        logger.warn({ err: (err as Error).message }, "sweeping expired login records failed; retried in 10 minutes"),
      );
  }, 10 * 60_000);
  sweep.unref();
  opened.push(async () => clearInterval(sweep));
  const dispatcher = startDispatcher({
    db: store.db,
    state: service.state,
    masterKey: service.masterKey,
    log: logger,
    timeoutMs: config.webhooksTimeoutMs,
    retrySchedule: config.webhooksRetrySchedule,
    maxAttempts: config.webhooksMaxAttempts,
    disableAfterMs: config.webhooksDisableAfterMs,
    databaseUrl: config.databaseUrl,
    worker: config.webhookWorker,
    webhookUrls,
  });
  opened.push(() => dispatcher.stop());
  // Rate limits: with REDIS_URL, the shared buckets are connected before the first request.
  const limiter = rateLimiter(
    { credential: config.rateLimitCredential, organization: config.rateLimitOrganization, address: config.rateLimitAddress },
    config.redisUrl,
    logger,
  );
  opened.push(() => limiter.close());
  if (config.redisUrl && !(await limiter.ready()))
    logger.warn("REDIS_URL: Redis is not reachable yet; rate limits count in this process until it is");
  // Service keys exist before the first login or discovery request needs them.
  await ensureServiceKeys(service.state.serviceKeys, store.db, service.masterKey);
  // TVC: the runtime's metrics join /metrics; replicas of approved deployments start
  // now, and the ingress listens (its address is logged) before the API does.
  const metricsRegistry = new client.Registry();
  const tvc = await startTvc({
    config,
    db: store.db,
    state: service.state,
    log: logger.child({ component: "tvc" }),
    registry: metricsRegistry,
  });
  opened.push(() => tvc.stop());
  // One evaluation budget per process (docs/policy-language.md §11).
  setEvaluationLimits({ steps: config.policyMaxSteps, passSteps: config.policyMaxPassSteps, iterations: config.policyMaxIterations });
  const app = buildApp({
    metricsRegistry,
    logins: loginSettingsFrom(config, logger),
    onEvents: dispatcher.wake,
    masterKey: service.masterKey,
    store,
    state: service.state,
    logger,
    bodyLimitBytes: config.bodyLimitBytes,
    timestampMaxAgeMs: config.timestampMaxAgeMs,
    timestampMaxFutureMs: config.timestampMaxFutureMs,
    version: VERSION,
    tvcImageRoot: config.tvcImageRoot,
    webhookUrls,
    console: config.console,
    network: {
      trustProxy: config.trustProxy,
      corsOrigins: config.corsOrigins,
      proxyOriginsTtlMs: config.authProxyConfigTtlMs,
      limiter,
    },
  });
  opened.push(() => app.close());
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  // The export and import frames on their own origin (docs/frames.md §5.1), up before the
  // "sigil listening" line; a taken port is logged and the API runs without them.
  let frames: RunningFramesServer | undefined;
  if (config.framesPort !== undefined) {
    try {
      const settings = await framesSettingsFrom(config, port, store.db);
      if (settings.parentOrigins.length === 0)
        logger.warn(
          "the frames have no parent origin (SIGIL_FRAMES_PARENT_ORIGINS, SIGIL_CORS_ORIGINS and the auth proxy configurations list none): no page may embed them",
        );
      frames = await startFramesServer({ host: config.host, port: config.framesPort, ...settings });
      opened.push(() => frames!.close());
      logger.info(
        {
          port: Number(new URL(frames.url).port),
          exportUrl: frames.exportUrl,
          importUrl: frames.importUrl,
          apiBaseUrl: settings.apiBaseUrl,
          parentOrigins: settings.parentOrigins,
        },
        "sigil frames listening",
      );
    } catch (err) {
      logger.error(
        { port: config.framesPort, reason: (err as Error).message },
        "the frames server could not start; the API runs without it",
      );
    }
  }
  // Tests and tooling wait for this line.
  logger.info({ port, engine: store.engine, location: store.location, tvcIngressPort: tvc.ingress?.port }, "sigil listening");
  // The auth proxy next to the API (docs/auth-proxy-service.md §1): it reaches this API over
  // HTTP like a proxy on another host would, with the secret derived from this master key.
  let authProxy: RunningProxy | undefined;
  if (config.authProxy) {
    const apiHost =
      config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host.includes(":") ? `[${config.host}]` : config.host;
    const settings = proxySettingsFrom(
      { ...config, authProxyApiUrl: config.authProxyApiUrl ?? `http://${apiHost}:${port}` },
      { masterKey: service.masterKey },
    );
    try {
      authProxy = await startProxy(settings, logger.child({ component: "auth-proxy" }));
    } catch (err) {
      // Like the TVC ingress: a taken port is logged and the API runs without the proxy.
      logger.error(
        { port: config.authProxyPort, reason: (err as Error).message },
        "the auth proxy could not start; the API runs without it (SIGIL_AUTH_PROXY=off silences this)",
      );
    }
  }

  // Graceful shutdown within a deadline (docs/operations.md §1). In-flight requests complete,
  // idle keep-alive connections are closed at once, webhook deliveries under way finish,
  // the store is closed, exit code 0. Whatever is still running when the grace period is
  // over is cut (connections destroyed) and the process exits with code 1.
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    const started = Date.now();
    const graceMs = config.shutdownGraceMs;
    logger.info({ signal, graceMs }, "shutting down");
    const force = setTimeout(() => {
      logger.warn({ graceMs }, "shutdown grace period over: closing remaining connections");
      app.server.closeAllConnections();
      process.exit(1);
    }, graceMs);
    try {
      // TVC replicas are stopped (SIGTERM, then SIGKILL) while the store is still open.
      await Promise.all([app.close(), dispatcher.stop(), tvc.stop(), authProxy?.close(), frames?.close()]);
      await store.close();
      await service.masterKey.close();
    } catch (err) {
      logger.error({ err }, "shutdown failed");
      process.exit(1);
    }
    clearTimeout(force);
    logger.info({ ms: Date.now() - started }, "stopped");
    process.exit(0);
  };
  process.once("SIGINT", () => void shutdown("SIGINT"));
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
}
