// Creating wallets and adding accounts: what create_wallet, create_wallet_accounts and a
// sign-up's wallet (create_sub_organization) share. Inside the caller's transaction.
//
// Secrets: the mnemonic is generated here, sealed with the master key bound to the wallet id
// ("wallet-seed:<id>"), and the seed derived from it lives only in memory for the derivation.
// Neither is logged, returned or stored plain; private keys are never stored at all.
import { alreadyExists, exhausted, invalid, notFound } from "../errors.ts";
import type { MasterKey } from "../crypto/envelope.ts";
import { lockingRead, lockOrganization } from "../store/locks.ts";
import type { Tx } from "../store/schema.ts";
import { isUniqueViolation, newOrderedId } from "../store/util.ts";
import {
  countWalletAccounts,
  countWallets,
  existingAccountKeys,
  insertWalletAccounts,
  MAX_WALLETS_PER_ORGANIZATION,
  type WalletAccountRow,
  type WalletRow,
} from "../store/wallets.ts";
import { checkAccounts, deriveAccounts, MAX_ACCOUNTS_PER_WALLET, normalPath, type AccountParams } from "./accounts.ts";
import { generateMnemonic, MNEMONIC_LENGTHS, PASSPHRASE_SEPARATOR, seedOfAsync, seedOfWalletSecret } from "./derivation.ts";
import { AAD } from "../crypto/aad.ts";

export interface WalletWriter {
  tx: Tx;
  organizationId: string;
  masterKey: MasterKey;
  now: number;
}

export interface NewWallet {
  walletName: string;
  accounts: AccountParams[];
  mnemonicLength?: number;
}

/** The aad a wallet's mnemonic is sealed under. */
export const sealAad = AAD.walletSeed;

/** The wallet's mnemonic (UTF-8 bytes): the caller zeroes it once used. */
export function openMnemonic(masterKey: MasterKey, wallet: Pick<WalletRow, "id" | "seed_sealed">): Promise<Buffer> {
  return masterKey.open(wallet.seed_sealed, sealAad(wallet.id));
}

/**
 * `at` names the request's field in errors: "parameters" or "parameters.wallet". With
 * `imported`, the wallet holds that (already checked) mnemonic, and passphrase if any, instead of
 * a new one and is marked imported (import_wallet, docs/export-import.md §3.2).
 */
export async function createWallet(
  w: WalletWriter,
  p: NewWallet,
  at: string,
  imported?: { mnemonic: string; passphrase?: string },
): Promise<{ walletId: string; addresses: string[] }> {
  const words = imported ? imported.mnemonic.split(" ").length : (p.mnemonicLength ?? 12);
  if (!(MNEMONIC_LENGTHS as readonly number[]).includes(words)) {
    throw invalid(`${at}.mnemonicLength: must be one of ${MNEMONIC_LENGTHS.join(", ")} words`, [
      { field: `${at}.mnemonicLength`, description: `must be one of ${MNEMONIC_LENGTHS.join(", ")}` },
    ]);
  }
  checkAccounts(p.accounts, `${at}.accounts`);
  // The organization's lock makes the count and the name check hold until commit.
  await lockOrganization(w.tx, w.organizationId);
  if ((await countWallets(w.tx, w.organizationId)) >= MAX_WALLETS_PER_ORGANIZATION) {
    throw exhausted(`organization ${w.organizationId} already has the maximum of ${MAX_WALLETS_PER_ORGANIZATION} wallets`);
  }
  const taken = await w.tx
    .selectFrom("wallets")
    .select("id")
    .where("organization_id", "=", w.organizationId)
    .where("name", "=", p.walletName)
    .executeTakeFirst();
  if (taken) throw alreadyExists(`${at}.walletName: a wallet named ${JSON.stringify(p.walletName)} already exists in the organization`);

  const walletId = newOrderedId(w.now);
  const mnemonic = imported ? imported.mnemonic : generateMnemonic(words);
  const passphrase = imported?.passphrase ?? "";
  const seed = await seedOfAsync(mnemonic, passphrase);
  let derived;
  try {
    derived = deriveAccounts(seed, p.accounts, `${at}.accounts`);
  } finally {
    seed.fill(0);
  }
  const row: WalletRow = {
    id: walletId,
    organization_id: w.organizationId,
    name: p.walletName,
    // What export hands back: the mnemonic, with its passphrase in the import frame's encoding.
    seed_sealed: await w.masterKey.seal(
      Buffer.from(passphrase ? mnemonic + PASSPHRASE_SEPARATOR + passphrase : mnemonic, "utf8"),
      sealAad(walletId),
    ),
    mnemonic_length: words,
    imported: imported ? 1 : 0,
    exported: 0,
    created_at: w.now,
    updated_at: w.now,
  };
  try {
    await w.tx.insertInto("wallets").values(row).execute();
  } catch (err) {
    if (isUniqueViolation(err, "wallets"))
      throw alreadyExists(`${at}.walletName: a wallet named ${JSON.stringify(p.walletName)} already exists in the organization`);
    throw err;
  }
  await insertWalletAccounts(
    w.tx,
    derived.map((d) => accountRow(row, d, w.now)),
  );
  return { walletId, addresses: derived.map((d) => d.address) };
}

function accountRow(wallet: WalletRow, d: ReturnType<typeof deriveAccounts>[number], now: number): WalletAccountRow {
  return {
    id: newOrderedId(now),
    wallet_id: wallet.id,
    organization_id: wallet.organization_id,
    curve: d.params.curve,
    path_format: d.params.pathFormat,
    path: d.path,
    address_format: d.params.addressFormat,
    address: d.address,
    public_key: d.publicKey,
    name: d.params.name ?? null,
    created_at: now,
    updated_at: now,
  };
}

/**
 * Derives accounts of an existing wallet; with `persist` (the default) records them. The
 * wallet's row lock makes the duplicate check and the per-wallet cap hold until commit.
 */
export async function addWalletAccounts(
  w: WalletWriter,
  walletId: string,
  accounts: AccountParams[],
  persist: boolean,
  at: string,
): Promise<{ addresses: string[] }> {
  checkAccounts(accounts, `${at}.accounts`);
  const q = w.tx.selectFrom("wallets").selectAll().where("organization_id", "=", w.organizationId).where("id", "=", walletId);
  const wallet = await lockingRead(w.tx, q, persist ? "exclusive" : "shared").executeTakeFirst();
  if (!wallet) throw notFound(`no wallet ${walletId} in organization ${w.organizationId}`);
  if (persist) {
    const existing = await existingAccountKeys(w.tx, walletId);
    const clash = accounts.findIndex((a) => existing.has(`${normalPath(a.path)}\u0000${a.addressFormat}`));
    if (clash >= 0) {
      const a = accounts[clash]!;
      throw alreadyExists(`${at}.accounts[${clash}]: the wallet already has an account at ${a.path} with ${a.addressFormat}`);
    }
    const count = await countWalletAccounts(w.tx, walletId);
    if (count + accounts.length > MAX_ACCOUNTS_PER_WALLET) {
      throw exhausted(`wallet ${walletId} has ${count} accounts; at most ${MAX_ACCOUNTS_PER_WALLET} per wallet`);
    }
  }
  const mnemonic = await openMnemonic(w.masterKey, wallet);
  let derived;
  try {
    const seed = await seedOfWalletSecret(mnemonic.toString("utf8"));
    try {
      derived = deriveAccounts(seed, accounts, `${at}.accounts`);
    } finally {
      seed.fill(0);
    }
  } finally {
    mnemonic.fill(0);
  }
  if (persist) {
    await insertWalletAccounts(
      w.tx,
      derived.map((d) => accountRow(wallet, d, w.now)),
    );
    await w.tx.updateTable("wallets").set({ updated_at: w.now }).where("id", "=", wallet.id).execute();
  }
  return { addresses: derived.map((d) => d.address) };
}
