// Which browser origins the auth proxy serves (docs/auth-proxy-service.md §3). A config's
// allowedOrigins are exact origins (scheme://host[:port]); an empty list allows every origin.
// No partial wildcards: update_auth_proxy_config refuses any "*" but a lone one (every origin),
// so stored origins are exact.
import type { OriginsResponse } from "../auth-proxy/channel.ts";

/**
 * The canonical form of an origin (lower-case scheme and host, default port dropped, no
 * trailing slash), or undefined for anything that is not an http(s) origin ("null" included).
 */
export function canonicalOrigin(text: string | undefined): string | undefined {
  if (text === undefined || text === "" || text.length > 2048 || text === "null") return undefined;
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return undefined;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return undefined;
  if (u.username || u.password || u.search || u.hash || (u.pathname !== "/" && u.pathname !== "")) return undefined;
  return u.origin;
}

/**
 * True when a config with these allowedOrigins accepts a request carrying `origin` (the
 * Origin header as sent, or undefined when there is none). Empty list: every request. A
 * non-empty list: only a request whose Origin is one of them — a request without Origin is
 * refused, because nothing says where it comes from (our choice).
 */
export function originAllowed(allowedOrigins: readonly string[], origin: string | undefined): boolean {
  if (allowedOrigins.length === 0) return true;
  const o = canonicalOrigin(origin);
  if (o === undefined) return false;
  return allowedOrigins.some((a) => canonicalOrigin(a) === o);
}

/** A preflight (which carries no config id) is answered for an origin some enabled config allows. */
export function preflightAllowed(origins: OriginsResponse, origin: string | undefined): boolean {
  const o = canonicalOrigin(origin);
  if (o === undefined) return false;
  if (origins.anyOrigin) return true;
  return origins.origins.some((a) => canonicalOrigin(a) === o);
}
