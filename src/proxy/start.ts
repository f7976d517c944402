// Starts the auth proxy (docs/auth-proxy-service.md §1): `sigil proxy` alone, or `sigil serve`
// next to the API in the same process. Logs "sigil auth proxy listening" with its port.
import type { FastifyBaseLogger } from "fastify";
import { buildProxyApp } from "./app.ts";
import type { ProxySettings } from "./settings.ts";

export interface RunningProxy {
  port: number;
  close(): Promise<void>;
}

export async function startProxy(settings: ProxySettings, logger: FastifyBaseLogger): Promise<RunningProxy> {
  const { app, limiter } = buildProxyApp(settings, logger);
  await app.listen({ port: settings.port, host: settings.host });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : settings.port;
  // Tests and tooling wait for this line.
  logger.info({ port, apiUrl: settings.apiUrl }, "sigil auth proxy listening");
  return {
    port,
    async close() {
      await app.close();
      await limiter.close();
    },
  };
}

/** What pino redacts in the proxy's logs besides the API's list: the captcha token. */
export const PROXY_REDACT_PATHS: readonly string[] = ['req.headers["x-captcha-token"]'];
