// Wallets and wallet accounts: rows, look-ups and their views as the SDK reads them
// (v1Wallet, v1WalletAccount). The sealed mnemonic never leaves this layer in a view.
import { Type } from "@sinclair/typebox";
import { Timestamp } from "../schemas/common.ts";
import type { Executor, WalletAccountsTable, WalletsTable } from "./schema.ts";
import { ownedBy, timestampObject } from "./util.ts";

export type WalletRow = WalletsTable;
export type WalletAccountRow = WalletAccountsTable;

/** Wallets one organization may hold. */
export const MAX_WALLETS_PER_ORGANIZATION = 100;

export const WalletSchema = Type.Object({
  walletId: Type.String(),
  walletName: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  exported: Type.Boolean(),
  imported: Type.Boolean(),
});

export const WalletAccountSchema = Type.Object({
  walletAccountId: Type.String(),
  organizationId: Type.String(),
  walletId: Type.String(),
  curve: Type.String(),
  pathFormat: Type.String(),
  path: Type.String(),
  addressFormat: Type.String(),
  address: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  publicKey: Type.String(),
  name: Type.Optional(Type.String()),
  walletDetails: Type.Optional(WalletSchema),
});

export function walletView(w: WalletRow) {
  return {
    walletId: w.id,
    walletName: w.name,
    createdAt: timestampObject(w.created_at),
    updatedAt: timestampObject(w.updated_at),
    exported: w.exported === 1,
    imported: w.imported === 1,
  };
}

export function walletAccountView(a: WalletAccountRow, wallet?: WalletRow) {
  return {
    walletAccountId: a.id,
    organizationId: a.organization_id,
    walletId: a.wallet_id,
    curve: a.curve,
    pathFormat: a.path_format,
    path: a.path,
    addressFormat: a.address_format,
    address: a.address,
    createdAt: timestampObject(a.created_at),
    updatedAt: timestampObject(a.updated_at),
    publicKey: a.public_key,
    ...(a.name !== null ? { name: a.name } : {}),
    ...(wallet ? { walletDetails: walletView(wallet) } : {}),
  };
}

export async function findWallet(db: Executor, organizationId: string, walletId: string): Promise<WalletRow | undefined> {
  return ownedBy(await db.selectFrom("wallets").selectAll().where("id", "=", walletId).executeTakeFirst(), organizationId);
}

/** The wallets named, in the order given (unknown ids are left out). */
export async function findWallets(db: Executor, organizationId: string, walletIds: readonly string[]): Promise<WalletRow[]> {
  if (walletIds.length === 0) return [];
  const rows = await db
    .selectFrom("wallets")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("id", "in", [...walletIds])
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return walletIds.flatMap((id) => byId.get(id) ?? []);
}

export async function listWalletRows(db: Executor, organizationId: string): Promise<WalletRow[]> {
  return db.selectFrom("wallets").selectAll().where("organization_id", "=", organizationId).orderBy("created_at").orderBy("id").execute();
}

export async function insertWalletAccounts(db: Executor, rows: readonly WalletAccountRow[]): Promise<void> {
  // Chunks keep each statement well under SQLite's bound-parameter limit (13 columns a row).
  for (let i = 0; i < rows.length; i += 50)
    await db
      .insertInto("wallet_accounts")
      .values(rows.slice(i, i + 50))
      .execute();
}

/** (path, address format) pairs the wallet already has, as "path\0format". */
export async function existingAccountKeys(db: Executor, walletId: string): Promise<Set<string>> {
  const rows = await db.selectFrom("wallet_accounts").select(["path", "address_format"]).where("wallet_id", "=", walletId).execute();
  return new Set(rows.map((r) => `${r.path}\u0000${r.address_format}`));
}

export async function countWalletAccounts(db: Executor, walletId: string): Promise<number> {
  const r = await db
    .selectFrom("wallet_accounts")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .where("wallet_id", "=", walletId)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

export async function countWallets(db: Executor, organizationId: string): Promise<number> {
  const r = await db
    .selectFrom("wallets")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .where("organization_id", "=", organizationId)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

/** Deletes the wallets (ids of the organization) and their accounts. */
export async function deleteWalletRows(db: Executor, walletIds: readonly string[]): Promise<void> {
  if (walletIds.length === 0) return;
  await db
    .deleteFrom("wallet_accounts")
    .where("wallet_id", "in", [...walletIds])
    .execute();
  await db
    .deleteFrom("wallets")
    .where("id", "in", [...walletIds])
    .execute();
}
