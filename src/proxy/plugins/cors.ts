// CORS for the browser apps the proxy serves (docs/auth-proxy-service.md §3): a preflight is
// allowed for an origin some enabled config allows; every answer varies on Origin and carries
// the allow header once the request's Origin is known to be allowed (request.allowOrigin).
import type { FastifyRequest } from "fastify";
import { permissionDenied } from "../../errors.ts";
import { globalPlugin } from "../../server/plugins/global.ts";
import type { ConfigSource } from "../config-source.ts";
import { preflightAllowed } from "../origins.ts";
import { header } from "./headers.ts";

export const CONFIG_ID_HEADER = "x-auth-proxy-config-id";
export const CAPTCHA_HEADER = "x-captcha-token";
/** What a preflight allows (what @turnkey/core sends). */
export const ALLOWED_HEADERS = ["content-type", CONFIG_ID_HEADER, CAPTCHA_HEADER, "x-client-version"] as const;
const PREFLIGHT_MAX_AGE_SECONDS = 600;

declare module "fastify" {
  interface FastifyRequest {
    /** The Origin to answer with Access-Control-Allow-Origin, once it is known to be allowed. */
    allowOrigin?: string;
  }
}

/**
 * The browser may read an error only when it carries the allow header: before the config is
 * known, an origin some enabled config allows gets it.
 */
export async function allowIfKnownOrigin(configs: ConfigSource, request: FastifyRequest): Promise<void> {
  const origin = header(request, "origin");
  if (origin === undefined) return;
  try {
    if (preflightAllowed(await configs.origins(), origin)) request.allowOrigin = origin;
  } catch {
    /* the API is away: the error goes out without the header */
  }
}

export const proxyCorsPlugin = globalPlugin<{ configs: ConfigSource }>("auth-proxy-cors", async (app, { configs }) => {
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
});
