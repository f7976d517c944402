// Step 0 of every pipeline: the request as it arrived, and the time it is judged at.
import type { IncomingHttpHeaders } from "node:http";
import type { PipelineDeps } from "./deps.ts";
import type { RequestNetwork } from "../network/request-network.ts";

export interface RequestContext {
  deps: PipelineDeps;
  /** The path's operation: submit/<op> or query/<op>. */
  op: string;
  /** The exact bytes the stamp signs; parsed only after the stamp is verified. */
  raw: Buffer;
  headers: IncomingHttpHeaders;
  /** Request time, ms: the liveness window, and every row the request writes, use it. */
  now: number;
  /**
   * performance.now() when the pipeline took the request: a remembered credential look-up
   * serves it only if the store was checked after this (auth/credential-cache.ts).
   */
  arrived: number;
  /** The client address and rate limiter (server/app.ts); absent outside the HTTP app. */
  network?: RequestNetwork;
}

export function requestContext(
  deps: PipelineDeps,
  op: string,
  raw: Buffer,
  headers: IncomingHttpHeaders,
  network?: RequestNetwork,
): RequestContext {
  return { deps, op, raw, headers, now: (deps.now ?? Date.now)(), arrived: performance.now(), ...(network ? { network } : {}) };
}
