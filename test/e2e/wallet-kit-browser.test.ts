// examples/wallet-kit-app end to end (docs/auth-proxy.md §7, docs/frames.md): the example app — @turnkey/react-wallet-kit
// with TurnkeyProvider pointed at Sigil, nothing else — built with its own build.mjs against
// @sigil/client installed from its packed tarball, served on http://localhost:<port>, and driven
// in headless Chromium through the KIT'S OWN MODALS, on both engines:
//   passkey sign-up (CDP virtual authenticator), create wallet, the sign modal (viem verifies),
//   signTransaction (viem recovers the sender), export in the kit's modal (the phrase in Sigil's
//   export frame derives the account's address), import in the kit's modal (the imported
//   wallet's address is listed), logout, passkey login, email OTP sign-up and login in the modal
//   (codes from a real SMTP server), wallet sign-up and login (an EIP-6963 provider injected into
//   the page, backed by a viem local account in Node).
// Behind the app: `sigil serve` with its auth proxy (the app's origin allowed) and the export /
// import frames on an origin of their own (src/frames/serve.ts). Every request to any other host
// is aborted (the kit loads flag images, a Lottie animation and Turnstile from elsewhere): the
// flows work without them, and what the kit tried to load is printed with the flow table.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { createRequire } from "node:module";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { english, generateMnemonic, generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from "viem/accounts";
import { getAddress, parseTransaction, recoverTransactionAddress, serializeSignature, verifyMessage, type Hex } from "viem";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { addVirtualAuthenticator, browserMissing, launchChromium } from "../helpers/browser.ts";
import { SmtpSink, codeFrom } from "../helpers/smtp-sink.ts";
import { installPackedClient, removeDir } from "../helpers/packed-client.ts";
import { startFramesServer, type RunningFramesServer } from "../../src/frames/serve.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const ROOT = path.resolve(import.meta.dirname, "../..");
const APP_DIR = path.join(ROOT, "examples/wallet-kit-app");
const IMG = path.join(ROOT, "docs/img");
/** docs/img's screenshots are rewritten only on request (SIGIL_WRITE_SCREENSHOTS=1). */
const WRITE_SCREENSHOTS = process.env.SIGIL_WRITE_SCREENSHOTS === "1";
/** One wait for any DOM state a flow expects (a sign-up without a Turnstile key waits 5 s for a token first). */
const WAIT_MS = 30_000;
const uniq = (label: string) => `${label}-${randomBytes(4).toString("hex")}`;

// The browser wallet: an EIP-1193 provider announced with EIP-6963, as an extension would; it
// signs by calling a binding into Node, where a viem local account holds the key.
const walletScript = (address: string) => `(() => {
  const address = ${JSON.stringify(address)};
  const provider = {
    async request({ method, params }) {
      switch (method) {
        case "eth_accounts":
        case "eth_requestAccounts":
          return [address];
        case "eth_chainId":
          return "0x1";
        case "personal_sign":
          if (String(params[1]).toLowerCase() !== address.toLowerCase()) throw Object.assign(new Error("unknown account"), { code: 4100 });
          return window.__testWalletSign(params[0]);
        default:
          throw Object.assign(new Error("unsupported method " + method), { code: 4200 });
      }
    },
    on() {},
    removeListener() {},
  };
  const info = { uuid: crypto.randomUUID(), name: "Test Wallet", icon: "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E", rdns: "test.sigil.wallet" };
  const announce = () => window.dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail: Object.freeze({ info, provider }) }));
  window.addEventListener("eip6963:requestProvider", announce);
  announce();
})();`;

/** Flow × engine → pass / fail, printed after the run. */
const table = new Map<string, Map<string, "pass" | "FAIL">>();
const engineNames: string[] = [];
/** What the kit tried to load from hosts other than the test's own (aborted). */
const external = new Set<string>();

/** docs/wallet-kit.md §6: the app's page may reach Sigil's API, proxy and frames, nothing else. */
function appCsp(c: Json): string {
  const origin = (u: string) => new URL(u).origin;
  return [
    "default-src 'self'",
    "script-src 'self'",
    `connect-src 'self' ${origin(c.apiBaseUrl)} ${origin(c.authProxyUrl)}`,
    `frame-src ${origin(c.exportIframeUrl)} ${origin(c.importIframeUrl)}`,
    "img-src 'self' data:",
    "style-src 'self' 'unsafe-inline'", // the kit adds a <style> element (docs/wallet-kit.md §6)
  ].join("; ");
}
/** What the page's Content-Security-Policy refused (console reports). */
const cspRefused = new Set<string>();

/** The app's static files (dist of build.mjs) with a config.json per origin. */
async function serveApp(dist: string, config: () => Json): Promise<{ origin: string; close(): Promise<void> }> {
  const types: Record<string, string> = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css" };
  const server = http.createServer((req, res) => {
    const p = (req.url ?? "/").split("?")[0]!;
    if (p === "/config.json") return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(config()));
    const name = p === "/" ? "index.html" : p.slice(1);
    if (!["index.html", "app.js", "app.css"].includes(name)) return void res.writeHead(404).end();
    // The page runs under the Content-Security-Policy docs/wallet-kit.md §6 suggests: only Sigil.
    const headers = {
      "content-type": types[path.extname(name)]!,
      ...(name === "index.html" ? { "content-security-policy": appCsp(config()) } : {}),
    };
    res.writeHead(200, headers).end(readFileSync(path.join(dist, name)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://localhost:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())),
  };
}

const skip = browserMissing();
let browser: Browser | undefined;
let dist: string;
let workDir: string;
let packed: { sizeBytes: number; dependencyCount: number };

// One describe around all: grouped with other files in a process (test/e2e/group.ts), the hooks stay this file's.
describe("examples/wallet-kit-app", { skip }, () => {
  before(async () => {
    if (skip) return;
    // The client as an app gets it: npm pack, npm install of the tarball into a folder of its own;
    // the app's imports of @sigil/client/* resolve there, the rest (React, the kit) from the repository.
    workDir = mkdtempSync(path.join(os.tmpdir(), "sigil-wallet-kit-"));
    const installed = await installPackedClient(workDir);
    packed = { sizeBytes: installed.sizeBytes, dependencyCount: installed.dependencyCount };
    const clientDir = path.join(workDir, "node_modules/@sigil/client");
    const requireHere = createRequire(path.join(workDir, "package.json"));
    const { sigilTurnkeyCrypto } = (await import(requireHere.resolve("@sigil/client/esbuild"))) as typeof import("@sigil/client/esbuild");
    const packedFirst = {
      name: "packed-sigil-client",
      setup(b: import("esbuild").PluginBuild) {
        // (b.resolve runs this callback again: from workDir it lets esbuild resolve as usual.)
        b.onResolve({ filter: /^@sigil\/client(\/|$)/ }, (args) =>
          args.resolveDir === workDir ? undefined : b.resolve(args.path, { kind: args.kind, resolveDir: workDir }),
        );
      },
    };
    const { buildApp } = (await import(path.join(APP_DIR, "build.mjs"))) as typeof import("../../examples/wallet-kit-app/build.mjs");
    const built = await buildApp({
      outDir: path.join(workDir, "dist"),
      minify: false,
      nodePaths: [path.join(ROOT, "node_modules")],
      plugins: [packedFirst, sigilTurnkeyCrypto()],
    });
    dist = built.outDir;
    const inputs = Object.keys(built.metafile.inputs).map((p) => path.resolve(ROOT, p));
    assert.ok(
      inputs.some((p) => p.startsWith(clientDir) && p.endsWith("turnkey-crypto.mjs")),
      "the bundle holds the packed client's turnkey-crypto",
    );
    assert.ok(!inputs.some((p) => p.startsWith(path.join(ROOT, "lib/client"))), "and nothing of the workspace copy");
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    if (workDir) removeDir(workDir);
    if (table.size === 0) return;
    const flows = [...table.keys()];
    const w = Math.max(...flows.map((f) => f.length));
    const lines = [`${"flow".padEnd(w)}  ${engineNames.map((e) => e.padEnd(8)).join(" ")}`];
    for (const f of flows) lines.push(`${f.padEnd(w)}  ${engineNames.map((e) => (table.get(f)!.get(e) ?? "-").padEnd(8)).join(" ")}`);
    console.log(`\nexamples/wallet-kit-app through the kit's modals:\n${lines.join("\n")}`);
    if (packed)
      console.log(
        `@sigil/client from its tarball: ${(packed.sizeBytes / 1024).toFixed(0)} KiB installed, ${packed.dependencyCount} dependencies`,
      );
    console.log(`aborted requests to other hosts: ${external.size === 0 ? "none" : [...external].sort().join(", ")}`);
    console.log(
      `refused by the page's Content-Security-Policy: ${cspRefused.size === 0 ? "nothing" : [...cspRefused].sort().join("\n  ")}`,
    );
  });

  for (const spec of engines()) {
    describe(`examples/wallet-kit-app through the kit's modals [${spec.name}]`, { skip: spec.skip ?? skip }, () => {
      let sink: SmtpSink;
      let inst: Instance;
      let server: RunningServer;
      let init: InitResult;
      let frames: RunningFramesServer;
      let app: { origin: string; close(): Promise<void> };
      let appConfig: Json;
      let context: BrowserContext;
      let page: Page;
      const wallet = privateKeyToAccount(generatePrivateKey());
      let beforeWalletSigns: (() => Promise<void>) | undefined;
      const problems: string[] = [];

      /** A flow: one test, its outcome in the table. */
      const flow = (name: string, fn: () => Promise<void>) =>
        void it(name, async () => {
          if (!table.has(name)) table.set(name, new Map());
          try {
            await fn();
            table.get(name)!.set(spec.name, "pass");
          } catch (err) {
            table.get(name)!.set(spec.name, "FAIL");
            if (WRITE_SCREENSHOTS)
              await page
                ?.screenshot({ path: path.join(os.tmpdir(), `wallet-kit-fail-${spec.name}-${name.replace(/\W+/g, "-")}.png`) })
                .catch(() => undefined);
            // The next flow starts from the app's page again, the session as it is (a modal may be open).
            await page
              .reload()
              .then(() => page.waitForSelector('main[data-client-state="ready"]', { timeout: WAIT_MS }))
              .catch(() => undefined);
            throw new Error(`${(err as Error).message}\npage errors: ${problems.slice(-8).join("\n") || "none"}`, { cause: err });
          }
        });
      const shot = async (name: string) => {
        if (!WRITE_SCREENSHOTS || spec.name !== "sqlite") return;
        // The modal's transitions end first (CSS animations and transitions are Web Animations).
        // (Endless ones — spinners — are not waited for; a cancelled one counts as ended.)
        await page.evaluate(() =>
          Promise.all(
            document
              .getAnimations()
              .filter((a) => a.effect?.getComputedTiming().endTime !== Infinity)
              .map((a) => a.finished.catch(() => undefined)),
          ),
        );
        await page.screenshot({ path: path.join(IMG, `wallet-kit-${name}.png`) });
      };

      const call = async (op: string, body: Json): Promise<Json> => {
        const text = JSON.stringify(body);
        const stamp = await new ApiKeyStamper({ apiPublicKey: init.apiPublicKey, apiPrivateKey: init.apiPrivateKey }).stamp(text);
        const res = await fetch(`${server.url}/public/v1/${op}`, {
          method: "POST",
          body: text,
          headers: { "content-type": "application/json", [stamp.stampHeaderName]: stamp.stampHeaderValue },
        });
        const json = (await res.json()) as Json;
        assert.equal(res.status, 200, JSON.stringify(json));
        return json;
      };
      const activity = async (op: string, type: string, parameters: Json) => {
        const r = await call(`submit/${op}`, { type, timestampMs: String(Date.now()), organizationId: init.organizationId, parameters });
        assert.equal(r.activity.status, "ACTIVITY_STATUS_COMPLETED", JSON.stringify(r));
      };

      before(async () => {
        engineNames.push(spec.name);
        sink = await SmtpSink.start();
        app = await serveApp(dist, () => appConfig);
        inst = await newInstance(spec.name, {
          SMTP_URL: sink.url,
          SIGIL_SMTP_FROM: "Sigil <otp@sigil.test>",
          SIGIL_WEBAUTHN_RP_ID: "localhost",
          SIGIL_WEBAUTHN_ORIGINS: app.origin,
        });
        init = await sigilInit(inst, ["--name", "Wallet Kit App Org"]);
        server = await startServer(inst, [], { authProxy: true });
        assert.ok(server.proxyUrl, "sigil serve started the auth proxy");
        await activity("enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {});
        await activity("update_auth_proxy_config", "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG", {
          allowedOrigins: [app.origin],
          otpLength: 6,
          otpAlphanumeric: false,
        });
        const { authProxyConfig } = await call("query/get_auth_proxy_config", { organizationId: init.organizationId });
        frames = await startFramesServer({ port: 0, apiBaseUrl: server.url, parentOrigins: [app.origin] });
        appConfig = {
          apiBaseUrl: server.url,
          authProxyUrl: server.proxyUrl,
          authProxyConfigId: authProxyConfig.configId,
          organizationId: init.organizationId,
          exportIframeUrl: frames.exportUrl,
          importIframeUrl: frames.importUrl,
        };

        context = await browser!.newContext();
        // The test's own servers are all on loopback; anything else is aborted and noted.
        await context.route("**/*", (route) => {
          const u = new URL(route.request().url());
          if (u.hostname === "localhost" || u.hostname === "127.0.0.1") return route.continue();
          external.add(`${u.origin}${u.pathname.length > 40 ? `${u.pathname.slice(0, 40)}…` : u.pathname}`);
          return route.abort("blockedbyclient");
        });
        await context.exposeFunction("__testWalletSign", async (message: string) => {
          // While the wallet is asked, the kit's modal says so: the moment for its screenshot.
          const before = beforeWalletSigns;
          beforeWalletSigns = undefined;
          await before?.();
          return wallet.signMessage({ message: /^0x[0-9a-fA-F]*$/.test(message) ? { raw: message as Hex } : message });
        });
        await context.addInitScript({ content: walletScript(wallet.address) });
        // Each Content-Security-Policy violation of the page (and its frames), as the browser reports it.
        await context.exposeFunction(
          "__testCspViolation",
          (directive: string, blocked: string) => void cspRefused.add(`${directive} ${blocked.slice(0, 100)}`),
        );
        await context.addInitScript({
          content: `document.addEventListener("securitypolicyviolation", (e) => window.__testCspViolation(e.violatedDirective, e.blockedURI || "(none)"));`,
        });
        page = await context.newPage();
        page.on("pageerror", (e) => problems.push(`pageerror: ${String(e)}`));
        page.on("console", (m) => {
          if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) problems.push(m.text());
        });
        await addVirtualAuthenticator(await context.newCDPSession(page));
        await page.goto(`${app.origin}/`);
        await page.waitForSelector('main[data-client-state="ready"]', { timeout: WAIT_MS });
      });
      after(async () => {
        await context?.close();
        await app?.close();
        await frames?.close();
        await server?.stop();
        await sink?.stop();
        await inst?.cleanup();
      });

      const authenticated = () => page.waitForSelector('main[data-auth-state="authenticated"]', { timeout: WAIT_MS });
      const who = async () => {
        await authenticated();
        const el = page.locator("#who");
        return { organizationId: (await el.getAttribute("data-organization-id"))!, userId: (await el.getAttribute("data-user-id"))! };
      };
      const openLogin = async () => {
        await page.locator("#login").click();
        await page.getByText("Log in or sign up").first().waitFor({ timeout: WAIT_MS });
      };
      const logout = async () => {
        await page.locator("#logout").click();
        await page.waitForSelector('main[data-auth-state="unauthenticated"]', { timeout: WAIT_MS });
      };
      const getUser = (organizationId: string, userId: string) =>
        call("query/get_user", { organizationId, userId }).then((r) => r.user as Json);
      /** The addresses of the listed wallet named `name`. */
      const addressesOf = async (name: string) =>
        page
          .locator(`li.wallet[data-wallet-name="${name}"] li.account`)
          .evaluateAll((els) => els.map((e) => e.getAttribute("data-address")!));

      let passkeyUser: { organizationId: string; userId: string };
      let account: Hex;
      let walletName: string;

      flow("passkey sign-up", async () => {
        await openLogin();
        await shot("login");
        await page.getByText("Sign up with passkey").click();
        passkeyUser = await who();
        assert.notEqual(passkeyUser.organizationId, init.organizationId, "a sub-organization of its own");
        const user = await getUser(passkeyUser.organizationId, passkeyUser.userId);
        assert.equal(user.authenticators.length, 1, "the passkey is the user's authenticator");
      });

      flow("create wallet", async () => {
        await page.locator("#create-wallet").click();
        await page.locator("li.account").first().waitFor({ timeout: WAIT_MS });
        walletName = (await page.locator("li.wallet").first().getAttribute("data-wallet-name"))!;
        account = (await addressesOf(walletName))[0] as Hex;
        assert.match(account, /^0x[0-9a-fA-F]{40}$/);
        const { wallets } = await call("query/list_wallets", { organizationId: passkeyUser.organizationId });
        assert.deepEqual(
          wallets.map((w: Json) => w.walletName),
          [walletName],
        );
      });

      flow("sign message (kit's modal)", async () => {
        const message = `${uniq("sign in to the app")} — ünïcode`;
        await page.locator("#message").fill(message);
        await page.locator("li.account .sign-message").first().click();
        await page.getByText("Sign message").first().waitFor({ timeout: WAIT_MS });
        await shot("sign-message");
        await page.getByRole("button", { name: "Sign", exact: true }).click();
        const result = page.locator('#result[data-kind="message"]');
        await result.waitFor({ timeout: WAIT_MS });
        const sig = JSON.parse(await result.innerText()) as Json;
        assert.equal(sig.message, message);
        const signature = serializeSignature({ r: `0x${sig.r}`, s: `0x${sig.s}`, yParity: Number(sig.v) });
        assert.ok(
          await verifyMessage({ address: account, message, signature }),
          "viem verifies the EIP-191 signature with the account's address",
        );
      });

      flow("sign transaction", async () => {
        await page.locator("li.account .sign-transaction").first().click();
        const result = page.locator('#result[data-kind="transaction"]');
        await result.waitFor({ timeout: WAIT_MS });
        const { unsignedTransaction, signed } = JSON.parse(await result.innerText()) as { unsignedTransaction: Hex; signed: string };
        const serializedTransaction = (signed.startsWith("0x") ? signed : `0x${signed}`) as Hex;
        const tx = parseTransaction(serializedTransaction);
        const unsigned = parseTransaction(unsignedTransaction);
        assert.deepEqual(
          [tx.chainId, tx.to, tx.value, tx.nonce, tx.gas],
          [unsigned.chainId, unsigned.to, unsigned.value, unsigned.nonce, unsigned.gas],
        );
        assert.equal(
          await recoverTransactionAddress({ serializedTransaction: serializedTransaction as never }),
          getAddress(account),
          "viem recovers the account as the sender",
        );
      });

      flow("export (kit's modal, Sigil's frame)", async () => {
        await page.locator(`li.wallet[data-wallet-name="${walletName}"] button.export`).click();
        const frame = page.frameLocator(`iframe[src^="${frames.url}"]`);
        // The kit takes the frame's key from its IframeStamper once init and applySettings are
        // done; "Export Wallet" pressed before that sends no targetPublicKey (a 400). The frame
        // styles its key box on APPLY_SETTINGS; one frame later React holds the ready stamper.
        await frame.locator('#key-div[style*="font-size"]').waitFor({ state: "attached", timeout: WAIT_MS });
        await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0))));
        await shot("export-warning");
        await page.getByRole("button", { name: "Export Wallet" }).click();
        // The frame shows the mnemonic once the kit has injected Sigil's bundle (docs/frames.md).
        const keyDiv = frame.locator("#key-div");
        await keyDiv.waitFor({ state: "visible", timeout: WAIT_MS });
        const phrase = (await keyDiv.innerText()).trim().split(/\s+/).join(" ");
        assert.ok(phrase, "a phrase in the export frame");
        await shot("export");
        assert.equal(mnemonicToAccount(phrase).address, getAddress(account), "the exported phrase derives the account's address");
        await page.getByRole("button", { name: "Done" }).click();
      });

      flow("import (kit's modal, Sigil's frame)", async () => {
        const mnemonic = generateMnemonic(english);
        const expected = mnemonicToAccount(mnemonic).address;
        await page.locator("#import-wallet").click();
        const frame = page.frameLocator(`iframe[src^="${frames.url}"]`);
        await frame.locator("textarea").fill(mnemonic);
        await shot("import");
        await page.getByRole("button", { name: "Import", exact: true }).click();
        await page.locator(`li.account[data-address="${expected}"]`).waitFor({ timeout: WAIT_MS });
        const { wallets } = await call("query/list_wallets", { organizationId: passkeyUser.organizationId });
        assert.equal(wallets.length, 2, JSON.stringify(wallets));
      });

      flow("logout", async () => {
        await logout();
        assert.equal(await page.locator("#who").count(), 0);
        const stored = await page.evaluate(() => Object.entries(localStorage));
        assert.ok(
          !stored.some(([, v]) => /eyJ[\w-]+\.[\w-]+\.[\w-]+/.test(v)),
          `no session JWT left in storage: ${JSON.stringify(stored.map(([k]) => k))}`,
        );
      });

      flow("passkey login", async () => {
        await openLogin();
        await page.getByText("Log in with passkey").click();
        assert.deepEqual(await who(), passkeyUser);
        await logout();
      });

      let otpUser: { organizationId: string; userId: string };
      const email = `${uniq("kit")}@example.com`;
      const otpInModal = async () => {
        await openLogin();
        const mark = sink.mark();
        await page.getByPlaceholder("Enter your email").fill(email);
        await page.getByPlaceholder("Enter your email").press("Enter");
        const code = codeFrom(await sink.nextMail(email, mark, WAIT_MS));
        const first = page.locator('input[inputmode="numeric"], input[autocomplete="one-time-code"]').first();
        await first.click();
        await shot("otp");
        await page.keyboard.type(code);
        return who();
      };

      flow("email OTP sign-up (kit's modal)", async () => {
        otpUser = await otpInModal();
        assert.notEqual(otpUser.organizationId, passkeyUser.organizationId);
        assert.equal((await getUser(otpUser.organizationId, otpUser.userId)).userEmail, email);
        await logout();
      });

      flow("email OTP login (kit's modal)", async () => {
        assert.deepEqual(await otpInModal(), otpUser);
        await logout();
      });

      let walletUser: { organizationId: string; userId: string };
      flow("wallet sign-up", async () => {
        await openLogin();
        beforeWalletSigns = () => shot("wallet");
        await page.getByText("Continue with wallet").click();
        walletUser = await who();
        const user = await getUser(walletUser.organizationId, walletUser.userId);
        assert.ok(
          user.apiKeys.some((k: Json) => k.credential.type === "CREDENTIAL_TYPE_API_KEY_SECP256K1"),
          "the wallet's key is the user's credential",
        );
        await logout();
      });

      flow("wallet login", async () => {
        await openLogin();
        await page.getByText("Continue with wallet").click();
        assert.deepEqual(await who(), walletUser);
        await logout();
      });
    });
  }

  it("the page's Content-Security-Policy (docs/wallet-kit.md §6) refused nothing of the test's own servers", () => {
    // An inline style or script, an eval, or one of our servers refused would be the policy breaking the app.
    const ours = [...cspRefused].filter((t) => / (inline|eval|(https?:\/\/)?(localhost|127\.0\.0\.1)\b)/.test(t));
    assert.deepEqual(ours, []);
  });

  it("nothing was asked of Turnkey's hosted services (API, auth proxy, export and import frames)", () => {
    // Asked = reached the network (aborted there) or was stopped by the page's policy first.
    const asked = [...external, ...[...cspRefused].map((t) => t.slice(t.indexOf(" ") + 1))];
    const hosted = asked.filter((u) => /^https?:\/\/([^/]+\.)?turnkey\.com\b/.test(u));
    assert.deepEqual(hosted, []);
  });
});
