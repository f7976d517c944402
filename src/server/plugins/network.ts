// Network enforcement before anything else is done for a request (docs/network.md §3, §4):
// CORS, then the per-address rate limit — before the body is even read. The client address
// itself comes from the app's trustProxy setting; the allowlist and the credential and
// organization limits are checked by the pipeline, after authentication.
import { RateLimited, type RateLimiter } from "../../network/rate-limit.ts";
import { registerAnyOriginHook, registerCors } from "../../network/cors.ts";
import { globalPlugin } from "./global.ts";

/** Health and metrics are for the operator's probes, never limited. */
const UNLIMITED = new Set(["/healthz", "/readyz", "/metrics"]);

export type CorsPluginOptions = {
  origins: readonly string[];
  stampHeaders: readonly string[];
  /** Origins admitted beyond `origins` (the auth proxy's, docs/auth-proxy.md §5). */
  admit?: (origin: string) => Promise<boolean>;
};

export const corsPlugin = globalPlugin<CorsPluginOptions>("sigil-cors", async (app, opts) => {
  registerCors(app, opts.origins, opts.stampHeaders, opts.admit);
  // Public data any page may read (docs/network.md §4.1), whatever the list above says.
  registerAnyOriginHook(app);
});

/**
 * Registered after corsPlugin, so its hook runs after CORS's: a browser's refused request still
 * carries the CORS headers (and it sees the 429, not a CORS failure). The limiter is closed
 * with the app.
 */
export const addressLimitPlugin = globalPlugin<{ limiter?: RateLimiter }>("sigil-address-limit", async (app, opts) => {
  const limiter = opts.limiter;
  if (limiter) app.addHook("onClose", async () => limiter.close());
  // Callback style, no promise unless Redis is asked: this runs for every API request.
  app.addHook("onRequest", (req, reply, done) => {
    if (UNLIMITED.has(req.url.split("?", 1)[0]!)) return done();
    if (!limiter?.addressLimited) return done();
    const refuse = (err: unknown) => {
      if (!(err instanceof RateLimited)) return done(err as Error);
      void reply.status(err.httpStatus).header("retry-after", String(err.retryAfterSeconds)).send(err.toBody());
    };
    let pending: void | Promise<void>;
    try {
      pending = limiter.address(req.ip);
    } catch (err) {
      return refuse(err);
    }
    if (!pending) return done();
    pending.then(() => done(), refuse);
  });
});
