// A plugin whose hooks, handlers and routes belong to the instance it is registered on (the
// app), not to an encapsulated child: what the fastify-plugin package does, by the same
// symbols fastify reads, without the dependency (docs/request-path.md §7).
import type { FastifyPluginAsync } from "fastify";

export function globalPlugin<O extends Record<string, unknown>>(name: string, fn: FastifyPluginAsync<O>): FastifyPluginAsync<O> {
  return Object.assign(fn, {
    [Symbol.for("skip-override")]: true,
    [Symbol.for("fastify.display-name")]: name,
    [Symbol.for("plugin-meta")]: { name },
  });
}
