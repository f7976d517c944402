// What the server knows about a request's network side, handed from the HTTP layer
// (server/app.ts) to the pipeline's authentication step without widening every pipeline
// signature: keyed by the request's header object, which fastify hands on unchanged to
// submitActivity/runQuery (RequestContext.headers). Absent (a pipeline called without the
// app): no address is known and no rate limit applies.
import type { IncomingHttpHeaders } from "node:http";
import type { RateLimiter } from "./rate-limit.ts";
import type { Actor } from "../activities/define.ts";

export interface RequestNetwork {
  /** The client address as fastify derived it (trust-proxy applied); raw text. */
  address: string | undefined;
  limiter?: RateLimiter;
}

const byHeaders = new WeakMap<IncomingHttpHeaders, RequestNetwork>();

export function attachNetwork(headers: IncomingHttpHeaders, network: RequestNetwork): void {
  byHeaders.set(headers, network);
}

export function networkOf(headers: IncomingHttpHeaders): RequestNetwork | undefined {
  return byHeaders.get(headers);
}

/**
 * The request behind an activity's actor (the same object reaches ExecuteContext.actor), so a
 * handler can see where its request came from: set_ip_allowlist refuses to lock its caller out.
 */
export interface Caller {
  address: string | undefined;
  /** Lower-case public key of the API key that signed, if one did. */
  publicKey: string | undefined;
}

const byActor = new WeakMap<Actor, Caller>();

export function rememberCaller(actor: Actor, caller: Caller): void {
  byActor.set(actor, caller);
}

export function callerOf(actor: Actor): Caller | undefined {
  return byActor.get(actor);
}
