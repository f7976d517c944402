import { Type, type Static } from "@sinclair/typebox";
import { invalid, notFound } from "../../errors.ts";
import { Id, maxItems } from "../../schemas/common.ts";
import { lockingRead } from "../../store/locks.ts";
import { deleteWalletRows } from "../../store/wallets.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  walletIds: maxItems(Id("wallet"), "walletIds", 100, 1),
  // The SDK's flag: a wallet that was never exported is deleted only with it (its keys are
  // lost for good). Ignored for exported wallets.
  deleteWithoutExport: Type.Optional(Type.Boolean()),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization } = ctx;
  const ids = [...new Set(p.walletIds)].sort();
  // In id order, the order every deleter locks in.
  const q = tx
    .selectFrom("wallets")
    .select(["id", "exported"])
    .where("organization_id", "=", organization.id)
    .where("id", "in", ids)
    .orderBy("id");
  const rows = await lockingRead(tx, q).execute();
  const found = new Set(rows.map((r) => r.id));
  const missing = p.walletIds.findIndex((id) => !found.has(id));
  if (missing >= 0)
    throw notFound(`parameters.walletIds[${missing}]: no wallet ${p.walletIds[missing]} in organization ${organization.id}`);
  const unexported = p.walletIds.findIndex((id) => rows.find((r) => r.id === id)!.exported !== 1);
  if (unexported >= 0 && p.deleteWithoutExport !== true) {
    throw invalid(
      `parameters.walletIds[${unexported}]: wallet ${p.walletIds[unexported]} has not been exported; deleting it loses its keys for good: set deleteWithoutExport to true`,
      [{ field: "parameters.deleteWithoutExport", description: "must be true to delete wallets that were never exported" }],
    );
  }
  await deleteWalletRows(tx, ids);
  return { walletIds: p.walletIds.filter((id, i) => p.walletIds.indexOf(id) === i) };
}

export const deleteWallets = defineActivity({
  type: "ACTIVITY_TYPE_DELETE_WALLETS",
  resource: "WALLET",
  action: "DELETE",
  kind: "DELETE_WALLETS",
  summary: "Delete wallets and their accounts (deleteWithoutExport must be true for wallets never exported).",
  params: Params,
  returns: Type.Object({ walletIds: Type.Array(Type.String()) }),
  // `wallets` is every wallet named; `wallet` only when exactly one is (docs/policy-language.md §4.3).
  policyWallets: (p) => ({ existing: p.walletIds }),
  execute,
});
