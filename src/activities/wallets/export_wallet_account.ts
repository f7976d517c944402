import { Type, type Static } from "@sinclair/typebox";
import { notFound } from "../../errors.ts";
import { lockingRead } from "../../store/locks.ts";
import { deriveKey, seedOfWalletSecret, type WalletCurve } from "../../wallets/derivation.ts";
import { canonicalAddress } from "../../wallets/lookup.ts";
import { exportBundle, targetKey } from "./transfer.ts";
import { openMnemonic } from "../../wallets/wallets.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  address: Type.String({ minLength: 1, maxLength: 256, errorMessage: "must be a wallet account address" }),
  targetPublicKey: Type.String({ minLength: 1, maxLength: 200, errorMessage: "must be a P-256 public key (hex)" }),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, services } = ctx;
  const target = targetKey(p.targetPublicKey, "parameters.targetPublicKey");
  const account = await tx
    .selectFrom("wallet_accounts")
    .select(["wallet_id", "curve", "path", "address"])
    .where("organization_id", "=", organization.id)
    .where("address", "=", canonicalAddress(p.address))
    .orderBy("created_at")
    .executeTakeFirst();
  if (!account) throw notFound(`no wallet account with address ${p.address} in organization ${organization.id}`);
  const q = tx.selectFrom("wallets").select(["id", "seed_sealed"]).where("id", "=", account.wallet_id);
  const wallet = await lockingRead(tx, q, "shared").executeTakeFirst();
  if (!wallet) throw notFound(`no wallet account with address ${p.address} in organization ${organization.id}`);
  const mnemonic = await openMnemonic(services.masterKey, wallet);
  let privateKey: Uint8Array | undefined;
  try {
    const seed = await seedOfWalletSecret(mnemonic.toString("utf8"));
    try {
      privateKey = deriveKey(seed, account.curve as WalletCurve, account.path).privateKey;
    } finally {
      seed.fill(0);
    }
    // The raw 32-byte key: decryptExportBundle returns it as hex (or, keyFormat SOLANA, as
    // the base58 key pair of an ed25519 account).
    return {
      address: account.address,
      exportBundle: await exportBundle(await services.serviceKey("BUNDLE_SIGNER"), organization.id, target, privateKey),
    };
  } finally {
    mnemonic.fill(0);
    privateKey?.fill(0);
  }
}

export const exportWalletAccount = defineActivity({
  type: "ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT",
  resource: "WALLET",
  action: "EXPORT",
  kind: "EXPORT_WALLET_ACCOUNT",
  summary:
    "Export one wallet account's private key, HPKE-encrypted to the caller's target key and signed by the BUNDLE_SIGNER key (docs/export-import.md §2).",
  params: Params,
  returns: Type.Object({ address: Type.String(), exportBundle: Type.String() }),
  policyWallets: (p) => ({ accountAddress: p.address }),
  check: (p) => void targetKey(p.targetPublicKey, "parameters.targetPublicKey"),
  execute,
});
