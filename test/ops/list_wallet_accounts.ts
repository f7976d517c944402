import { it } from "node:test";
import assert from "node:assert/strict";
import { invalidRequest, notFound, perEngine, type Json } from "../helpers/inproc.ts";
import { ETH, newWallet } from "../helpers/keys-and-wallets.ts";

perEngine("list_wallet_accounts", (h) => {
  it("pages through a wallet's accounts in creation (request) order", async () => {
    const accounts = Array.from({ length: 25 }, (_, i) => ETH(`m/44'/60'/0'/0/${i}`));
    const { walletId, addresses } = await newWallet(h(), accounts);
    const first = (await h().query("list_wallet_accounts", { walletId })).json.accounts as Json[];
    assert.equal(first.length, 10); // the default page
    assert.deepEqual(
      first.map((a) => a.address),
      addresses.slice(0, 10),
    );
    const next = (
      await h().query("list_wallet_accounts", { walletId, paginationOptions: { limit: "10", after: first[9]!.walletAccountId } })
    ).json.accounts as Json[];
    assert.deepEqual(
      next.map((a) => a.address),
      addresses.slice(10, 20),
    );
    const back = (
      await h().query("list_wallet_accounts", { walletId, paginationOptions: { limit: "5", before: next[0]!.walletAccountId } })
    ).json.accounts as Json[];
    assert.deepEqual(
      back.map((a) => a.address),
      addresses.slice(5, 10),
    );
    const all = (await h().query("list_wallet_accounts", { walletId, paginationOptions: { limit: "100" } })).json.accounts as Json[];
    assert.deepEqual(
      all.map((a) => a.address),
      addresses,
    );
  });

  it("without walletId lists the organization's accounts; includeWalletDetails adds the wallet", async () => {
    const org = await h().newOrg("Accounts of org");
    const make = (name: string) =>
      h().submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName: name, accounts: [ETH()] }, { as: org });
    await make("one");
    await make("two");
    const res = await h().query("list_wallet_accounts", { includeWalletDetails: true }, { as: org });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.deepEqual(
      res.json.accounts.map((a: Json) => a.walletDetails.walletName),
      ["one", "two"],
    );
    const sdk = await (await h().sdk(org)).getWalletAccounts({ walletId: res.json.accounts[0].walletId });
    assert.equal(sdk.accounts.length, 1);
  });

  it("refuses a bad page size or cursor (400); an unknown wallet is 404", async () => {
    const { walletId } = await newWallet(h());
    invalidRequest(await h().query("list_wallet_accounts", { walletId, paginationOptions: { limit: "0" } }), /limit/);
    invalidRequest(await h().query("list_wallet_accounts", { walletId, paginationOptions: { after: "nope" } }), /no item/);
    notFound(await h().query("list_wallet_accounts", { walletId: "00000000-0000-4000-8000-000000000000" }), /no wallet/);
  });
});
