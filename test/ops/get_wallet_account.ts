import { it } from "node:test";
import assert from "node:assert/strict";
import { invalidRequest, notFound, perEngine } from "../helpers/inproc.ts";
import { ETH, SOL, newWallet } from "../helpers/keys-and-wallets.ts";

perEngine("get_wallet_account", (h) => {
  it("finds an account by address or by path", async () => {
    const { walletId, addresses } = await newWallet(h(), [ETH(), SOL()]);
    const byAddress = await h().query("get_wallet_account", { walletId, address: addresses[1] });
    assert.equal(byAddress.status, 200, JSON.stringify(byAddress.json));
    const a = byAddress.json.account;
    assert.equal(a.walletId, walletId);
    assert.equal(a.organizationId, h().root.organizationId);
    assert.equal(a.curve, "CURVE_ED25519");
    assert.equal(a.pathFormat, "PATH_FORMAT_BIP32");
    assert.equal(a.path, "m/44'/501'/0'/0'");
    assert.equal(a.addressFormat, "ADDRESS_FORMAT_SOLANA");
    assert.match(a.publicKey, /^[0-9a-f]{64}$/);
    const byPath = (await h().query("get_wallet_account", { walletId, path: "m/44'/60'/0'/0/0" })).json.account;
    assert.equal(byPath.address, addresses[0]);
    assert.match(byPath.publicKey, /^0[23][0-9a-f]{64}$/);
    // An Ethereum address in any casing finds its (EIP-55) account.
    const lower = (await h().query("get_wallet_account", { walletId, address: addresses[0]!.toLowerCase() })).json.account;
    assert.equal(lower.address, addresses[0]);
    const sdk = await (await h().sdk()).getWalletAccount({ walletId, address: addresses[0] });
    assert.equal(sdk.account.path, "m/44'/60'/0'/0/0");
  });

  it("refuses neither or both of address and path (400); unknown ones are 404", async () => {
    const { walletId, addresses } = await newWallet(h());
    invalidRequest(await h().query("get_wallet_account", { walletId }), /exactly one of address or path/);
    invalidRequest(await h().query("get_wallet_account", { walletId, address: addresses[0], path: "m/0" }), /exactly one/);
    notFound(await h().query("get_wallet_account", { walletId, address: "0x0000000000000000000000000000000000000000" }), /no account/);
    notFound(await h().query("get_wallet_account", { walletId, path: "m/9" }), /no account/);
    const other = await newWallet(h(), []);
    notFound(await h().query("get_wallet_account", { walletId: other.walletId, address: addresses[0] }), /no account/);
  });
});
