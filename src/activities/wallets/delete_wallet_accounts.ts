import { Type, type Static } from "@sinclair/typebox";
import { invalid, notFound } from "../../errors.ts";
import { Id, maxItems } from "../../schemas/common.ts";
import { lockingRead } from "../../store/locks.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  walletAccountIds: maxItems(Id("wallet account"), "walletAccountIds", 100, 1),
  // As delete_wallets: accounts of a wallet never exported are deleted only with it.
  deleteWithoutExport: Type.Optional(Type.Boolean()),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, now } = ctx;
  const ids = [...new Set(p.walletAccountIds)].sort();
  const q = tx
    .selectFrom("wallet_accounts")
    .select(["id", "wallet_id"])
    .where("organization_id", "=", organization.id)
    .where("id", "in", ids)
    .orderBy("id");
  const rows = await lockingRead(tx, q).execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  const missing = p.walletAccountIds.findIndex((id) => !byId.has(id));
  if (missing >= 0)
    throw notFound(
      `parameters.walletAccountIds[${missing}]: no wallet account ${p.walletAccountIds[missing]} in organization ${organization.id}`,
    );
  const walletIds = [...new Set(rows.map((r) => r.wallet_id))].sort();
  const wallets = await tx.selectFrom("wallets").select(["id", "exported"]).where("id", "in", walletIds).execute();
  const unexported = new Set(wallets.filter((w) => w.exported !== 1).map((w) => w.id));
  const at = p.walletAccountIds.findIndex((id) => unexported.has(byId.get(id)!.wallet_id));
  if (at >= 0 && p.deleteWithoutExport !== true) {
    throw invalid(
      `parameters.walletAccountIds[${at}]: the wallet of account ${p.walletAccountIds[at]} has not been exported; deleting the account loses its key unless the wallet is kept: set deleteWithoutExport to true`,
      [{ field: "parameters.deleteWithoutExport", description: "must be true to delete accounts of wallets that were never exported" }],
    );
  }
  await tx.deleteFrom("wallet_accounts").where("id", "in", ids).execute();
  await tx.updateTable("wallets").set({ updated_at: now }).where("id", "in", walletIds).execute();
  return { walletAccountIds: p.walletAccountIds.filter((id, i) => p.walletAccountIds.indexOf(id) === i) };
}

export const deleteWalletAccounts = defineActivity({
  type: "ACTIVITY_TYPE_DELETE_WALLET_ACCOUNTS",
  resource: "WALLET",
  action: "DELETE",
  kind: "DELETE_WALLET_ACCOUNTS",
  summary: "Delete wallet accounts (the wallet and its mnemonic stay; deleteWithoutExport for wallets never exported).",
  params: Params,
  returns: Type.Object({ walletAccountIds: Type.Array(Type.String()) }),
  execute,
});
