// sigil proxy: the auth proxy alone (docs/auth-proxy-service.md §1, §6), e.g. on another host
// than the API, given only the proxy secret. `--print-secret` prints the secret derived from
// this host's master key, for that other host.
import pino from "pino";
import { loadConfig } from "../config.ts";
import { proxySecretOf, proxySettingsFrom } from "../proxy/settings.ts";
import { PROXY_REDACT_PATHS, startProxy } from "../proxy/start.ts";
import { LOG_REDACT_PATHS } from "./serve.ts";
import { masterKeySourceOf } from "../crypto/master-key-source.ts";
import type { MasterKey } from "../crypto/envelope.ts";
import type { Config } from "../config.ts";

/**
 * A key on a PKCS#11 token derives the proxy secret from the root secret sealed in the
 * database (docs/custody.md §2): `--print-secret` then opens the service to read it.
 */
async function tokenMasterKeyRoot(config: Config, argv: string[]): Promise<MasterKey | undefined> {
  if (config.authProxySecret || masterKeySourceOf(config).name !== "pkcs11") return undefined;
  const { openService } = await import("../service.ts");
  const service = await openService(argv);
  await service.store.close();
  await service.masterKey.close();
  return service.masterKey;
}

export async function proxy(argv: string[]): Promise<void> {
  const config = loadConfig(process.env, argv);
  if (argv.includes("--print-secret")) {
    process.stdout.write(proxySecretOf(config, await tokenMasterKeyRoot(config, argv)).toString("hex") + "\n");
    return;
  }
  const logger = pino({ level: config.logLevel, redact: [...LOG_REDACT_PATHS, ...PROXY_REDACT_PATHS] });
  process.on("unhandledRejection", (err) => logger.error({ err }, "unhandled rejection"));
  const running = await startProxy(proxySettingsFrom(config), logger);
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, "shutting down");
    const force = setTimeout(() => process.exit(1), config.shutdownGraceMs);
    await running.close().catch((err: unknown) => logger.error({ err: (err as Error).message }, "shutdown failed"));
    clearTimeout(force);
    process.exit(0);
  };
  process.once("SIGINT", () => void shutdown("SIGINT"));
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
}
