import { Type, type Static } from "@sinclair/typebox";
import { invalid } from "../../errors.ts";
import { Id, Name } from "../../schemas/common.ts";
import { AccountList, checkAccounts } from "../../wallets/accounts.ts";
import { isValidMnemonic, splitWalletSecret } from "../../wallets/derivation.ts";
import { takeImportTarget } from "./transfer.ts";
import { createWallet } from "../../wallets/wallets.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  userId: Id("user"),
  walletName: Name("walletName"),
  encryptedBundle: Type.String({ minLength: 1, maxLength: 8192, errorMessage: "must be the JSON text encryptWalletToBundle returns" }),
  accounts: AccountList(),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, services, now } = ctx;
  const plain = await takeImportTarget(
    tx,
    services.masterKey,
    organization.id,
    p.userId,
    "WALLET",
    p.encryptedBundle,
    "parameters.encryptedBundle",
    now,
  );
  const text = Buffer.from(plain).toString("utf8");
  plain.fill(0);
  // `<mnemonic>\n--PASS--\n<passphrase>` carries a BIP-39 passphrase, as the hosted import
  // frame encodes it; the passphrase is kept exactly (spaces count), the mnemonic's words may
  // be separated by any whitespace and are stored single-spaced (docs/export-import.md §3.2).
  const parts = splitWalletSecret(text);
  const mnemonic = parts.mnemonic.trim().split(/\s+/).join(" ");
  if (!isValidMnemonic(mnemonic)) {
    throw invalid(
      "parameters.encryptedBundle: the decrypted content is not a valid English BIP-39 mnemonic (12–24 words with a valid checksum)",
      [{ field: "parameters.encryptedBundle", description: "must hold a BIP-39 mnemonic" }],
    );
  }
  const writer = { tx, organizationId: organization.id, masterKey: services.masterKey, now };
  return createWallet(writer, { walletName: p.walletName, accounts: p.accounts }, "parameters", { mnemonic, passphrase: parts.passphrase });
}

export const importWallet = defineActivity({
  type: "ACTIVITY_TYPE_IMPORT_WALLET",
  resource: "WALLET",
  action: "IMPORT",
  kind: "IMPORT_WALLET",
  summary:
    "Import a wallet from a mnemonic encrypted to the user's init_import_wallet target (docs/export-import.md §3); each target is used once.",
  params: Params,
  returns: Type.Object({ walletId: Type.String(), addresses: Type.Array(Type.String()) }),
  // The wallet to be, by its name (as create_wallet).
  policyWallets: (p) => ({ creating: p.walletName }),
  check: (p) => checkAccounts(p.accounts, "parameters.accounts"),
  execute,
});
