// `sigil serve` serves the operator console at /console, on the API's own origin (docs/console.md
// §2): the page calls the API with no CORS. Every answer under /console — files, redirect, 404,
// a failed build — carries the console's headers (docs/console.md §3).
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { CONSOLE_HEADERS, consoleAssets } from "./build.ts";

export const CONSOLE_PATH = "/console";

export async function consolePlugin(app: FastifyInstance): Promise<void> {
  const send = async (req: FastifyRequest, reply: FastifyReply, file: string) => {
    void reply.headers(CONSOLE_HEADERS);
    let files;
    try {
      files = await consoleAssets();
    } catch (err) {
      req.log.error({ reason: (err as Error).message }, "the console could not be built");
      return reply.status(500).type("text/plain; charset=utf-8").send("the console could not be built; see the server's log\n");
    }
    const asset = files.get(file);
    if (!asset) return reply.status(404).type("text/plain; charset=utf-8").send("not found\n");
    void reply.header("etag", asset.etag);
    if (req.headers["if-none-match"] === asset.etag) return reply.status(304).send();
    return reply.type(asset.type).send(asset.body);
  };
  // /console → /console/: the page's files are named relative to it.
  app.get(CONSOLE_PATH, async (_req, reply) => reply.headers(CONSOLE_HEADERS).redirect(`${CONSOLE_PATH}/`, 308));
  app.get(`${CONSOLE_PATH}/`, (req, reply) => send(req, reply, "/index.html"));
  app.get(`${CONSOLE_PATH}/*`, (req, reply) => {
    const rest = (req.params as { "*": string })["*"];
    // Only the flat file names the build makes; anything else (dots, slashes, index.html itself) is not found.
    return send(req, reply, /^[a-z]+\.(js|css)$/.test(rest) ? `/${rest}` : "/");
  });
}
