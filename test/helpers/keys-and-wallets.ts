// Wallets, private keys and import targets made through their activities, for the op tests
// that need one (test/ops/*): helpers live here, not in an op file, so that importing them
// never runs another file's tests (docs/testing.md §4: the op files run in shards).
import { activeServiceKey } from "../../src/auth/service-keys.ts";
import { createWalletActivity } from "../../src/activities/wallets/create_wallet.ts";
import { completed, type Creds, type Harness, type Json } from "./inproc.ts";

export const ETH = (path = "m/44'/60'/0'/0/0", over: Json = {}): Json => ({
  curve: "CURVE_SECP256K1",
  pathFormat: "PATH_FORMAT_BIP32",
  path,
  addressFormat: "ADDRESS_FORMAT_ETHEREUM",
  ...over,
});
export const SOL = (path = "m/44'/501'/0'/0'"): Json => ({
  curve: "CURVE_ED25519",
  pathFormat: "PATH_FORMAT_BIP32",
  path,
  addressFormat: "ADDRESS_FORMAT_SOLANA",
});

let n = 0;
/** A new wallet of the root organization; returns the create_wallet result. */
export async function newWallet(
  h: Harness,
  accounts: Json[] = [ETH()],
  over: Json = {},
): Promise<{ walletId: string; addresses: string[] }> {
  const res = await h.submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName: `w-${Date.now()}-${n++}`, accounts, ...over });
  return completed(res, createWalletActivity);
}

/** The wallet row's mnemonic, opened with the service's master key (what only the server can do). */
export async function openedMnemonic(h: Harness, walletId: string): Promise<string> {
  const row = await h.service.store.db.selectFrom("wallets").selectAll().where("id", "=", walletId).executeTakeFirstOrThrow();
  return (await h.service.masterKey.open(row.seed_sealed, `wallet-seed:${walletId}`)).toString("utf8");
}

/** A new private key of the root organization (or `as`'s); returns its create_private_keys result entry. */
export async function newPrivateKey(
  h: Harness,
  curve: "CURVE_SECP256K1" | "CURVE_ED25519",
  addressFormats: string[],
  as?: Creds,
): Promise<{ privateKeyId: string; addresses: { format: string; address: string }[] }> {
  const res = await h.submit(
    "create_private_keys",
    "ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2",
    { privateKeys: [{ privateKeyName: `k-${Date.now()}-${n++}`, curve, privateKeyTags: [], addressFormats }] },
    as ? { as } : {},
  );
  return completed(res, "createPrivateKeysResultV2").privateKeys[0];
}

/** The key opened with the service's master key (what only the server can do). */
export async function openedPrivateKey(h: Harness, privateKeyId: string): Promise<Uint8Array> {
  const row = await h.service.store.db.selectFrom("private_keys").selectAll().where("id", "=", privateKeyId).executeTakeFirstOrThrow();
  return Uint8Array.from(await h.service.masterKey.open(row.key_sealed, `private-key:${privateKeyId}`));
}

/** The active BUNDLE_SIGNER public key (what discovery publishes; `sigil serve` creates it at start). */
export async function bundleSigner(h: Harness): Promise<string> {
  return (await activeServiceKey(h.service.state.serviceKeys, h.service.store.db, h.service.masterKey, "BUNDLE_SIGNER")).signer
    .publicUncompressed;
}

/** init_import_wallet's bundle for `userId` (the root user by default). */
export async function initImport(h: Harness, userId = h.root.userId): Promise<string> {
  return completed(await h.submit("init_import_wallet", "ACTIVITY_TYPE_INIT_IMPORT_WALLET", { userId }), "initImportWalletResult")
    .importBundle as string;
}

/** init_import_private_key's bundle for `userId` (the root user by default). */
export async function initKeyImport(h: Harness, userId = h.root.userId): Promise<string> {
  return completed(
    await h.submit("init_import_private_key", "ACTIVITY_TYPE_INIT_IMPORT_PRIVATE_KEY", { userId }),
    "initImportPrivateKeyResult",
  ).importBundle as string;
}
