import { Type, type Static } from "@sinclair/typebox";
import { alreadyExists, invalid, notFound } from "../../errors.ts";
import { Id, Name } from "../../schemas/common.ts";
import { lockingRead } from "../../store/locks.ts";
import { isUniqueViolation } from "../../store/util.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  walletId: Id("wallet"),
  walletName: Type.Optional(Name("walletName")),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, now } = ctx;
  if (p.walletName === undefined)
    throw invalid("nothing to update: give walletName", [{ field: "parameters.walletName", description: "must be set" }]);
  const q = tx.selectFrom("wallets").select("id").where("organization_id", "=", organization.id).where("id", "=", p.walletId);
  const wallet = await lockingRead(tx, q).executeTakeFirst();
  if (!wallet) throw notFound(`no wallet ${p.walletId} in organization ${organization.id}`);
  try {
    await tx.updateTable("wallets").set({ name: p.walletName, updated_at: now }).where("id", "=", wallet.id).execute();
  } catch (err) {
    if (isUniqueViolation(err, "wallets")) {
      throw alreadyExists(`parameters.walletName: a wallet named ${JSON.stringify(p.walletName)} already exists in the organization`);
    }
    throw err;
  }
  return { walletId: wallet.id };
}

export const updateWallet = defineActivity({
  type: "ACTIVITY_TYPE_UPDATE_WALLET",
  resource: "WALLET",
  action: "UPDATE",
  kind: "UPDATE_WALLET",
  summary: "Rename a wallet.",
  params: Params,
  returns: Type.Object({ walletId: Type.String() }),
  // Policies see the request's wallet id as wallet_id.
  policyParams: (p) => ({ wallet_id: p.walletId }),
  policyWallets: (p) => ({ existing: [p.walletId] }),
  execute,
});
