import { it } from "node:test";
import assert from "node:assert/strict";
import { assertIdempotent, completed, conflict, invalidRequest, notFound, perEngine } from "../helpers/inproc.ts";
import { newWallet } from "../helpers/keys-and-wallets.ts";
import { createPolicyV3 } from "../../src/activities/policies/create_policy.ts";
import { createWalletActivity } from "../../src/activities/wallets/create_wallet.ts";
import { deleteWallets } from "../../src/activities/wallets/delete_wallets.ts";
import { updateWallet } from "../../src/activities/wallets/update_wallet.ts";

const OP = "update_wallet";
const TYPE = "ACTIVITY_TYPE_UPDATE_WALLET";
const MISSING = "00000000-0000-4000-8000-000000000000";

perEngine("update_wallet", (h) => {
  it("renames a wallet", async () => {
    const { walletId } = await newWallet(h());
    assert.deepEqual(completed(await h().submit(OP, TYPE, { walletId, walletName: "renamed" }), updateWallet), { walletId });
    assert.equal((await h().query("get_wallet", { walletId })).json.wallet.walletName, "renamed");
  });

  it("the same body twice is one activity", async () => {
    const { walletId } = await newWallet(h());
    await assertIdempotent(h(), OP, TYPE, { walletId, walletName: "idem-rename" });
  });

  it("another wallet's name is 409", async () => {
    await newWallet(h(), [], { walletName: "first-name" });
    const { walletId } = await newWallet(h());
    conflict(await h().submit(OP, TYPE, { walletId, walletName: "first-name" }), /already exists/);
  });

  it("refuses nothing to update, a blank name, a bad id (400); an unknown wallet is 404", async () => {
    const { walletId } = await newWallet(h());
    invalidRequest(await h().submit(OP, TYPE, { walletId }), /nothing to update/, ["parameters.walletName"]);
    invalidRequest(await h().submit(OP, TYPE, { walletId, walletName: "" }), /walletName/, ["parameters.walletName"]);
    invalidRequest(await h().submit(OP, TYPE, { walletId: "x", walletName: "y" }), /wallet id/, ["parameters.walletId"]);
    notFound(await h().submit(OP, TYPE, { walletId: MISSING, walletName: "y" }), /no wallet/);
  });
});

perEngine("wallet policies (update_wallet, create_wallet_accounts, delete_wallets)", (h) => {
  it("`wallet` is the wallet the activity names: a DENY on its label governs, an ALLOW on a signing object never allows", async () => {
    const { addUsersWithKeys, forbidden } = await import("../helpers/inproc.ts");
    const { ETH } = await import("../helpers/keys-and-wallets.ts");
    const org = await h().newOrg("Wallet policies");
    const [member] = await addUsersWithKeys(h(), 1, org);
    const policy = (policyName: string, effect: string, condition: string) =>
      h().submit(
        "create_policy",
        "ACTIVITY_TYPE_CREATE_POLICY_V3",
        { policyName, effect, condition, consensus: "", notes: "" },
        { as: org },
      );
    const wallet = async (walletName: string) =>
      completed(
        await h().submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName, accounts: [ETH()] }, { as: org }),
        createWalletActivity,
      ).walletId as string;
    const cold = await wallet("cold");
    const hot = await wallet("hot");

    // Without policies the member may do nothing; an ALLOW reading a signing object never allows.
    completed(await policy("signing", "EFFECT_ALLOW", "wallet_account.address != '' || private_key.id == 'x'"), createPolicyV3);
    forbidden(await h().submit(OP, TYPE, { walletId: hot, walletName: "hot-2" }, { as: member! }));
    const errored = await h().query("list_activities", { filterByType: [TYPE] }, { as: org });
    assert.equal(errored.status, 200);

    completed(await policy("wallets", "EFFECT_ALLOW", "activity.resource == 'WALLET'"), createPolicyV3);
    completed(await policy("not cold", "EFFECT_DENY", "wallet.label == 'cold'"), createPolicyV3);
    completed(await policy("exposes wallet_id", "EFFECT_DENY", "activity.params.wallet_id == 'never'"), createPolicyV3);

    completed(await h().submit(OP, TYPE, { walletId: hot, walletName: "hot-2" }, { as: member! }), updateWallet);
    forbidden(await h().submit(OP, TYPE, { walletId: cold, walletName: "warm" }, { as: member! }), /explicitly denies|denied|polic/i);
    assert.equal((await h().query("get_wallet", { walletId: cold }, { as: org })).json.wallet.walletName, "cold");
    forbidden(
      await h().submit(
        "create_wallet_accounts",
        "ACTIVITY_TYPE_CREATE_WALLET_ACCOUNTS",
        { walletId: cold, accounts: [ETH("m/1")] },
        { as: member! },
      ),
    );
    completed(
      await h().submit(
        "create_wallet_accounts",
        "ACTIVITY_TYPE_CREATE_WALLET_ACCOUNTS",
        { walletId: hot, accounts: [ETH("m/1")] },
        { as: member! },
      ),
      "createWalletAccountsResult",
    );
    // Several wallets: the policy is judged for each; the cold one among them denies.
    forbidden(
      await h().submit(
        "delete_wallets",
        "ACTIVITY_TYPE_DELETE_WALLETS",
        { walletIds: [hot, cold], deleteWithoutExport: true },
        { as: member! },
      ),
    );
    // The wallet being created is bound by its name.
    forbidden(await h().submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName: "cold", accounts: [] }, { as: member! }));
    completed(
      await h().submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName: "tepid", accounts: [] }, { as: member! }),
      createWalletActivity,
    );
    completed(
      await h().submit("delete_wallets", "ACTIVITY_TYPE_DELETE_WALLETS", { walletIds: [hot], deleteWithoutExport: true }, { as: member! }),
      deleteWallets,
    );
  });
});
