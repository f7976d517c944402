// The export page's one job, kept free of the DOM so it runs (and is tested) anywhere:
// make a throw-away P-256 key pair, have Sigil export the wallet encrypted to it, and open
// the bundle with @turnkey/crypto, trusting only the BUNDLE_SIGNER key Sigil publishes
// (docs/export-import.md §1, §2.2). The private half of the key pair never leaves this
// function; the mnemonic is returned to the caller to show, and nothing is stored.
import { decryptExportBundle, generateP256KeyPair } from "@turnkey/crypto";

/**
 * What the page needs of the client: @turnkey/core's TurnkeyClient has it (its exportWallet
 * returns the bundle text). Any function with this shape works, e.g. a server SDK adapter.
 */
export interface WalletExporter {
  exportWallet(params: { walletId: string; targetPublicKey: string; organizationId?: string }): Promise<string>;
}

export interface ExportOptions {
  /** Sigil's API base URL: the page reads the signer key from its discovery document. */
  apiBaseUrl: string;
  walletId: string;
  /** The organization holding the wallet (core: the session's organizationId). The bundle must name it. */
  organizationId: string;
  fetch?: typeof fetch;
}

/** The active BUNDLE_SIGNER key of the service (uncompressed P-256 hex). */
export async function bundleSignerKey(apiBaseUrl: string, fetchFn: typeof fetch = fetch): Promise<string> {
  const res = await fetchFn(`${apiBaseUrl.replace(/\/+$/, "")}/public/v1/discovery/keys`);
  if (!res.ok) throw new Error(`discovery answered ${res.status}`);
  const doc = (await res.json()) as { keys?: { purpose: string; status: string; publicKey: string }[] };
  const key = doc.keys?.find((k) => k.purpose === "BUNDLE_SIGNER" && k.status === "active");
  if (!key) throw new Error("the service publishes no active BUNDLE_SIGNER key");
  return key.publicKey;
}

/** The wallet's mnemonic, exported end-to-end encrypted to a key made here. */
export async function exportMnemonic(client: WalletExporter, opts: ExportOptions): Promise<string> {
  // Fetched first: a service without a signer key is refused before anything is exported.
  const signer = await bundleSignerKey(opts.apiBaseUrl, opts.fetch);
  const target = generateP256KeyPair();
  const exportBundle = await client.exportWallet({
    walletId: opts.walletId,
    targetPublicKey: target.publicKeyUncompressed,
    organizationId: opts.organizationId,
  });
  return decryptExportBundle({
    exportBundle,
    embeddedKey: target.privateKey,
    organizationId: opts.organizationId,
    returnMnemonic: true,
    // @turnkey/crypto pins upstream's signer unless told otherwise: Sigil's published key instead.
    dangerouslyOverrideSignerPublicKey: signer,
  });
}
