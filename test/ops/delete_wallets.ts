import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, invalidRequest, notFound, perEngine } from "../helpers/inproc.ts";
import { ETH, newWallet } from "../helpers/keys-and-wallets.ts";
import { deleteWallets } from "../../src/activities/wallets/delete_wallets.ts";

const OP = "delete_wallets";
const TYPE = "ACTIVITY_TYPE_DELETE_WALLETS";
const MISSING = "00000000-0000-4000-8000-000000000000";

perEngine("delete_wallets", (h) => {
  it("deletes wallets and their accounts (deleteWithoutExport for wallets never exported)", async () => {
    const a = await newWallet(h(), [ETH(), ETH("m/1")]);
    const b = await newWallet(h(), [ETH()]);
    const keep = await newWallet(h(), [ETH()]);
    const res = await h().submit(OP, TYPE, { walletIds: [b.walletId, a.walletId], deleteWithoutExport: true });
    assert.deepEqual(completed(res, deleteWallets), { walletIds: [b.walletId, a.walletId] });
    const ids = (await h().query("list_wallets")).json.wallets.map((w: { walletId: string }) => w.walletId);
    assert.ok(ids.includes(keep.walletId));
    assert.ok(!ids.includes(a.walletId) && !ids.includes(b.walletId));
    const left = await h()
      .service.store.db.selectFrom("wallet_accounts")
      .select("id")
      .where("wallet_id", "in", [a.walletId, b.walletId])
      .execute();
    assert.deepEqual(left, []);
    notFound(await h().query("get_wallet", { walletId: a.walletId }), /no wallet/);
  });

  it("a wallet never exported is kept without deleteWithoutExport (400)", async () => {
    const { walletId } = await newWallet(h());
    invalidRequest(await h().submit(OP, TYPE, { walletIds: [walletId] }), /not been exported/, ["parameters.deleteWithoutExport"]);
    invalidRequest(await h().submit(OP, TYPE, { walletIds: [walletId], deleteWithoutExport: false }), /not been exported/);
    assert.equal((await h().query("get_wallet", { walletId })).status, 200);
  });

  it("an unknown wallet among them is 404 and nothing is deleted", async () => {
    const { walletId } = await newWallet(h());
    notFound(await h().submit(OP, TYPE, { walletIds: [walletId, MISSING], deleteWithoutExport: true }), /walletIds\[1\]/);
    assert.equal((await h().query("get_wallet", { walletId })).status, 200);
    invalidRequest(await h().submit(OP, TYPE, { walletIds: [], deleteWithoutExport: true }), /walletIds/, ["parameters.walletIds"]);
  });

  it("a deleted wallet's name can be used again", async () => {
    const { walletId } = await newWallet(h(), [], { walletName: "reuse" });
    completed(await h().submit(OP, TYPE, { walletIds: [walletId], deleteWithoutExport: true }), deleteWallets);
    await newWallet(h(), [], { walletName: "reuse" });
  });
});
