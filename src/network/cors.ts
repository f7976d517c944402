// CORS for browsers that call the public API directly (@turnkey/core with passkey, session or
// attested stamps). Origins are exact (scheme://host[:port]); none by default, so a browser
// on any other page gets no allow headers and its preflight fails.
import type { FastifyInstance } from "fastify";
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

export function parseCorsOrigins(v: string): string[] {
  const out: string[] = [];
  for (const raw of v.split(",").map((s) => s.trim()).filter((s) => s !== "")) {
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
    maxAge: 600,
    strictPreflight: true,
  });
}
