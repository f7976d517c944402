// The auth proxy's HTTP side (docs/auth-proxy-service.md §2, §3) as a fastify app of plugins,
// registered in a fixed order as the API app's are (docs/request-path.md §7): the JSON body
// parser, the errors (the SDK's body), CORS (preflights and the allow header), then the
// endpoints (POST /v1/<endpoint>).
import { randomUUID } from "node:crypto";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import { fastifyTrustProxy } from "../network/trust-proxy.ts";
import { ApiClient } from "./api-client.ts";
import { ConfigSource } from "./config-source.ts";
import { proxyLimiter, type ProxyLimiter } from "./limits.ts";
import { VerificationKeys } from "./account-pii.ts";
import type { ProxySettings } from "./settings.ts";
import { jsonBodyPlugin } from "./plugins/json-body.ts";
import { proxyErrorsPlugin } from "./plugins/errors.ts";
import { proxyCorsPlugin } from "./plugins/cors.ts";
import { endpointsPlugin } from "./plugins/endpoints.ts";

export interface ProxyApp {
  app: FastifyInstance;
  configs: ConfigSource;
  limiter: ProxyLimiter;
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
  void app.register(jsonBodyPlugin);
  void app.register(proxyErrorsPlugin, { configs });
  void app.register(proxyCorsPlugin, { configs });
  void app.register(endpointsPlugin, { settings, api, configs, limiter, verificationKeys });
  return { app, configs, limiter };
}
