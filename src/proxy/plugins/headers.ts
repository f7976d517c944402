// The request headers the auth proxy reads: each at most once, or the request is invalid.
import type { FastifyRequest } from "fastify";
import { invalid } from "../../errors.ts";

/** A request header given at most once (any casing: fastify lowercases names). */
export function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  if (Array.isArray(v)) throw invalid(`${name} must be given once`);
  return v === undefined ? undefined : v;
}
