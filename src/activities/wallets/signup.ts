// The wallet a sign-up creates (create_sub_organization V7/V8 `wallet`, v1WalletParams): made
// in the new sub-organization, in the sign-up's transaction, and returned as the SDK reads it
// (`result.wallet: {walletId, addresses}`).
import { Type, type Static } from "@sinclair/typebox";
import type { ExecuteContext, PolicyWallets } from "../define.ts";
import { Name } from "../../schemas/common.ts";
import { AccountList, MnemonicLength } from "../../wallets/accounts.ts";
import { createWallet } from "../../wallets/wallets.ts";

export const SignupWalletParams = Type.Object({
  walletName: Name("walletName"),
  accounts: AccountList(),
  mnemonicLength: Type.Optional(MnemonicLength),
});
export type SignupWallet = Static<typeof SignupWalletParams>;

/** `result.wallet` of create_sub_organization. */
export const SignupWalletResult = Type.Object({ walletId: Type.String(), addresses: Type.Array(Type.String()) });

/** Creates the sign-up's wallet in the new sub-organization. */
export function createSignupWallet(ctx: ExecuteContext, subOrganizationId: string, wallet: SignupWallet) {
  return createWallet(
    { tx: ctx.tx, organizationId: subOrganizationId, masterKey: ctx.services.masterKey, now: ctx.now },
    wallet,
    "parameters.wallet",
  );
}

/** What `wallet` reads in the parent's policies: the wallet to be created (label = its name, id ''). */
export function signupPolicyWallets(p: { wallet?: SignupWallet }): PolicyWallets | undefined {
  return p.wallet ? { creating: p.wallet.walletName } : undefined;
}
