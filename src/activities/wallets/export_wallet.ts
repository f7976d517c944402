import { Type, type Static } from "@sinclair/typebox";
import { invalid, notFound } from "../../errors.ts";
import { Id } from "../../schemas/common.ts";
import { lockingRead } from "../../store/locks.ts";
import { exportBundle, targetKey } from "./transfer.ts";
import { openMnemonic } from "../../wallets/wallets.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  walletId: Id("wallet"),
  targetPublicKey: Type.String({ minLength: 1, maxLength: 200, errorMessage: "must be a P-256 public key (hex)" }),
  // SDK type v1MnemonicLanguage; mnemonics are English (docs/export-import.md §2).
  language: Type.Optional(Type.String({ maxLength: 64 })),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, services, now } = ctx;
  const target = targetKey(p.targetPublicKey, "parameters.targetPublicKey");
  const q = tx
    .selectFrom("wallets")
    .select(["id", "seed_sealed"])
    .where("organization_id", "=", organization.id)
    .where("id", "=", p.walletId);
  const wallet = await lockingRead(tx, q).executeTakeFirst();
  if (!wallet) throw notFound(`no wallet ${p.walletId} in organization ${organization.id}`);
  const mnemonic = await openMnemonic(services.masterKey, wallet);
  let bundle: string;
  try {
    bundle = await exportBundle(await services.serviceKey("BUNDLE_SIGNER"), organization.id, target, mnemonic);
  } finally {
    mnemonic.fill(0);
  }
  await tx.updateTable("wallets").set({ exported: 1, updated_at: now }).where("id", "=", wallet.id).execute();
  return { walletId: wallet.id, exportBundle: bundle };
}

export const exportWallet = defineActivity({
  type: "ACTIVITY_TYPE_EXPORT_WALLET",
  resource: "WALLET",
  action: "EXPORT",
  kind: "EXPORT_WALLET",
  summary:
    "Export a wallet's mnemonic, HPKE-encrypted to the caller's target key and signed by the BUNDLE_SIGNER key (docs/export-import.md §2).",
  params: Params,
  returns: Type.Object({ walletId: Type.String(), exportBundle: Type.String() }),
  policyWallets: (p) => ({ existing: [p.walletId] }),
  check: (p) => {
    if (p.language !== undefined && p.language !== "MNEMONIC_LANGUAGE_ENGLISH") {
      throw invalid("parameters.language: only MNEMONIC_LANGUAGE_ENGLISH is supported (wallets hold English BIP-39 mnemonics)", [
        { field: "parameters.language", description: "must be MNEMONIC_LANGUAGE_ENGLISH" },
      ]);
    }
    targetKey(p.targetPublicKey, "parameters.targetPublicKey");
  },
  execute,
});
