// What the server knows about a request's network side: the HTTP layer (server/app.ts) hands
// it to the pipeline with the request (RequestContext.network), authentication enforces the
// allowlist and rate limits with it, and a new activity's handler sees where its request came
// from (ExecuteContext.caller). Absent (a pipeline called without the app): no address is
// known and no rate limit applies.
import type { RateLimiter } from "./rate-limit.ts";

export interface RequestNetwork {
  /** The client address as fastify derived it (trust-proxy applied); raw text. */
  address: string | undefined;
  limiter?: RateLimiter;
}

/** The request behind a new activity: set_ip_allowlist refuses to lock its caller out. */
export interface Caller {
  address: string | undefined;
  /** Lower-case public key of the API key that signed, if one did. */
  publicKey: string | undefined;
}
