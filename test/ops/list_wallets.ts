import { it } from "node:test";
import assert from "node:assert/strict";
import { perEngine } from "../helpers/inproc.ts";
import { newWallet } from "../helpers/keys-and-wallets.ts";

perEngine("list_wallets", (h) => {
  it("lists the organization's wallets oldest first, and only its own", async () => {
    const org = await h().newOrg("Lister");
    assert.deepEqual((await h().query("list_wallets", {}, { as: org })).json, { wallets: [] });
    const a = await newWallet(h());
    const b = await newWallet(h());
    const res = await h().query("list_wallets");
    assert.equal(res.status, 200);
    const ids = res.json.wallets.map((w: { walletId: string }) => w.walletId);
    assert.ok(ids.indexOf(a.walletId) >= 0 && ids.indexOf(a.walletId) < ids.indexOf(b.walletId));
    assert.deepEqual((await h().query("list_wallets", {}, { as: org })).json.wallets, []);
    const sdk = await (await h().sdk()).getWallets();
    assert.ok(sdk.wallets.some((w) => w.walletId === b.walletId));
  });
});
