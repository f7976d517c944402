// @turnkey/core's own OTP flow against Sigil, unchanged, with @turnkey/crypto aliased to
// @sigil/client/turnkey-crypto by the client's esbuild plugin (lib/client/README.md "Using the
// kit's OTP modal", docs/auth-proxy.md §7). A browser bundle of core's TurnkeyClient, built here
// with `sigilTurnkeyCrypto()`, runs in headless Chromium against `sigil serve` and its auth proxy
// (the page's origin allowed), with a real SMTP server receiving the codes:
//   - sign-up: core's initOtp, then core's completeOtp (its verifyOtp, then signUpWithOtp);
//   - login: core's initOtp, core's verifyOtp, then core's loginWithOtp — the same user and
//     organization, a session JWT bound to the key core made;
//   - configureSigil pointed at a discovery endpoint publishing another key: core's verifyOtp
//     fails before anything is posted to the proxy (the alias trusts only published keys).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import type { Browser, Page } from "playwright-core";
import { sigilTurnkeyCrypto } from "@sigil/client/esbuild";
import {
  engines,
  freePort,
  newInstance,
  sigilInit,
  startServer,
  type InitResult,
  type Instance,
  type RunningServer,
} from "../helpers/server.ts";
import { browserMissing, launchChromium } from "../helpers/browser.ts";
import { SmtpSink, codeFrom } from "../helpers/smtp-sink.ts";
import { generateP256 } from "../../src/crypto/p256.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;
type Attempt<T> = { ok: true; value: T } | { ok: false; error: string };

const ROOT = path.resolve(import.meta.dirname, "../..");

// The app: core as an app imports it; nothing of Sigil but configureSigil.
const PAGE_SCRIPT = `
import { TurnkeyClient, OtpType } from "@turnkey/core";
import { configureSigil } from "@sigil/client/turnkey-crypto";

let client;
const attempt = async (fn) => {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    const chain = [];
    for (let e = err, i = 0; e && i < 6; e = e.cause, i++) chain.push(String(e.message ?? e));
    return { ok: false, error: chain.join(" <- ") };
  }
};
window.app = {
  async init(c) {
    configureSigil({ apiBaseUrl: c.keysBaseUrl });
    client = new TurnkeyClient({ apiBaseUrl: c.apiBaseUrl, authProxyUrl: c.authProxyUrl, authProxyConfigId: c.authProxyConfigId, organizationId: c.organizationId });
    await client.init();
    return true;
  },
  initOtp: (contact) => attempt(() => client.initOtp({ otpType: OtpType.Email, contact })),
  completeOtp: (p) => attempt(() => client.completeOtp({ otpId: p.otpId, otpCode: p.otpCode, otpEncryptionTargetBundle: p.otpEncryptionTargetBundle, contact: p.contact, otpType: OtpType.Email })),
  verifyThenLogin: (p) =>
    attempt(async () => {
      const { verificationToken, publicKey } = await client.verifyOtp({ otpId: p.otpId, otpCode: p.otpCode, otpEncryptionTargetBundle: p.otpEncryptionTargetBundle });
      const account = await client.httpClient.proxyGetAccount({ filterType: "EMAIL", filterValue: p.contact, verificationToken });
      const r = await client.loginWithOtp({ verificationToken, organizationId: account.organizationId });
      return { publicKey, organizationId: account.organizationId, ...r };
    }),
  verifyOnly: (p) => attempt(() => client.verifyOtp({ otpId: p.otpId, otpCode: p.otpCode, otpEncryptionTargetBundle: p.otpEncryptionTargetBundle })),
  session: () => attempt(() => client.getSession()),
  user: () => attempt(() => client.fetchUser()),
};
`;

/** Serves the page and its bundle (built with the plugin), and a discovery endpoint publishing a key of nobody's. */
async function servePage(): Promise<{ port: number; inputs: string[]; close(): Promise<void> }> {
  const { build } = await import("esbuild");
  const out = await build({
    stdin: { contents: PAGE_SCRIPT, resolveDir: ROOT, loader: "js" },
    bundle: true,
    write: false,
    metafile: true,
    platform: "browser",
    format: "iife",
    plugins: [sigilTurnkeyCrypto()],
    logLevel: "silent",
  });
  const code = out.outputFiles[0]!.text;
  const strangerKeys = JSON.stringify({
    keys: [
      { keyId: "x", purpose: "OTP_ENCRYPTION_TARGET", publicKey: generateP256().publicUncompressed, createdAt: "1", status: "active" },
    ],
  });
  const server = http.createServer((req, res) => {
    if (req.url === "/page.js") res.writeHead(200, { "content-type": "text/javascript" }).end(code);
    else if (req.url === "/")
      res.writeHead(200, { "content-type": "text/html" }).end(`<!doctype html><title>core OTP</title><script src="/page.js"></script>`);
    else if (req.url === "/stranger/public/v1/discovery/keys")
      res.writeHead(200, { "content-type": "application/json", "access-control-allow-origin": "*" }).end(strangerKeys);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    inputs: Object.keys(out.metafile.inputs),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const uniq = (label: string) => `${label}-${randomBytes(4).toString("hex")}`;
const claimsOf = (jwt: string): Json => JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString("utf8")) as Json;

for (const spec of engines()) {
  describe(
    `core's own verifyOtp with @turnkey/crypto aliased by @sigil/client/esbuild [${spec.name}]`,
    { skip: spec.skip ?? browserMissing() },
    () => {
      let page: Awaited<ReturnType<typeof servePage>>;
      let browser: Browser;
      let sink: SmtpSink;
      let inst: Instance;
      let server: RunningServer;
      let init: InitResult;
      let origin: string;
      let config: Json;

      before(async () => {
        page = await servePage();
        origin = `http://localhost:${page.port}`;
        sink = await SmtpSink.start();
        const port = await freePort();
        inst = await newInstance(spec.name, {
          SMTP_URL: sink.url,
          SIGIL_SMTP_FROM: "Sigil <otp@sigil.test>",
          SIGIL_PUBLIC_URL: `http://127.0.0.1:${port}`,
        });
        init = await sigilInit(inst, ["--name", "Alias App Org"]);
        server = await startServer(inst, [], { port, authProxy: true });
        assert.ok(server.proxyUrl, "sigil serve started the auth proxy");
        const call = async (op: string, type: string, parameters: Json) => {
          const text = JSON.stringify({ type, timestampMs: String(Date.now()), organizationId: init.organizationId, parameters });
          const stamp = await new ApiKeyStamper({ apiPublicKey: init.apiPublicKey, apiPrivateKey: init.apiPrivateKey }).stamp(text);
          const res = await fetch(`${server.url}/public/v1/submit/${op}`, {
            method: "POST",
            body: text,
            headers: { "content-type": "application/json", [stamp.stampHeaderName]: stamp.stampHeaderValue },
          });
          const json = (await res.json()) as Json;
          assert.equal(res.status, 200, JSON.stringify(json));
          return json;
        };
        await call("enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {});
        await call("update_auth_proxy_config", "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG", {
          allowedOrigins: [origin],
          sessionExpirationSeconds: 1800,
          otpLength: 6,
          otpAlphanumeric: false,
        });
        const text = JSON.stringify({ organizationId: init.organizationId });
        const stamp = await new ApiKeyStamper({ apiPublicKey: init.apiPublicKey, apiPrivateKey: init.apiPrivateKey }).stamp(text);
        const got = (await (
          await fetch(`${server.url}/public/v1/query/get_auth_proxy_config`, {
            method: "POST",
            body: text,
            headers: { "content-type": "application/json", [stamp.stampHeaderName]: stamp.stampHeaderValue },
          })
        ).json()) as Json;
        config = {
          apiBaseUrl: server.url,
          keysBaseUrl: server.url,
          authProxyUrl: server.proxyUrl,
          authProxyConfigId: got.authProxyConfig.configId,
          organizationId: init.organizationId,
        };
        browser = await launchChromium();
      });
      after(async () => {
        await browser?.close();
        await page?.close();
        await server?.stop();
        await sink?.stop();
        await inst?.cleanup();
      });

      /** A fresh visitor: its own context (IndexedDB key store, sessions); every request it sends is listed. */
      const visit = async (over: Json = {}) => {
        const context = await browser.newContext();
        const p: Page = await context.newPage();
        const requests: string[] = [];
        p.on("request", (r) => requests.push(r.url()));
        await p.goto(`${origin}/`);
        await p.waitForFunction(() => "app" in window);
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        await p.evaluate((c) => (window as any).app.init(c), { ...config, ...over });
        return {
          requests,
          call: <T = Json>(fn: string, arg?: unknown) =>
            // eslint-disable-next-line @typescript-eslint/no-explicit-any
            p.evaluate(([f, a]) => (window as any).app[f as string](a), [fn, arg] as const) as Promise<Attempt<T>>,
          close: () => context.close(),
        };
      };
      const ok = <T>(a: Attempt<T>, what: string): T => {
        if (!a.ok) assert.fail(`${what} failed: ${a.error}`);
        return a.value;
      };
      const started = async (tab: Awaited<ReturnType<typeof visit>>, email: string) => {
        const mark = sink.mark();
        const s = ok(await tab.call<Json>("initOtp", email), "core's initOtp");
        return { ...s, contact: email, otpCode: codeFrom(await sink.nextMail(email, mark)) };
      };

      it("the bundle holds the alias once, and the real @turnkey/crypto it wraps", () => {
        assert.equal(page.inputs.filter((p) => p.endsWith("lib/client/turnkey-crypto.mjs")).length, 1, page.inputs.join("\n"));
        assert.ok(page.inputs.some((p) => /node_modules\/@turnkey\/crypto\/dist\//.test(p)));
      });

      it("core's completeOtp signs up, then core's verifyOtp + loginWithOtp logs the same user in", async () => {
        const email = `${uniq("alias")}@example.com`;
        const first = await visit();
        try {
          const signedUp = ok(await first.call<Json>("completeOtp", await started(first, email)), "core's completeOtp (sign-up)");
          assert.equal(signedUp.action, "SIGNUP");
          const s1 = claimsOf(ok(await first.call<Json>("session"), "getSession").token as string);
          assert.notEqual(s1.organization_id, init.organizationId);
          const user = ok(await first.call<Json>("user"), "fetchUser");
          assert.equal(user.userEmail, email);

          const second = await visit();
          try {
            const loggedIn = ok(
              await second.call<Json>("verifyThenLogin", await started(second, email)),
              "core's verifyOtp + loginWithOtp",
            );
            assert.equal(loggedIn.organizationId, s1.organization_id);
            const s2 = claimsOf(ok(await second.call<Json>("session"), "getSession (login)").token as string);
            assert.deepEqual([s2.organization_id, s2.user_id], [s1.organization_id, s1.user_id]);
            assert.equal(s2.public_key, loggedIn.publicKey, "the session is bound to the key core made for verifyOtp");
            assert.ok(
              second.requests.some((u) => u === `${server.url}/public/v1/discovery/keys`),
              "the alias read the published keys",
            );
          } finally {
            await second.close();
          }
        } finally {
          await first.close();
        }
      });

      it("configured with a deployment that publishes another key, core's verifyOtp fails before posting the code", async () => {
        const email = `${uniq("stranger")}@example.com`;
        const tab = await visit({ keysBaseUrl: `http://127.0.0.1:${page.port}/stranger` });
        try {
          const s = await started(tab, email);
          const before = tab.requests.length;
          const failed = await tab.call("verifyOnly", s);
          assert.ok(!failed.ok, "core's verifyOtp was refused");
          assert.match(failed.error, /not signed by any of the 1 OTP_ENCRYPTION_TARGET key\(s\) the deployment publishes/);
          assert.ok(
            !tab.requests.slice(before).some((u) => u.includes("otp_verify")),
            `no verify request: ${tab.requests.slice(before).join(", ")}`,
          );
        } finally {
          await tab.close();
        }
      });
    },
  );
}
