// POST /v1/<endpoint> (docs/auth-proxy-service.md §2, §3): the per-address limit first, then
// the config the request names (X-Auth-Proxy-Config-ID; 404 unknown, 403 disabled), the
// request's Origin against it (403 before any other work), the per-origin limit, and then the
// endpoint runs.
import { invalid, notFound, permissionDenied } from "../../errors.ts";
import { globalPlugin } from "../../server/plugins/global.ts";
import type { VerificationKeys } from "../account-pii.ts";
import type { ApiClient } from "../api-client.ts";
import { readBody } from "../bodies.ts";
import type { ConfigSource } from "../config-source.ts";
import { ENDPOINTS } from "../endpoints.ts";
import type { ProxyLimiter } from "../limits.ts";
import { originAllowed } from "../origins.ts";
import type { ProxySettings } from "../settings.ts";
import { allowIfKnownOrigin, CAPTCHA_HEADER, CONFIG_ID_HEADER } from "./cors.ts";
import { header } from "./headers.ts";

export interface EndpointsOptions {
  [key: string]: unknown;
  settings: ProxySettings;
  api: ApiClient;
  configs: ConfigSource;
  limiter: ProxyLimiter;
  verificationKeys: VerificationKeys;
}

export const endpointsPlugin = globalPlugin<EndpointsOptions>(
  "auth-proxy-endpoints",
  async (app, { settings, api, configs, limiter, verificationKeys }) => {
    app.post("/v1/:endpoint", async (request) => {
      // Before any look-up or forwarded call, whatever config id or Origin the request names
      // (docs/auth-proxy-service.md §4.1). request.ip honours SIGIL_TRUST_PROXY only.
      try {
        await limiter.address(request.ip);
      } catch (err) {
        await allowIfKnownOrigin(configs, request);
        throw err;
      }
      const endpoint = ENDPOINTS.get(request.url.split("?")[0]!);
      if (!endpoint) {
        await allowIfKnownOrigin(configs, request);
        throw notFound(`no auth proxy endpoint ${request.url.split("?")[0]!.slice(0, 100)}`);
      }
      const configId = header(request, CONFIG_ID_HEADER);
      if (configId === undefined || configId === "") {
        await allowIfKnownOrigin(configs, request);
        throw invalid("the X-Auth-Proxy-Config-ID header is required", [{ field: "X-Auth-Proxy-Config-ID", description: "required" }]);
      }
      if (configId.length > 128 || !/^[A-Za-z0-9._:-]+$/.test(configId)) {
        await allowIfKnownOrigin(configs, request);
        throw invalid("X-Auth-Proxy-Config-ID is not a config id", [{ field: "X-Auth-Proxy-Config-ID", description: "a config id" }]);
      }
      const entry = await configs.get(configId);
      if (!entry) {
        await allowIfKnownOrigin(configs, request);
        throw notFound(`auth proxy config ${configId} not found`);
      }
      const origin = header(request, "origin");
      // Refused before any work: no forwarded call, no message (docs/auth-proxy-service.md §3).
      if (!originAllowed(entry.config.allowedOrigins, origin))
        throw permissionDenied("this origin is not allowed by the auth proxy configuration", "FORBIDDEN");
      if (origin !== undefined) request.allowOrigin = origin;
      if (!entry.config.enabled) throw permissionDenied("the auth proxy is disabled for this configuration", "FORBIDDEN");
      await limiter.origin(configId, entry.config.allowedOrigins, origin);
      const body = readBody(request.body ?? {}, endpoint.body);
      return endpoint.run(
        { entry, api, settings, limiter, verificationKeys, clientIp: request.ip, captchaToken: header(request, CAPTCHA_HEADER) },
        body,
      );
    });
  },
);
