// The baselines for the load benchmark, loaded exactly like Sigil:
//
// - POST /echo: the smallest useful fastify app — one unauthenticated route that parses a JSON
//   body and answers a small JSON object: what the machine + node + fastify + autocannon can
//   do at all.
// - POST /verify: the same, plus what no stamped request can skip — the X-Stamp header decoded
//   and its P-256 signature over the raw body checked with node:crypto on libuv's pool (the
//   key imported once and cached), as Sigil does it. The floor of a stamped request on this
//   machine: Sigil's figures read against it show what Sigil adds beyond the signature.
//
//   node --import tsx bench/baseline-server.ts --port <n>   (prints {"port":n} when listening)
import Fastify from "fastify";
import { createPublicKey, verify, type KeyObject } from "node:crypto";
import { promisify } from "node:util";

const i = process.argv.indexOf("--port");
const port = i >= 0 ? Number(process.argv[i + 1]) : 0;

const app = Fastify({ logger: false });
app.post("/echo", async (req) => {
  const body = req.body as Record<string, unknown> | null;
  return { ok: true, fields: body && typeof body === "object" ? Object.keys(body).length : 0 };
});

// The raw body is what the stamp signs: keep it next to the parsed one.
app.addContentTypeParser("application/json", { parseAs: "buffer" }, (req, raw, done) => {
  (req as unknown as { rawBody: Buffer }).rawBody = raw as Buffer;
  try {
    done(null, JSON.parse((raw as Buffer).toString("utf8")));
  } catch (err) {
    done(err as Error, undefined);
  }
});
const verifyInPool = promisify(verify);
const P256_SPKI_COMPRESSED = "3039301306072a8648ce3d020106082a8648ce3d030107032200";
const keys = new Map<string, KeyObject>();
app.post("/verify", async (req, reply) => {
  const header = req.headers["x-stamp"];
  if (typeof header !== "string") return reply.code(401).send({ code: 16, message: "no stamp" });
  const stamp = JSON.parse(Buffer.from(header, "base64url").toString("utf8")) as { publicKey: string; signature: string };
  let key = keys.get(stamp.publicKey);
  if (!key) {
    key = createPublicKey({ key: Buffer.from(P256_SPKI_COMPRESSED + stamp.publicKey, "hex"), format: "der", type: "spki" });
    keys.set(stamp.publicKey, key);
  }
  const rawBody = (req as unknown as { rawBody: Buffer }).rawBody;
  const ok = await verifyInPool("sha256", rawBody, { key, dsaEncoding: "der" }, Buffer.from(stamp.signature, "hex"));
  if (!ok) return reply.code(401).send({ code: 16, message: "bad signature" });
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
