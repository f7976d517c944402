// GET /public/v1/discovery/keys is readable from any origin (docs/network.md §4.1): real HTTP
// requests carrying an Origin against `sigil serve`, on both engines (the keys are read from
// the store). The answer, its preflight and its 429 say `Access-Control-Allow-Origin: *`
// without credentials whatever SIGIL_CORS_ORIGINS lists; no other route is opened by it. And
// headless Chromium on a page of another origin reads the keys (with and without a preflight)
// and is refused the webhook key set.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import { browserMissing, launchChromium, serveBlankPage } from "../helpers/browser.ts";
import { engines, newInstance, sigilInit, startServer, type Instance, type RunningServer } from "../helpers/server.ts";

const ALLOWED = "https://app.example.com";
const OTHER = "https://frame.elsewhere.example";
const KEYS = "/public/v1/discovery/keys";

type Headers = Record<string, string | string[] | undefined>;

/** Any method, exact headers (as a browser sends them; fetch would not send Origin on OPTIONS). */
function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: Headers; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const preflight = (base: string, path: string, origin: string, method: string, requestHeaders: string) =>
  send(`${base}${path}`, "OPTIONS", {
    Origin: origin,
    "Access-Control-Request-Method": method,
    "Access-Control-Request-Headers": requestHeaders,
  });

function assertAnyOrigin(h: Headers, what: string): void {
  assert.equal(h["access-control-allow-origin"], "*", what);
  assert.equal(h["access-control-allow-credentials"], undefined, `${what}: never credentials`);
}

for (const spec of engines()) {
  describe(`discovery keys from any origin [${spec.name}]`, { skip: spec.skip, timeout: 120_000 }, () => {
    let inst: Instance;
    let server: RunningServer;

    before(async () => {
      inst = await newInstance(spec.name);
      await sigilInit(inst);
      server = await startServer(inst, ["--cors-origins", ALLOWED]);
    });
    after(async () => {
      await server?.stop();
      await inst?.cleanup();
    });

    it("GET answers * to an origin SIGIL_CORS_ORIGINS does not list, and to one it lists", async () => {
      for (const origin of [OTHER, ALLOWED, "null"]) {
        const res = await send(`${server.url}${KEYS}`, "GET", { Origin: origin });
        assert.equal(res.status, 200, res.body);
        assertAnyOrigin(res.headers, origin);
        const doc = JSON.parse(res.body) as { keys: { purpose: string }[] };
        assert.ok(
          doc.keys.some((k) => k.purpose === "OTP_ENCRYPTION_TARGET"),
          res.body,
        );
      }
    });

    it("its preflight passes for any origin: GET, the SDK's headers, no credentials", async () => {
      const res = await preflight(server.url, KEYS, OTHER, "GET", "x-client-version,content-type");
      assert.equal(res.status, 204);
      assertAnyOrigin(res.headers, "preflight");
      assert.match(String(res.headers["access-control-allow-methods"]), /\bGET\b/);
      const allowed = String(res.headers["access-control-allow-headers"])
        .toLowerCase()
        .split(/\s*,\s*/);
      for (const h of ["content-type", "x-client-version"]) assert.ok(allowed.includes(h), `${h} in ${allowed.join(",")}`);
    });

    it("no other route is opened: the other discovery documents and the API keep the configured origins only", async () => {
      for (const path of ["/public/v1/discovery/webhooks/jwks", "/.well-known/openid-configuration"]) {
        const res = await send(`${server.url}${path}`, "GET", { Origin: OTHER });
        assert.equal(res.status, 200, `${path}: ${res.body}`);
        assert.equal(res.headers["access-control-allow-origin"], undefined, path);
      }
      const refused = await preflight(server.url, "/public/v1/query/whoami", OTHER, "POST", "content-type,x-stamp");
      assert.equal(refused.headers["access-control-allow-origin"], undefined);
      const allowed = await preflight(server.url, "/public/v1/query/whoami", ALLOWED, "POST", "content-type,x-stamp");
      assert.equal(allowed.status, 204);
      assert.equal(allowed.headers["access-control-allow-origin"], ALLOWED, "the configured origin still gets its own answer");
    });

    it("without SIGIL_CORS_ORIGINS too, and a 429 of the address limit still carries *", async () => {
      await server.stop();
      server = await startServer(inst, ["--rate-limit-address", "1"]);
      const statuses: number[] = [];
      let last: Awaited<ReturnType<typeof send>> | undefined;
      for (let i = 0; i < 4; i++) {
        last = await send(`${server.url}${KEYS}`, "GET", { Origin: OTHER });
        statuses.push(last.status);
        assertAnyOrigin(last.headers, `request ${i} (${last.status})`);
      }
      assert.equal(statuses[0], 200);
      assert.equal(statuses.at(-1), 429, `the limit refuses at last: ${statuses.join(",")}`);
      const other = await send(`${server.url}/public/v1/discovery/webhooks/jwks`, "GET", { Origin: OTHER });
      assert.equal(other.headers["access-control-allow-origin"], undefined);
    });
  });
}

describe("discovery keys from a page of another origin, in headless Chromium (sqlite)", { skip: browserMissing(), timeout: 90_000 }, () => {
  let inst: Instance;
  let server: RunningServer;
  let pages: { port: number; close(): Promise<void> };
  let pageOrigin: string;
  let browser: import("playwright-core").Browser;

  before(async () => {
    pages = await serveBlankPage("frame");
    pageOrigin = `http://127.0.0.1:${pages.port}`;
    inst = await newInstance("sqlite");
    await sigilInit(inst);
    // The page's origin is not listed.
    server = await startServer(inst, ["--cors-origins", ALLOWED]);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await inst?.cleanup();
    await pages?.close();
  });

  /** The page's own fetch (a header added: the browser preflights first). */
  async function fetchFromPage(
    path: string,
    headers: Record<string, string>,
  ): Promise<{ ok: true; status: number; body: string } | { ok: false; error: string }> {
    const page = await browser.newPage();
    try {
      await page.goto(`${pageOrigin}/`);
      return await page.evaluate(
        async ({ url, headers }) => {
          try {
            const res = await fetch(url, { headers });
            return { ok: true as const, status: res.status, body: await res.text() };
          } catch (err) {
            return { ok: false as const, error: String(err) };
          }
        },
        { url: `${server.url}${path}`, headers },
      );
    } finally {
      await page.close();
    }
  }

  it("reads the keys, with and without a preflight", async () => {
    for (const headers of [{}, { "X-Client-Version": "@sigil/frame@test" }] as Record<string, string>[]) {
      const r = await fetchFromPage(KEYS, headers);
      assert.ok(r.ok, JSON.stringify(r));
      assert.equal(r.status, 200);
      assert.ok((JSON.parse(r.body) as { keys: unknown[] }).keys.length > 0);
    }
  });

  it("is refused the webhook key set (no other route is opened)", async () => {
    const r = await fetchFromPage("/public/v1/discovery/webhooks/jwks", {});
    assert.equal(r.ok, false, JSON.stringify(r));
    assert.match((r as { error: string }).error, /Failed to fetch/);
  });
});
