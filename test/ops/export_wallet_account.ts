// export_wallet_account (docs/export-import.md §2): one account's private key, opened by the
// SDK's decryptExportBundle; the key derives the account's address.
import { it } from "node:test";
import assert from "node:assert/strict";
import { decryptExportBundle, generateP256KeyPair } from "@turnkey/crypto";
import { ed25519 } from "@noble/curves/ed25519.js";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { base58 } from "@scure/base";
import { eip55 } from "../../src/wallets/derivation.ts";
import { completed, invalidRequest, notFound, perEngine } from "../helpers/inproc.ts";
import { ETH, SOL, bundleSigner, newWallet } from "../helpers/keys-and-wallets.ts";

const OP = "export_wallet_account";
const TYPE = "ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT";

const ethAddressOf = (priv: Uint8Array) =>
  eip55(Buffer.from(keccak_256(secp256k1.getPublicKey(priv, false).slice(1)).slice(-20)).toString("hex"));

perEngine("export_wallet_account", (h) => {
  it("exports an Ethereum and a Solana account's key; each derives its address (any address casing finds it)", async () => {
    const { walletId, addresses } = await newWallet(h(), [ETH(), SOL()]);
    const signer = await bundleSigner(h());
    const orgId = h().root.organizationId;

    const target = generateP256KeyPair();
    const res = await h().submit(OP, TYPE, { address: addresses[0]!.toLowerCase(), targetPublicKey: target.publicKeyUncompressed });
    const result = completed(res, "exportWalletAccountResult");
    assert.equal(result.address, addresses[0]);
    const hex = await decryptExportBundle({
      exportBundle: result.exportBundle as string,
      embeddedKey: target.privateKey,
      organizationId: orgId,
      returnMnemonic: false,
      dangerouslyOverrideSignerPublicKey: signer,
    });
    assert.match(hex, /^[0-9a-f]{64}$/);
    assert.equal(ethAddressOf(Buffer.from(hex, "hex")), addresses[0]);
    assert.ok(!JSON.stringify(res.json).includes(hex));

    const solTarget = generateP256KeyPair();
    const sol = completed(
      await h().submit(OP, TYPE, { address: addresses[1], targetPublicKey: solTarget.publicKey }),
      "exportWalletAccountResult",
    );
    const pair = await decryptExportBundle({
      exportBundle: sol.exportBundle as string,
      embeddedKey: solTarget.privateKey,
      organizationId: orgId,
      returnMnemonic: false,
      keyFormat: "SOLANA",
      dangerouslyOverrideSignerPublicKey: signer,
    });
    const bytes = base58.decode(pair);
    assert.equal(bytes.length, 64);
    assert.equal(base58.encode(ed25519.getPublicKey(bytes.slice(0, 32))), addresses[1]);

    // Exporting one account does not export the wallet's mnemonic.
    assert.equal((await h().query("get_wallet", { walletId })).json.wallet.exported, false);
  });

  it("unknown address → 404; bad target key → 400; another organization's account → 404", async () => {
    const { addresses } = await newWallet(h(), [ETH("m/44'/60'/0'/0/7")]);
    const target = generateP256KeyPair().publicKeyUncompressed;
    notFound(
      await h().submit(OP, TYPE, { address: "0x0000000000000000000000000000000000000001", targetPublicKey: target }),
      /no wallet account/,
    );
    invalidRequest(await h().submit(OP, TYPE, { address: addresses[0], targetPublicKey: "04" }), /targetPublicKey/, [
      "parameters.targetPublicKey",
    ]);
    const other = await h().newOrg("export-account-other");
    notFound(await h().submit(OP, TYPE, { address: addresses[0], targetPublicKey: target }, { as: other }), /no wallet account/);
  });
});
