// The HTTP reader (src/server/plugins/raw-body.ts, docs/network.md §6.1) over a real socket: a
// large body, declared or chunked, arrives as the exact bytes sent, with its facts gathered on
// the way (the pipeline's parse then gives what parsing the bytes whole gives); the body limit
// and the declared length are enforced as fastify's own reader did (413, 400).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import { rawBodyPlugin } from "../../src/server/plugins/raw-body.ts";
import { parseJsonBody } from "../../src/pipeline/body.ts";

const LIMIT = 300_000;
let app: FastifyInstance;
let port: number;

before(async () => {
  app = Fastify({ bodyLimit: LIMIT });
  await app.register(rawBodyPlugin);
  app.post("/echo", async (req) => {
    const raw = req.body as Buffer;
    let parsed: unknown;
    try {
      parsed = parseJsonBody(raw);
    } catch (err) {
      parsed = { refused: (err as Error).message };
    }
    return { length: raw.length, hex: raw.subarray(0, 16).toString("hex"), same: JSON.stringify(parsed) };
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  port = (app.server.address() as AddressInfo).port;
});
after(() => app.close());

/** POSTs `body` in `chunks` pieces, with or without a content-length; resolves status and JSON. */
function post(
  body: Buffer,
  opts: { chunks: number; declare?: number | "none" },
): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { "content-type": "application/json" };
    if (opts.declare !== "none") headers["content-length"] = opts.declare ?? body.length;
    const req = http.request({ host: "127.0.0.1", port, path: "/echo", method: "POST", headers }, (res) => {
      const got: Buffer[] = [];
      res.on("data", (c: Buffer) => got.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, json: JSON.parse(Buffer.concat(got).toString() || "{}") }));
    });
    req.on("error", reject);
    const size = Math.ceil(body.length / opts.chunks);
    for (let at = 0; at < body.length; at += size) req.write(body.subarray(at, at + size));
    req.end();
  });
}

const expected = (body: Buffer) => {
  let parsed: unknown;
  try {
    parsed = parseJsonBody(Buffer.from(body));
  } catch (err) {
    parsed = { refused: (err as Error).message };
  }
  return JSON.stringify(parsed);
};

describe("the HTTP reader", () => {
  const big = Buffer.from(JSON.stringify({ organizationId: "x", pad: 'é\\"[{'.repeat(15_000), list: Array(1000).fill(0) }));
  const deep = Buffer.from(`{"pad":${"[".repeat(70)}${"]".repeat(70)},"s":"${" ".repeat(100_000)}"}`);

  it("a large body, declared or chunked, in many pieces: the exact bytes, parsed as the whole bytes parse", async () => {
    assert.ok(big.length > 64 * 1024 && big.length < LIMIT);
    for (const declare of [undefined, "none"] as const) {
      for (const chunks of [1, 7, 100]) {
        for (const body of [big, deep]) {
          const { status, json } = await post(body, { chunks, declare });
          assert.equal(status, 200);
          assert.equal(json.length, body.length);
          assert.equal(json.hex, body.subarray(0, 16).toString("hex"));
          assert.equal(json.same, expected(body), `${declare ?? "declared"}, ${chunks} pieces`);
        }
      }
    }
    assert.match(expected(deep), /nested more than 64 levels/);
  });

  it("past the limit, declared or received: 413; a declared length the body does not match: 400", async () => {
    const huge = Buffer.alloc(LIMIT + 1, 0x20);
    assert.equal((await post(huge, { chunks: 5 })).status, 413);
    assert.equal((await post(huge, { chunks: 5, declare: "none" })).status, 413);
    assert.equal((await post(big, { chunks: 3, declare: LIMIT + 10 })).status, 413);
  });
});
