import { Type, type Static } from "@sinclair/typebox";
import { Id } from "../../schemas/common.ts";
import { AccountList, checkAccounts } from "../../wallets/accounts.ts";
import { addWalletAccounts } from "../../wallets/wallets.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  walletId: Id("wallet"),
  accounts: AccountList(1),
  // false: derive and return the addresses without recording accounts (SDK: "defaults to true").
  persist: Type.Optional(Type.Boolean()),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const writer = { tx: ctx.tx, organizationId: ctx.organization.id, masterKey: ctx.services.masterKey, now: ctx.now };
  return addWalletAccounts(writer, p.walletId, p.accounts, p.persist ?? true, "parameters");
}

export const createWalletAccounts = defineActivity({
  type: "ACTIVITY_TYPE_CREATE_WALLET_ACCOUNTS",
  resource: "WALLET",
  action: "CREATE",
  kind: "CREATE_WALLET_ACCOUNTS",
  summary: "Derive more accounts of a wallet (addresses in the order requested; persist: false only derives).",
  params: Params,
  returns: Type.Object({ addresses: Type.Array(Type.String()) }),
  policyWallets: (p) => ({ existing: [p.walletId] }),
  check: (p) => checkAccounts(p.accounts, "parameters.accounts"),
  execute,
});
