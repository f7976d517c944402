// signWith resolution (docs/signing.md §1): a wallet account address in any format the
// organization's wallets hold, a private key id, an address a private key was created with,
// or a public key (compressed or uncompressed secp256k1 hex, raw ed25519 hex) — always of the
// target organization only, so a sub-organization can never name another's key. One read
// finds the key and, for a wallet account, its wallet (docs/signing.md §5; remembered per keys
// version by signing/signer-cache.ts). The key is opened
// in memory for one signing and zeroed by the caller.
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { notFound } from "../errors.ts";
import type { MasterKey } from "../crypto/envelope.ts";
import type { Executor, PrivateKeysTable, WalletAccountsTable, WalletsTable } from "../store/schema.ts";
import { canonicalAddress } from "../wallets/lookup.ts";
import { deriveKey, seedOfWalletSecret, type WalletCurve } from "../wallets/derivation.ts";
import { sealAad as walletSealAad } from "../wallets/wallets.ts";
import { UUID_PATTERN } from "../schemas/common.ts";
import { precompiled } from "../store/precompiled.ts";
import { openPrivateKey } from "./private-keys.ts";
import type { SignerKey, SigningCurve } from "./sign.ts";
import { cacheDerivedKey, cachedDerivedKey, derivedKeyId } from "./key-cache.ts";

/** The wallet holding a signing account: what `wallet` binds and the sealed mnemonic. */
export type SignerWallet = Pick<WalletsTable, "id" | "name" | "imported" | "exported" | "seed_sealed">;

export type Signer =
  | { kind: "wallet_account"; curve: SigningCurve; account: WalletAccountsTable; wallet: SignerWallet }
  | { kind: "private_key"; curve: SigningCurve; key: PrivateKeysTable; address?: string };

/** The signer's public key as stored (compressed secp256k1 / raw ed25519, lower-case hex). */
export const signerPublicKey = (s: Signer): string => (s.kind === "wallet_account" ? s.account.public_key : s.key.public_key);

/** What checks before authorization see of the key (ActivityDefinition.checkSigner). */
export const signerKey = (s: Signer): SignerKey => ({ curve: s.curve, publicKey: signerPublicKey(s) });

const UUID = new RegExp(UUID_PATTERN);

/** A public key as stored (compressed secp256k1 / raw ed25519, lower-case hex), or undefined. */
function storedPublicKey(v: string): string | undefined {
  const h = v.startsWith("0x") ? v.slice(2) : v;
  if (/^(0[23][0-9a-fA-F]{64}|[0-9a-fA-F]{64})$/.test(h)) return h.toLowerCase();
  if (/^04[0-9a-fA-F]{128}$/.test(h)) {
    try {
      return Buffer.from(secp256k1.Point.fromHex(h.toLowerCase()).toBytes(true)).toString("hex");
    } catch {
      return undefined;
    }
  }
  return undefined;
}

// Compiled once per dialect (store/precompiled.ts): a signature not served by a remembered
// signer looks its key up here (docs/signing.md §5), and building the query cost more than running it.
const accountBy = (column: "address" | "public_key") =>
  precompiled(["organizationId", "value"], (db, v) =>
    db
      .selectFrom("wallet_accounts")
      .innerJoin("wallets", "wallets.id", "wallet_accounts.wallet_id")
      .selectAll("wallet_accounts")
      .select([
        "wallets.name as wallet_name",
        "wallets.imported as wallet_imported",
        "wallets.exported as wallet_exported",
        "wallets.seed_sealed as wallet_seed_sealed",
      ])
      .where("wallet_accounts.organization_id", "=", v.organizationId)
      .where(`wallet_accounts.${column}`, "=", v.value)
      .orderBy("wallet_accounts.created_at")
      .orderBy("wallet_accounts.id")
      .limit(1),
  );
const ACCOUNT_BY = { address: accountBy("address"), public_key: accountBy("public_key") };
const privateKeyById = precompiled(["id", "organizationId"], (db, v) =>
  db.selectFrom("private_keys").selectAll().where("id", "=", v.id).where("organization_id", "=", v.organizationId),
);

/**
 * The organization's first-created wallet account with this address or public key, with its
 * wallet in the same statement: one read serves the policy facts (`wallet`) and the signing.
 */
async function firstAccount(
  db: Executor,
  organizationId: string,
  column: "address" | "public_key",
  value: string,
): Promise<Signer | undefined> {
  const [row] = await ACCOUNT_BY[column](db, { organizationId, value });
  if (!row) return undefined;
  const { wallet_name, wallet_imported, wallet_exported, wallet_seed_sealed, ...account } = row;
  return {
    kind: "wallet_account",
    curve: account.curve as SigningCurve,
    account,
    wallet: {
      id: account.wallet_id,
      name: wallet_name,
      imported: wallet_imported,
      exported: wallet_exported,
      seed_sealed: wallet_seed_sealed,
    },
  };
}

/** The key signWith names in the organization, or undefined. */
export async function findSigner(db: Executor, organizationId: string, signWith: string): Promise<Signer | undefined> {
  if (UUID.test(signWith)) {
    const [key] = await privateKeyById(db, { id: signWith.toLowerCase(), organizationId });
    if (key) return { kind: "private_key", curve: key.curve as SigningCurve, key };
  }
  const address = canonicalAddress(signWith);
  const account = await firstAccount(db, organizationId, "address", address);
  if (account) return account;
  const keyAddress = await db
    .selectFrom("private_key_addresses")
    .innerJoin("private_keys", "private_keys.id", "private_key_addresses.private_key_id")
    .selectAll("private_keys")
    .where("private_key_addresses.organization_id", "=", organizationId)
    .where("private_key_addresses.address", "=", address)
    .orderBy("private_keys.created_at")
    .limit(1)
    .executeTakeFirst();
  if (keyAddress) return { kind: "private_key", curve: keyAddress.curve as SigningCurve, key: keyAddress, address };
  const publicKey = storedPublicKey(signWith);
  if (publicKey === undefined) return undefined;
  const byKey = await firstAccount(db, organizationId, "public_key", publicKey);
  if (byKey) return byKey;
  const key = await db
    .selectFrom("private_keys")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("public_key", "=", publicKey)
    .limit(1)
    .executeTakeFirst();
  if (key) return { kind: "private_key", curve: key.curve as SigningCurve, key };
  return undefined;
}

/** As findSigner; a name the organization does not hold is 404 (never a signature). */
export async function requireSigner(db: Executor, organizationId: string, signWith: string): Promise<Signer> {
  const s = await findSigner(db, organizationId, signWith);
  if (!s)
    throw notFound(
      `parameters.signWith: no wallet account, private key or public key ${JSON.stringify(signWith.slice(0, 140))} in organization ${organizationId}`,
    );
  return s;
}

/**
 * The key a signing handler signs with: the one its submission found, if the settling
 * transaction found the organization's keys unchanged since (ExecuteContext.signer), else read
 * here, in the signing transaction — the read that proves the key still exists (docs/signing.md §5).
 */
export function signerInTransaction(
  ctx: { tx: Executor; organization: { id: string }; signer?: Signer },
  signWith: string,
): Promise<Signer> {
  return ctx.signer ? Promise.resolve(ctx.signer) : requireSigner(ctx.tx, ctx.organization.id, signWith);
}

/**
 * The signer's private key in memory: a private key opened from its sealed row, or a wallet
 * account's key — from the sealed derived-key cache, else derived from its wallet's sealed
 * mnemonic (and then cached sealed: docs/signing.md §5). The caller zeroes it. `s` must come
 * from a read in the signing transaction: that read is what proves the key still exists.
 */
export async function openSigner(masterKey: MasterKey, s: Signer): Promise<Uint8Array> {
  if (s.kind === "private_key") return openPrivateKey(masterKey, s.key);
  const id = derivedKeyId(s.wallet.id, s.account.curve, s.account.path);
  const cached = cachedDerivedKey(masterKey, id);
  if (cached) return cached;
  const mnemonic = await masterKey.open(s.wallet.seed_sealed, walletSealAad(s.wallet.id));
  let key: Uint8Array;
  try {
    const seed = await seedOfWalletSecret(mnemonic.toString("utf8"));
    try {
      key = deriveKey(seed, s.account.curve as WalletCurve, s.account.path).privateKey;
    } finally {
      seed.fill(0);
    }
  } finally {
    mnemonic.fill(0);
  }
  cacheDerivedKey(masterKey, id, key);
  return key;
}

/** Opens the key, runs `use`, and zeroes the key whatever happens. */
export async function withSigningKey<T>(masterKey: MasterKey, s: Signer, use: (key: Uint8Array) => T | Promise<T>): Promise<T> {
  const key = await openSigner(masterKey, s);
  try {
    // Awaited: a signer that yields to the event loop (docs/signing.md §6) still holds the key.
    return await use(key);
  } finally {
    key.fill(0);
  }
}
