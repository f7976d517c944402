// The self-hosted export page of examples/export-page (docs/export-import.md §2): its export
// code (export.ts — target key pair, the BUNDLE_SIGNER key from discovery, @turnkey/crypto's
// decryptExportBundle) run against the real server on both engines, with the wallet exported
// through @turnkey/sdk-server standing in for core's exportWallet (same request, same bundle
// text); and the page itself (main.ts with @turnkey/core) bundled for the browser as its
// README says, so a broken import or an API the page calls that core no longer has fails here.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { readFileSync } from "node:fs";
import { Turnkey } from "@turnkey/sdk-server";
import { generateP256KeyPair } from "@turnkey/crypto";
import { mnemonicToAccount } from "viem/accounts";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { bundleSignerKey, exportMnemonic, type WalletExporter } from "../../examples/export-page/export.ts";

const PAGE_DIR = path.resolve(import.meta.dirname, "../../examples/export-page");
const ETH0 = {
  curve: "CURVE_SECP256K1",
  pathFormat: "PATH_FORMAT_BIP32",
  path: "m/44'/60'/0'/0/0",
  addressFormat: "ADDRESS_FORMAT_ETHEREUM",
} as const;

for (const engine of engines()) {
  describe(`examples/export-page against the server (${engine.name})`, { skip: engine.skip, timeout: 120_000 }, () => {
    let inst: Instance;
    let server: RunningServer;
    let init: InitResult;
    let api: ReturnType<Turnkey["apiClient"]>;
    /** core's exportWallet, as the page calls it: the bundle text of export_wallet. */
    let exporter: WalletExporter;

    before(async () => {
      inst = await newInstance(engine.name);
      init = await sigilInit(inst, ["--name", "Export Page Org"]);
      server = await startServer(inst);
      api = new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: init.apiPublicKey,
        apiPrivateKey: init.apiPrivateKey,
        defaultOrganizationId: init.organizationId,
      }).apiClient();
      exporter = {
        exportWallet: async (p) =>
          (
            await api.exportWallet({
              walletId: p.walletId,
              targetPublicKey: p.targetPublicKey,
              organizationId: p.organizationId ?? init.organizationId,
            })
          ).exportBundle,
      };
    });
    after(async () => {
      await server?.stop();
      await inst?.cleanup();
    });

    it("exportMnemonic gives back the wallet's mnemonic: it derives the wallet's address, and the wallet is marked exported", async () => {
      const made = await api.createWallet({ walletName: "page export", accounts: [ETH0] });
      const mnemonic = await exportMnemonic(exporter, {
        apiBaseUrl: `${server.url}/`,
        walletId: made.walletId,
        organizationId: init.organizationId,
      });
      assert.equal(mnemonic.split(" ").length, 12);
      assert.equal(mnemonicToAccount(mnemonic).address, made.addresses[0]);
      assert.equal((await api.getWallet({ walletId: made.walletId })).wallet.exported, true);
    });

    it("the page trusts only the published signer: a bundle checked against another key, or naming another organization, is refused", async () => {
      const made = await api.createWallet({ walletName: "page export 2", accounts: [ETH0] });
      const published = await bundleSignerKey(server.url);
      assert.match(published, /^04[0-9a-f]{128}$/);
      const otherKey = generateP256KeyPair().publicKeyUncompressed;
      const lying: typeof fetch = async () =>
        Response.json({ keys: [{ purpose: "BUNDLE_SIGNER", status: "active", publicKey: otherKey }] });
      await assert.rejects(
        exportMnemonic(exporter, { apiBaseUrl: server.url, walletId: made.walletId, organizationId: init.organizationId, fetch: lying }),
        /signer key/,
      );
      // The server exports from the real organization; the page expects another one in the bundle.
      const elsewhere: WalletExporter = {
        exportWallet: (p) => exporter.exportWallet({ walletId: p.walletId, targetPublicKey: p.targetPublicKey }),
      };
      await assert.rejects(
        exportMnemonic(elsewhere, { apiBaseUrl: server.url, walletId: made.walletId, organizationId: "another-organization" }),
        /organization/i,
      );
      const none: typeof fetch = async () => Response.json({ keys: [] });
      await assert.rejects(
        exportMnemonic(exporter, { apiBaseUrl: server.url, walletId: made.walletId, organizationId: init.organizationId, fetch: none }),
        /no active BUNDLE_SIGNER/,
      );
    });
  });
}

describe("examples/export-page builds for the browser", () => {
  it("main.ts (with @turnkey/core) bundles as its README says, and index.html loads that bundle", async () => {
    const { build } = await import("esbuild");
    const out = await build({
      entryPoints: [path.join(PAGE_DIR, "main.ts")],
      bundle: true,
      write: false,
      platform: "browser",
      format: "iife",
      logLevel: "silent",
    });
    assert.deepEqual(out.errors, []);
    const code = out.outputFiles[0]!.text;
    assert.ok(code.includes("/public/v1/discovery/keys"), "the export code is in the bundle");
    assert.match(readFileSync(path.join(PAGE_DIR, "index.html"), "utf8"), /<script src="main\.js"><\/script>/);
    assert.match(
      readFileSync(path.join(PAGE_DIR, "README.md"), "utf8"),
      /esbuild examples\/export-page\/main\.ts --bundle --format=iife --outfile=examples\/export-page\/main\.js/,
    );
  });
});
