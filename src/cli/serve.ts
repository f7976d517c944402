import { readFileSync } from "node:fs";
import pino from "pino";
import { openService } from "../service.ts";
import { buildApp } from "../server/app.ts";
import { startDispatcher } from "../webhooks/dispatcher.ts";
import { activeSigningKey } from "../webhooks/signing-keys.ts";
import { configureWebhookUrls } from "../webhooks/url-policy.ts";

const VERSION = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

export async function serve(argv: string[]): Promise<void> {
  const service = await openService(argv);
  const { config, store } = service;
  const logger = pino({
    level: config.logLevel,
    // Stamps are signatures, not secrets, but headers are never logged wholesale anyway.
    redact: ["req.headers.authorization", 'req.headers["x-stamp"]', 'req.headers["x-stamp-webauthn"]'],
  });
  for (const w of service.warnings) logger.warn(w);
  // A stray rejection is a bug to log, not a reason to drop every in-flight request.
  process.on("unhandledRejection", (err) => logger.error({ err }, "unhandled rejection"));
  store.checkpointInBackground((msg) => logger.warn(msg));
  configureWebhookUrls({ allowLoopback: config.webhooksAllowLoopback });
  // The key set is published before the first delivery needs it.
  await activeSigningKey(store.db, service.masterKey);
  if (config.webhooksAllowLoopback) logger.warn("SIGIL_WEBHOOKS_ALLOW_LOOPBACK is on: webhooks may target loopback addresses (development only)");
  const dispatcher = startDispatcher({
    db: store.db,
    engine: store.engine,
    masterKey: service.masterKey,
    log: logger,
    timeoutMs: config.webhooksTimeoutMs,
    maxAttempts: config.webhooksMaxAttempts,
    retryBaseMs: config.webhooksRetryBaseMs,
  });
  const app = buildApp({
    onEvents: dispatcher.wake,
    masterKey: service.masterKey,
    store,
    logger,
    bodyLimitBytes: config.bodyLimitBytes,
    timestampMaxAgeMs: config.timestampMaxAgeMs,
    timestampMaxFutureMs: config.timestampMaxFutureMs,
    version: VERSION,
  });
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  // Tests and tooling wait for this line.
  logger.info({ port, engine: store.engine, location: store.location }, "sigil listening");

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, "shutting down");
    await app.close();
    await dispatcher.stop();
    await store.close();
  };
  process.once("SIGINT", () => void shutdown("SIGINT"));
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
}
