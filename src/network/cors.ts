// CORS for browsers that call the public API directly (@turnkey/core with passkey, session or
// attested stamps). Origins are exact (scheme://host[:port]); none by default, so a browser
// on any other page gets no allow headers and its preflight fails.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import cors from "@fastify/cors";

/**
 * What the SDKs send (docs/network.md §4): the body's type, the client version, one stamp —
 * any of `stampHeaders`, the ones auth/strategies.ts lists (STAMP_HEADERS), so a new stamp
 * kind is allowed with it. The caller passes them: config.ts imports this module, and the
 * strategies import the configuration, so importing them here would close a cycle.
 */
export function corsAllowedHeaders(stampHeaders: readonly string[]): string[] {
  return ["content-type", "x-client-version", ...stampHeaders];
}

/** Preflight answers are cached this long (docs/network.md §4). */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * Route options of public data any page may read (docs/network.md §4.1): the CORS plugin
 * leaves the route alone (`cors: false`: SIGIL_CORS_ORIGINS neither adds to nor takes from
 * it), and registerAnyOriginHook answers `Access-Control-Allow-Origin: *` on it.
 */
export const ANY_ORIGIN = { config: { cors: false, anyOrigin: true } } as const;

/**
 * `Access-Control-Allow-Origin: *` (never credentials) on every answer of an ANY_ORIGIN route,
 * errors included. An onRequest hook of the app, added before the per-address limit's, so a
 * 429 carries it too.
 */
export function registerAnyOriginHook(app: FastifyInstance): void {
  app.addHook("onRequest", (req, reply, done) => {
    if ((req.routeOptions.config as { anyOrigin?: unknown } | undefined)?.anyOrigin === true)
      void reply.header("access-control-allow-origin", "*");
    done();
  });
}

/** The preflight of an ANY_ORIGIN route: GET only, the headers the SDKs send on every request, no credentials. */
export async function anyOriginPreflight(_req: FastifyRequest, reply: FastifyReply): Promise<void> {
  void reply
    .header("access-control-allow-methods", "GET, HEAD")
    .header("access-control-allow-headers", "content-type, x-client-version")
    .header("access-control-max-age", String(PREFLIGHT_MAX_AGE_SECONDS))
    .header("content-length", "0")
    .code(204);
  await reply.send();
}

export function parseCorsOrigins(v: string): string[] {
  const out: string[] = [];
  for (const raw of v
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")) {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new Error(`SIGIL_CORS_ORIGINS: ${JSON.stringify(raw)} is not an origin (scheme://host[:port])`);
    }
    if ((u.protocol !== "https:" && u.protocol !== "http:") || u.origin !== raw.replace(/\/$/, "")) {
      throw new Error(`SIGIL_CORS_ORIGINS: ${JSON.stringify(raw)} must be an exact origin such as https://app.example.com`);
    }
    out.push(u.origin);
  }
  return out;
}

/**
 * Registers the plugin (loaded when the app is readied); nothing when no origin is allowed and
 * there is no other source of origins. `stampHeaders`: STAMP_HEADERS of auth/strategies.ts.
 * `more`: origins admitted besides the configured ones — the auth proxy's (auth-proxy/origins.ts,
 * docs/auth-proxy.md §5), asked only for an origin the configured list does not hold.
 */
export function registerCors(
  app: FastifyInstance,
  origins: readonly string[],
  stampHeaders: readonly string[],
  more?: (origin: string) => Promise<boolean>,
): void {
  if (origins.length === 0 && !more) return;
  const allowed = new Set(origins);
  void app.register(cors, {
    // Exact match; anything else is answered without allow headers.
    origin: (origin, cb) => {
      if (origin === undefined) return cb(null, false);
      if (allowed.has(origin) || !more) return cb(null, allowed.has(origin));
      more(origin).then(
        (ok) => cb(null, ok),
        () => cb(null, false),
      );
    },
    methods: ["GET", "POST"],
    allowedHeaders: corsAllowedHeaders(stampHeaders),
    credentials: false,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    strictPreflight: true,
  });
}
