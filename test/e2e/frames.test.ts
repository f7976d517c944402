// The self-hosted export and import frames (docs/frames.md) in headless Chromium: `sigil serve`
// runs them on SIGIL_FRAMES_PORT next to the real API (both engines); a parent page on
// http://localhost:<port> drives them with @turnkey/iframe-stamper itself (bundled with esbuild),
// the way @turnkey/react-wallet-kit's modals do; the activities are made with @turnkey/sdk-server.
// The same page on http://127.0.0.1:<port> is another origin, not an allowed parent.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { Turnkey } from "@turnkey/sdk-server";
import { p256 } from "@noble/curves/nist.js";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import { mnemonicToAccount, privateKeyToAccount } from "viem/accounts";
import type { Browser, Page } from "playwright-core";
import {
  engines,
  freePort,
  newInstance,
  rejection,
  sigilInit,
  startServer,
  type InitResult,
  type Instance,
  type RunningServer,
} from "../helpers/server.ts";
import { browserMissing, launchChromium, servePage } from "../helpers/browser.ts";
import { startFramesServer } from "../../src/frames/serve.ts";

const IMG = path.resolve(import.meta.dirname, "../../docs/img");
/** docs/img's screenshots are rewritten only on request (SIGIL_WRITE_SCREENSHOTS=1): each run shows another mnemonic. */
const screenshotPath = (name: string) => (process.env.SIGIL_WRITE_SCREENSHOTS === "1" ? { path: path.join(IMG, name) } : {});
const ETH0 = {
  curve: "CURVE_SECP256K1",
  pathFormat: "PATH_FORMAT_BIP32",
  path: "m/44'/60'/0'/0/0",
  addressFormat: "ADDRESS_FORMAT_ETHEREUM",
} as const;
const TEST_MNEMONIC = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about";
const TEST_MNEMONIC_ADDRESS = "0x9858EfFD232B4033E47d90003D41EC34EcaEda94";
const KEY_ONE = `0x${"00".repeat(31)}01`;
const KEY_ONE_ADDRESS = "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf";

// The parent: iframe-stamper as the kit uses it (new IframeStamper, init, applySettings, inject*,
// extract*), one stamper per frame kind; `stampers.<kind>.<method>(...)` from the test.
const PARENT_SCRIPT = `
import { IframeStamper } from "@turnkey/iframe-stamper";
const stampers = {};
window.frameParent = {
  async open(kind, url) {
    const container = document.createElement("div");
    container.id = kind + "-container";
    document.body.appendChild(container);
    const stamper = new IframeStamper({ iframeUrl: url, iframeElementId: kind + "-frame", iframeContainer: container });
    const publicKey = await stamper.init();
    await stamper.applySettings({ styles: { fontSize: "16px", backgroundColor: "#e5e7eb", color: "#828282" } });
    stampers[kind] = stamper;
    return publicKey;
  },
  call(kind, method, args) {
    return stampers[kind][method](...args);
  },
  close(kind) {
    stampers[kind].clear();
    document.getElementById(kind + "-container").remove();
    delete stampers[kind];
  },
};
`;

/** Re-signs a bundle's data with a key the deployment never published. */
function signedByStranger(bundleText: string): string {
  const bundle = JSON.parse(bundleText) as { data: string };
  const stranger = p256.utils.randomSecretKey();
  const data = Uint8Array.from(Buffer.from(bundle.data, "hex"));
  const dataSignature = Buffer.from(p256.sign(data, stranger, { format: "der", prehash: true })).toString("hex");
  return JSON.stringify({ ...bundle, dataSignature, enclaveQuorumPublic: Buffer.from(p256.getPublicKey(stranger, false)).toString("hex") });
}

for (const engine of engines()) {
  describe(`export and import frames in Chromium (${engine.name})`, { skip: engine.skip ?? browserMissing(), timeout: 240_000 }, () => {
    let inst: Instance;
    let init: InitResult;
    let server: RunningServer;
    let api: ReturnType<Turnkey["apiClient"]>;
    let parentPage: Awaited<ReturnType<typeof servePage>>;
    let framesOrigin: string;
    let allowedParent: string;
    let browser: Browser;
    let page: Page;

    const parent = {
      open: (kind: string, url: string) =>
        page.evaluate(([k, u]) => (window as any).frameParent.open(k, u) as Promise<string>, [kind, url] as const), // eslint-disable-line @typescript-eslint/no-explicit-any
      call: <T>(kind: string, method: string, ...args: unknown[]) =>
        page.evaluate(([k, m, a]) => (window as any).frameParent.call(k, m, a) as Promise<T>, [kind, method, args] as const), // eslint-disable-line @typescript-eslint/no-explicit-any
      close: (kind: string) => page.evaluate((k) => (window as any).frameParent.close(k), kind), // eslint-disable-line @typescript-eslint/no-explicit-any
      frame: (kind: string) => page.frameLocator(`#${kind}-frame`),
    };

    before(async () => {
      parentPage = await servePage(PARENT_SCRIPT, "frames parent");
      allowedParent = `http://localhost:${parentPage.port}`;
      const framesPort = await freePort();
      framesOrigin = `http://127.0.0.1:${framesPort}`;
      inst = await newInstance(engine.name);
      init = await sigilInit(inst, ["--name", "Frames Org"]);
      // No SIGIL_FRAMES_PARENT_ORIGINS: the parents are SIGIL_CORS_ORIGINS' (docs/frames.md §4).
      // The frames' origin is not among them: the discovery keys answer any origin.
      server = await startServer(inst, ["--cors-origins", allowedParent], { env: { SIGIL_FRAMES_PORT: String(framesPort) } });
      api = new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: init.apiPublicKey,
        apiPrivateKey: init.apiPrivateKey,
        defaultOrganizationId: init.organizationId,
      }).apiClient();
      browser = await launchChromium();
      page = await browser.newPage();
      await page.goto(`${allowedParent}/`);
      await page.waitForFunction(() => "frameParent" in window);
      if (process.env.SIGIL_WRITE_SCREENSHOTS === "1") mkdirSync(IMG, { recursive: true });
    });
    after(async () => {
      await browser?.close();
      await server?.stop();
      await inst?.cleanup();
      await parentPage?.close();
    });

    it("sigil serve answers the pages with their CSP: own script and style, the API only, framed by the allowed parents only", async () => {
      for (const p of ["/export.html", "/import.html", "/export.js", "/config.js"]) {
        const res = await fetch(`${framesOrigin}${p}`);
        assert.equal(res.status, 200, p);
        const csp = res.headers.get("content-security-policy") ?? "";
        assert.match(csp, /default-src 'none'/);
        assert.match(csp, /script-src 'self'/);
        assert.match(csp, /style-src 'self'/);
        assert.match(csp, new RegExp(`connect-src ${server.url.replace(/[.]/g, "\\.")}(;|$)`));
        assert.match(csp, new RegExp(`frame-ancestors [^;]*${allowedParent.replace(/[.]/g, "\\.")}`));
        assert.doesNotMatch(csp, new RegExp(`frame-ancestors [^;]*http://127\\.0\\.0\\.1:${parentPage.port}`));
        assert.equal(res.headers.get("x-content-type-options"), "nosniff");
      }
      const config = await (await fetch(`${framesOrigin}/config.js`)).text();
      assert.ok(config.includes(JSON.stringify(server.url)), config);
      assert.equal((await fetch(`${framesOrigin}/export.html`, { method: "POST" })).status, 405);
      assert.equal((await fetch(`${framesOrigin}/../package.json`)).status, 404);
    });

    it("export a wallet: the frame's key is the target, the mnemonic shows in the frame and derives the account's address; the parent gets only true", async () => {
      const made = await api.createWallet({ walletName: "frame export", accounts: [ETH0] });
      const targetPublicKey = await parent.open("export", `${framesOrigin}/export.html`);
      assert.match(targetPublicKey, /^04[0-9a-f]{128}$/);
      const { exportBundle } = await api.exportWallet({ walletId: made.walletId, targetPublicKey });
      assert.equal(await parent.call("export", "injectWalletExportBundle", exportBundle, init.organizationId), true);
      const shown = (await parent.frame("export").locator("#key-div").textContent()) ?? "";
      assert.equal(shown.split(" ").length, 12);
      assert.equal(mnemonicToAccount(shown).address, made.addresses[0]);
      // The parent's page cannot read it: the frame is another origin.
      const fromParent = await page.evaluate(() => {
        try {
          return (document.getElementById("export-frame") as HTMLIFrameElement).contentDocument?.body?.textContent ?? "no access";
        } catch {
          return "no access";
        }
      });
      assert.equal(fromParent, "no access");
      assert.ok((await page.locator("#export-frame").screenshot(screenshotPath("frames-export.png"))).length > 0);
      // The key opened one bundle: a second injection is refused.
      const again = await rejection(parent.call("export", "injectWalletExportBundle", exportBundle, init.organizationId));
      assert.match(again.message, /key has been used/);
      await parent.close("export");
    });

    it("export private keys: HEXADECIMAL gives the key of the Ethereum address, SOLANA the key pair of the Solana address", async () => {
      const made = (
        await api.createPrivateKeys({
          privateKeys: [
            { privateKeyName: "frame hex", curve: "CURVE_SECP256K1", privateKeyTags: [], addressFormats: ["ADDRESS_FORMAT_ETHEREUM"] },
            { privateKeyName: "frame sol", curve: "CURVE_ED25519", privateKeyTags: [], addressFormats: ["ADDRESS_FORMAT_SOLANA"] },
          ],
        })
      ).privateKeys.map((k) => ({ id: k.privateKeyId ?? "", address: k.addresses?.[0]?.address ?? "" }));
      const [k1, k2] = made as [(typeof made)[0], (typeof made)[0]];
      let target = await parent.open("export", `${framesOrigin}/export.html`);
      let { exportBundle } = await api.exportPrivateKey({ privateKeyId: k1.id, targetPublicKey: target });
      assert.equal(await parent.call("export", "injectKeyExportBundle", exportBundle, init.organizationId, "HEXADECIMAL"), true);
      const hex = (await parent.frame("export").locator("#key-div").textContent()) ?? "";
      assert.match(hex, /^0x[0-9a-f]{64}$/);
      assert.equal(privateKeyToAccount(hex as `0x${string}`).address, k1.address);
      await parent.close("export");

      target = await parent.open("export", `${framesOrigin}/export.html`);
      ({ exportBundle } = await api.exportPrivateKey({ privateKeyId: k2.id, targetPublicKey: target }));
      assert.equal(await parent.call("export", "injectKeyExportBundle", exportBundle, init.organizationId, "SOLANA"), true);
      const pair = base58.decode((await parent.frame("export").locator("#key-div").textContent()) ?? "");
      assert.equal(pair.length, 64);
      assert.equal(base58.encode(ed25519.getPublicKey(pair.slice(0, 32))), k2.address);
      assert.equal(base58.encode(pair.slice(32)), k2.address);
      await parent.close("export");
    });

    it("import a wallet typed into the frame: the parent gets only ciphertext, import_wallet lists the known address", async () => {
      await parent.open("import", `${framesOrigin}/import.html`);
      await parent.frame("import").locator("#plaintext").fill(TEST_MNEMONIC);
      assert.ok((await page.locator("#import-frame").screenshot(screenshotPath("frames-import.png"))).length > 0);
      const { importBundle } = await api.initImportWallet({ userId: init.userId });
      assert.equal(await parent.call("import", "injectImportBundle", importBundle, init.organizationId, init.userId), true);
      const encryptedBundle = await parent.call<string>("import", "extractWalletEncryptedBundle");
      assert.deepEqual(Object.keys(JSON.parse(encryptedBundle)).sort(), ["ciphertext", "encappedPublic"]);
      assert.ok(!encryptedBundle.includes("abandon"));
      const imported = await api.importWallet({
        userId: init.userId,
        walletName: "imported in the frame",
        encryptedBundle,
        accounts: [ETH0],
      });
      assert.equal(imported.addresses[0], TEST_MNEMONIC_ADDRESS);
      const { accounts } = await api.getWalletAccounts({ walletId: imported.walletId });
      assert.deepEqual(
        accounts.map((a) => a.address),
        [TEST_MNEMONIC_ADDRESS],
      );
      await parent.close("import");
    });

    it("import private keys typed into the frame: HEXADECIMAL (the Ethereum address of key 1) and SOLANA (a key pair's address)", async () => {
      await parent.open("import", `${framesOrigin}/import.html`);
      await parent.frame("import").locator("#plaintext").fill(KEY_ONE);
      const { importBundle } = await api.initImportPrivateKey({ userId: init.userId });
      assert.equal(await parent.call("import", "injectImportBundle", importBundle, init.organizationId, init.userId), true);
      const encryptedBundle = await parent.call<string>("import", "extractKeyEncryptedBundle", "HEXADECIMAL");
      const imported = await api.importPrivateKey({
        userId: init.userId,
        privateKeyName: "imported key in the frame",
        encryptedBundle,
        curve: "CURVE_SECP256K1",
        addressFormats: ["ADDRESS_FORMAT_ETHEREUM"],
      });
      assert.equal(imported.addresses[0]!.address, KEY_ONE_ADDRESS);
      await parent.close("import");

      // A Solana wallet's 64-byte key pair (base58), as Phantom and Solflare show it.
      const seed = ed25519.utils.randomSecretKey();
      const solanaAddress = base58.encode(ed25519.getPublicKey(seed));
      await parent.open("import", `${framesOrigin}/import.html`);
      await parent
        .frame("import")
        .locator("#plaintext")
        .fill(base58.encode(new Uint8Array([...seed, ...ed25519.getPublicKey(seed)])));
      const { importBundle: solBundle } = await api.initImportPrivateKey({ userId: init.userId });
      assert.equal(await parent.call("import", "injectImportBundle", solBundle, init.organizationId, init.userId), true);
      const solEncrypted = await parent.call<string>("import", "extractKeyEncryptedBundle", "SOLANA");
      const solImported = await api.importPrivateKey({
        userId: init.userId,
        privateKeyName: "imported Solana key in the frame",
        encryptedBundle: solEncrypted,
        curve: "CURVE_ED25519",
        addressFormats: ["ADDRESS_FORMAT_SOLANA"],
      });
      assert.equal(solImported.addresses[0]!.address, solanaAddress);
      await parent.close("import");
    });

    it("bundles signed by a key the deployment does not publish, or for another organization or user, are refused in the frame", async () => {
      const made = await api.createWallet({ walletName: "frame refusals", accounts: [ETH0] });
      const target = await parent.open("export", `${framesOrigin}/export.html`);
      const { exportBundle } = await api.exportWallet({ walletId: made.walletId, targetPublicKey: target });
      const forged = await rejection(
        parent.call("export", "injectWalletExportBundle", signedByStranger(exportBundle), init.organizationId),
      );
      assert.match(forged.message, /not one of this service's BUNDLE_SIGNER keys/);
      assert.equal(await parent.frame("export").locator("#key-div").textContent(), "");
      await parent.close("export");

      const target2 = await parent.open("export", `${framesOrigin}/export.html`);
      const { exportBundle: b2 } = await api.exportWallet({ walletId: made.walletId, targetPublicKey: target2 });
      assert.match(
        (await rejection(parent.call("export", "injectWalletExportBundle", b2, "another-organization"))).message,
        /organization/,
      );
      await parent.close("export");

      await parent.open("import", `${framesOrigin}/import.html`);
      const { importBundle } = await api.initImportWallet({ userId: init.userId });
      assert.match(
        (await rejection(parent.call("import", "injectImportBundle", signedByStranger(importBundle), init.organizationId, init.userId)))
          .message,
        /not one of this service's BUNDLE_SIGNER keys/,
      );
      assert.match(
        (await rejection(parent.call("import", "injectImportBundle", importBundle, init.organizationId, "another-user"))).message,
        /another user/,
      );
      // Nothing was accepted, so there is no target to encrypt to.
      assert.match((await rejection(parent.call("import", "extractWalletEncryptedBundle"))).message, /no import bundle injected/);
      await parent.close("import");
    });

    it("a parent on a non-allowed origin: the browser refuses to frame the page (frame-ancestors), and a channel it offers is ignored", async () => {
      const other = await browser.newPage();
      try {
        await other.goto(`http://127.0.0.1:${parentPage.port}/`);
        await other.waitForFunction(() => "frameParent" in window);
        const refused = other.waitForEvent("console", (m) => /frame-ancestors/.test(m.text()));
        // The stamper's init never resolves here (the frame never loads); the page is closed below.
        other.evaluate((u) => void (window as any).frameParent.open("export", u), `${framesOrigin}/export.html`).catch(() => undefined); // eslint-disable-line @typescript-eslint/no-explicit-any
        await refused;
      } finally {
        await other.close();
      }

      // The allowed page frames the export page without a channel; a popup on the other origin
      // reaches the frame through window.opener and offers its own port.
      await page.evaluate((u) => {
        const f = document.createElement("iframe");
        f.id = "bare-frame";
        f.src = u;
        document.body.appendChild(f);
      }, `${framesOrigin}/export.html`);
      const bare = page.frameLocator("#bare-frame");
      await bare.locator('#status[data-state="waiting"]').waitFor();
      const [popup] = await Promise.all([
        page.context().waitForEvent("page"),
        page.evaluate((u) => void window.open(u), `http://127.0.0.1:${parentPage.port}/`),
      ]);
      await popup!.waitForLoadState();
      await popup!.evaluate(() => {
        const channel = new MessageChannel();
        (window as any).got = []; // eslint-disable-line @typescript-eslint/no-explicit-any
        channel.port1.onmessage = (e) => (window as any).got.push(e.data); // eslint-disable-line @typescript-eslint/no-explicit-any
        (window.opener as Window).frames[0]!.postMessage({ type: "TURNKEY_INIT_MESSAGE_CHANNEL" }, "*", [channel.port2]);
      });
      await bare.locator('#status[data-state="refused"]').waitFor();
      assert.match((await bare.locator("#status").textContent()) ?? "", new RegExp(`127\\.0\\.0\\.1:${parentPage.port}`));
      // The allowed parent's own channel is still accepted afterwards, and the popup got nothing.
      const publicKey = await page.evaluate(
        () =>
          new Promise<string>((resolve) => {
            const channel = new MessageChannel();
            channel.port1.onmessage = (e) => resolve((e.data as { value: string }).value);
            (document.getElementById("bare-frame") as HTMLIFrameElement).contentWindow!.postMessage(
              { type: "TURNKEY_INIT_MESSAGE_CHANNEL" },
              "*",
              [channel.port2],
            );
          }),
      );
      assert.match(publicKey, /^04[0-9a-f]{128}$/);
      assert.deepEqual(await popup!.evaluate(() => (window as any).got), []); // eslint-disable-line @typescript-eslint/no-explicit-any
      await popup!.close();
      await page.evaluate(() => document.getElementById("bare-frame")!.remove());
    });
  });
}

describe("startFramesServer", () => {
  it("serves the pages with config.js from its options, checks them, and closes", async () => {
    await assert.rejects(startFramesServer({ port: 0, apiBaseUrl: "http://api.example/v1", parentOrigins: [] }), /scheme:\/\/host/);
    await assert.rejects(
      startFramesServer({ port: 0, apiBaseUrl: "http://api.example", parentOrigins: ["javascript:alert(1)"] }),
      /parent origin/,
    );
    const frames = await startFramesServer({
      port: 0,
      apiBaseUrl: "https://api.example/",
      parentOrigins: ["https://app.example", "https://app.example/"],
    });
    try {
      assert.equal(frames.exportUrl, `${frames.url}/export.html`);
      assert.equal(frames.importUrl, `${frames.url}/import.html`);
      const res = await fetch(frames.importUrl);
      assert.equal(res.status, 200);
      assert.match(
        res.headers.get("content-security-policy") ?? "",
        /connect-src https:\/\/api\.example; .*frame-ancestors https:\/\/app\.example$/,
      );
      const html = await res.text();
      assert.match(html, /<script src="config.js" defer><\/script>\s*<script src="import.js" defer><\/script>/);
      assert.equal(
        await (await fetch(`${frames.url}/config.js`)).text(),
        `// Sigil frames configuration (docs/frames.md §5).\nglobalThis.SIGIL_FRAMES_CONFIG = {"apiBaseUrl":"https://api.example","parentOrigins":["https://app.example"]};\n`,
      );
      assert.equal((await fetch(`${frames.url}/export.html`, { method: "HEAD" })).status, 200);
    } finally {
      await frames.close();
    }
    await assert.rejects(fetch(frames.exportUrl));
  });
});
