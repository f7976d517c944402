// The baseline for the load benchmark: the smallest useful fastify app — one
// unauthenticated POST route that parses a JSON body and answers a small JSON object.
// Loading it exactly like Sigil measures what the machine + node + fastify + autocannon
// can do at all; Sigil's figures are read as a fraction of it.
//
//   node --import tsx bench/baseline-server.ts --port <n>   (prints {"port":n} when listening)
import Fastify from "fastify";

const i = process.argv.indexOf("--port");
const port = i >= 0 ? Number(process.argv[i + 1]) : 0;

const app = Fastify({ logger: false });
app.post("/echo", async (req) => {
  const body = req.body as Record<string, unknown> | null;
  return { ok: true, fields: body && typeof body === "object" ? Object.keys(body).length : 0 };
});
app.get("/readyz", async () => ({ status: "ready" }));

await app.listen({ port, host: "127.0.0.1" });
const address = app.server.address();
process.stdout.write(JSON.stringify({ port: typeof address === "object" && address ? address.port : port }) + "\n");

const shutdown = () => void app.close().then(() => process.exit(0));
process.once("SIGINT", shutdown);
process.once("SIGTERM", shutdown);
