import { it } from "node:test";
import assert from "node:assert/strict";
import { invalidRequest, notFound, perEngine } from "../helpers/inproc.ts";
import { newWallet } from "../helpers/keys-and-wallets.ts";

perEngine("get_wallet", (h) => {
  it("returns the wallet as the SDK reads it, never its seed", async () => {
    const { walletId } = await newWallet(h(), undefined, { walletName: "shown" });
    const res = await h().query("get_wallet", { walletId });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const { wallet } = res.json;
    assert.deepEqual(Object.keys(wallet).sort(), ["createdAt", "exported", "imported", "updatedAt", "walletId", "walletName"]);
    assert.equal(wallet.walletId, walletId);
    assert.equal(wallet.walletName, "shown");
    assert.equal(wallet.exported, false);
    assert.equal(wallet.imported, false);
    assert.match(wallet.createdAt.seconds, /^\d+$/);
    // Through the official SDK too.
    const sdkWallet = (await (await h().sdk()).getWallet({ walletId })).wallet;
    assert.equal(sdkWallet.walletName, "shown");
  });

  it("an unknown wallet, or another organization's, is 404; a bad id 400", async () => {
    notFound(await h().query("get_wallet", { walletId: "00000000-0000-4000-8000-000000000000" }), /no wallet/);
    const { walletId } = await newWallet(h());
    const other = await h().newOrg("Nosy");
    notFound(await h().query("get_wallet", { walletId }, { as: other }), /no wallet/);
    invalidRequest(await h().query("get_wallet", { walletId: "nope" }), /wallet id/);
  });
});
