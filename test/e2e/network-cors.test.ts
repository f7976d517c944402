// CORS for browsers calling the public API directly: real preflight requests (OPTIONS with
// Origin and Access-Control-Request-* headers, exactly what a browser sends before the SDK's
// POST with content-type, x-client-version and a stamp header) against a running server.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import { browserMissing, launchChromium, serveBlankPage } from "../helpers/browser.ts";
import { newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { goodStamp } from "../helpers/raw-http.ts";

const ALLOWED = "https://app.example.com";
// x-session: @turnkey/sdk-browser's read-only session header (docs/sessions-and-network.md §7.2).
const SDK_HEADERS = ["content-type", "x-client-version", "x-stamp", "x-stamp-webauthn", "x-stamp-attested", "x-session"];

/** Any method, exact headers (fetch would refuse to send Origin itself on OPTIONS as a browser does). */
function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const preflight = (base: string, origin: string, stampHeader = "x-stamp") =>
  send(`${base}/public/v1/query/whoami`, "OPTIONS", {
    Origin: origin,
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": `content-type,x-client-version,${stampHeader}`,
  });

describe("CORS (sqlite; no store behaviour involved)", { timeout: 60_000 }, () => {
  let inst: Instance;
  let server: RunningServer;
  let root: InitResult;

  before(async () => {
    inst = await newInstance("sqlite");
    root = await sigilInit(inst);
    server = await startServer(inst, ["--cors-origins", `${ALLOWED},http://localhost:3000`]);
  });
  after(async () => {
    await server?.stop();
    await inst?.cleanup();
  });

  it("a preflight from an allowed origin passes with the SDK's headers, for each stamp header", async () => {
    for (const stamp of ["x-stamp", "x-stamp-webauthn", "x-stamp-attested", "x-session"]) {
      const res = await preflight(server.url, ALLOWED, stamp);
      assert.equal(res.status, 204);
      assert.equal(res.headers["access-control-allow-origin"], ALLOWED);
      const allowed = String(res.headers["access-control-allow-headers"])
        .toLowerCase()
        .split(/\s*,\s*/);
      for (const h of SDK_HEADERS) assert.ok(allowed.includes(h), `${h} not in ${allowed.join(",")}`);
      assert.match(String(res.headers["access-control-allow-methods"]), /POST/);
      assert.equal(res.headers["access-control-allow-credentials"], undefined);
    }
  });

  it("the actual request from an allowed origin carries the allow-origin header", async () => {
    const body = JSON.stringify({ organizationId: root.organizationId });
    const stamp = await goodStamp({ publicKey: root.apiPublicKey, privateKey: root.apiPrivateKey }, body);
    const res = await send(
      `${server.url}/public/v1/query/whoami`,
      "POST",
      { Origin: ALLOWED, "Content-Type": "application/json", "X-Stamp": stamp, "X-Client-Version": "@turnkey/core@test" },
      body,
    );
    assert.equal(res.status, 200);
    assert.equal(res.headers["access-control-allow-origin"], ALLOWED);
    assert.match(String(res.headers.vary), /origin/i);
  });

  it("another origin gets no allow headers (the browser refuses); so do near misses", async () => {
    for (const origin of [
      "https://evil.example.com",
      "https://app.example.com.evil.com",
      "http://app.example.com",
      "https://APP.example.com:443x",
      "null",
    ]) {
      const res = await preflight(server.url, origin);
      assert.equal(res.headers["access-control-allow-origin"], undefined, origin);
      assert.equal(res.headers["access-control-allow-headers"], undefined, origin);
    }
  });

  it("a request refused by the address rate limit still carries the CORS headers (the browser sees the 429)", async () => {
    await server.stop();
    server = await startServer(inst, ["--cors-origins", ALLOWED, "--rate-limit-address", "1"]);
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof send>> | undefined;
    for (let i = 0; i < 4; i++) {
      last = await send(`${server.url}/public/v1/query/whoami`, "POST", { Origin: ALLOWED, "Content-Type": "application/json" }, "{}");
      statuses.push(last.status);
    }
    assert.deepEqual(statuses, [401, 401, 429, 429]);
    assert.equal(last!.headers["access-control-allow-origin"], ALLOWED);
    assert.match(String(last!.headers["retry-after"]), /^[1-9]/);
  });

  it("no SIGIL_CORS_ORIGINS (the default): no origin is allowed", async () => {
    await server.stop();
    server = await startServer(inst);
    const res = await preflight(server.url, ALLOWED);
    assert.equal(res.headers["access-control-allow-origin"], undefined);
    assert.notEqual(res.status, 204);
  });
});

describe("CORS in headless Chromium", { skip: browserMissing(), timeout: 90_000 }, () => {
  let inst: Instance;
  let server: RunningServer;
  let root: InitResult;
  let pages: { port: number; close(): Promise<void> };
  let port: number;
  let browser: import("playwright-core").Browser;

  before(async () => {
    pages = await serveBlankPage("cors");
    port = pages.port;
    inst = await newInstance("sqlite");
    root = await sigilInit(inst);
    // Allowed: the page as http://localhost:<port>. The same page as http://127.0.0.1:<port> is another origin.
    server = await startServer(inst, ["--cors-origins", `http://localhost:${port}`]);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await inst?.cleanup();
    await pages?.close();
  });

  /** The SDK's request (content-type, x-client-version, X-Stamp) made by the page's own fetch. */
  async function fetchFrom(origin: string): Promise<{ ok: true; status: number; body: string } | { ok: false; error: string }> {
    const body = JSON.stringify({ organizationId: root.organizationId });
    const stamp = await goodStamp({ publicKey: root.apiPublicKey, privateKey: root.apiPrivateKey }, body);
    const page = await browser.newPage();
    try {
      await page.goto(`${origin}/`);
      return await page.evaluate(
        async ({ url, body, stamp }) => {
          try {
            const res = await fetch(url, {
              method: "POST",
              body,
              headers: { "Content-Type": "application/json", "X-Client-Version": "@turnkey/core@test", "X-Stamp": stamp },
            });
            return { ok: true as const, status: res.status, body: await res.text() };
          } catch (err) {
            return { ok: false as const, error: String(err) };
          }
        },
        { url: `${server.url}/public/v1/query/whoami`, body, stamp },
      );
    } finally {
      await page.close();
    }
  }

  it("a page on the allowed origin calls the API directly (preflight passes)", async () => {
    const r = await fetchFrom(`http://localhost:${port}`);
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.status, 200);
    assert.equal(JSON.parse(r.body).organizationId, root.organizationId);
  });

  it("the same page on another origin is refused by the browser", async () => {
    const r = await fetchFrom(`http://127.0.0.1:${port}`);
    assert.equal(r.ok, false, JSON.stringify(r));
    assert.match((r as { error: string }).error, /Failed to fetch/);
  });
});
