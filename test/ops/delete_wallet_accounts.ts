import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, invalidRequest, notFound, perEngine } from "../helpers/inproc.ts";
import { ETH, newWallet } from "../helpers/keys-and-wallets.ts";

const OP = "delete_wallet_accounts";
const TYPE = "ACTIVITY_TYPE_DELETE_WALLET_ACCOUNTS";

perEngine("delete_wallet_accounts", (h) => {
  it("deletes accounts (deleteWithoutExport for wallets never exported); the wallet stays and can derive them again", async () => {
    const { walletId, addresses } = await newWallet(h(), [ETH(), ETH("m/44'/60'/0'/0/1")]);
    const accounts = (await h().query("list_wallet_accounts", { walletId })).json.accounts as {
      walletAccountId: string;
      address: string;
    }[];
    const first = accounts.find((a) => a.address === addresses[0])!;
    invalidRequest(await h().submit(OP, TYPE, { walletAccountIds: [first.walletAccountId] }), /not been exported/, [
      "parameters.deleteWithoutExport",
    ]);
    notFound(
      await h().submit(OP, TYPE, {
        walletAccountIds: [first.walletAccountId, "00000000-0000-4000-8000-000000000000"],
        deleteWithoutExport: true,
      }),
      /walletAccountIds\[1\]/,
    );
    notFound(
      await h().submit(
        OP,
        TYPE,
        { walletAccountIds: [first.walletAccountId], deleteWithoutExport: true },
        { as: await h().newOrg("Other") },
      ),
      /no wallet account/,
    );
    assert.deepEqual(
      completed(
        await h().submit(OP, TYPE, { walletAccountIds: [first.walletAccountId], deleteWithoutExport: true }),
        "deleteWalletAccountsResult",
      ),
      {
        walletAccountIds: [first.walletAccountId],
      },
    );
    const left = (await h().query("list_wallet_accounts", { walletId })).json.accounts.map((a: { address: string }) => a.address);
    assert.deepEqual(left, [addresses[1]]);
    // The deleted account no longer signs; derived again, it has the same address.
    const sign = await h().submit("sign_raw_payload", "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", {
      signWith: addresses[0],
      payload: "ab",
      encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
      hashFunction: "HASH_FUNCTION_KECCAK256",
    });
    notFound(sign, /no wallet account/);
    const again = completed(
      await h().submit("create_wallet_accounts", "ACTIVITY_TYPE_CREATE_WALLET_ACCOUNTS", { walletId, accounts: [ETH()] }),
      "createWalletAccountsResult",
    );
    assert.deepEqual(again.addresses, [addresses[0]]);
  });
});
