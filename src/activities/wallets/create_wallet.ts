import { Type, type Static } from "@sinclair/typebox";
import { Name } from "../../schemas/common.ts";
import { AccountList, checkAccounts, MnemonicLength } from "../../wallets/accounts.ts";
import { createWallet } from "../../wallets/wallets.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  walletName: Name("walletName"),
  accounts: AccountList(),
  mnemonicLength: Type.Optional(MnemonicLength),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const writer = { tx: ctx.tx, organizationId: ctx.organization.id, masterKey: ctx.services.masterKey, now: ctx.now };
  return createWallet(writer, p, "parameters");
}

export const createWalletActivity = defineActivity({
  type: "ACTIVITY_TYPE_CREATE_WALLET",
  resource: "WALLET",
  action: "CREATE",
  kind: "CREATE_WALLET",
  summary: "Create an HD wallet (a new BIP-39 mnemonic, sealed at rest) and derive its first accounts.",
  params: Params,
  returns: Type.Object({ walletId: Type.String(), addresses: Type.Array(Type.String()) }),
  // The wallet to be: `wallet.label` is its name (its id does not exist yet: '').
  policyWallets: (p) => ({ creating: p.walletName }),
  check: (p) => checkAccounts(p.accounts, "parameters.accounts"),
  execute,
});
