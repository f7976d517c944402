// signWith resolution (docs/signing.md §1): a wallet account address in any format the
// organization's wallets hold, a private key id, an address a private key was created with,
// or a public key (compressed or uncompressed secp256k1 hex, raw ed25519 hex) — always of the
// target organization only, so a sub-organization can never name another's key. The key is
// opened in memory for one signing and zeroed by the caller.
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { notFound } from "../errors.ts";
import type { MasterKey } from "../crypto/envelope.ts";
import type { Executor, PrivateKeysTable, WalletAccountsTable } from "../store/schema.ts";
import { canonicalAddress } from "../wallets/lookup.ts";
import { deriveKey, seedOfAsync, type WalletCurve } from "../wallets/derivation.ts";
import { sealAad as walletSealAad } from "../wallets/wallets.ts";
import { UUID_PATTERN } from "../schemas/common.ts";
import { openPrivateKey } from "./private-keys.ts";
import type { SigningCurve } from "./sign.ts";

export type Signer =
  | { kind: "wallet_account"; curve: SigningCurve; account: WalletAccountsTable }
  | { kind: "private_key"; curve: SigningCurve; key: PrivateKeysTable; address?: string };

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

/** The key signWith names in the organization, or undefined. */
export async function findSigner(db: Executor, organizationId: string, signWith: string): Promise<Signer | undefined> {
  if (UUID.test(signWith)) {
    const key = await db.selectFrom("private_keys").selectAll().where("id", "=", signWith.toLowerCase()).where("organization_id", "=", organizationId).executeTakeFirst();
    if (key) return { kind: "private_key", curve: key.curve as SigningCurve, key };
  }
  const address = canonicalAddress(signWith);
  const account = await db
    .selectFrom("wallet_accounts")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("address", "=", address)
    .orderBy("created_at")
    .orderBy("id")
    .limit(1)
    .executeTakeFirst();
  if (account) return { kind: "wallet_account", curve: account.curve as SigningCurve, account };
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
  const byKey = await db
    .selectFrom("wallet_accounts")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("public_key", "=", publicKey)
    .orderBy("created_at")
    .orderBy("id")
    .limit(1)
    .executeTakeFirst();
  if (byKey) return { kind: "wallet_account", curve: byKey.curve as SigningCurve, account: byKey };
  const key = await db.selectFrom("private_keys").selectAll().where("organization_id", "=", organizationId).where("public_key", "=", publicKey).limit(1).executeTakeFirst();
  if (key) return { kind: "private_key", curve: key.curve as SigningCurve, key };
  return undefined;
}

/** As findSigner; a name the organization does not hold is 404 (never a signature). */
export async function requireSigner(db: Executor, organizationId: string, signWith: string): Promise<Signer> {
  const s = await findSigner(db, organizationId, signWith);
  if (!s) throw notFound(`parameters.signWith: no wallet account, private key or public key ${JSON.stringify(signWith.slice(0, 140))} in organization ${organizationId}`);
  return s;
}

/**
 * The signer's private key in memory: a private key opened from its sealed row, or a wallet
 * account's key derived from its wallet's sealed mnemonic. The caller zeroes it.
 */
export async function openSigner(db: Executor, masterKey: MasterKey, s: Signer): Promise<Uint8Array> {
  if (s.kind === "private_key") return openPrivateKey(masterKey, s.key);
  const wallet = await db.selectFrom("wallets").select(["id", "seed_sealed"]).where("id", "=", s.account.wallet_id).executeTakeFirstOrThrow();
  const mnemonic = masterKey.open(wallet.seed_sealed, walletSealAad(wallet.id));
  try {
    const seed = await seedOfAsync(mnemonic.toString("utf8"));
    try {
      return deriveKey(seed, s.account.curve as WalletCurve, s.account.path).privateKey;
    } finally {
      seed.fill(0);
    }
  } finally {
    mnemonic.fill(0);
  }
}

/** Opens the key, runs `use`, and zeroes the key whatever happens. */
export async function withSigningKey<T>(db: Executor, masterKey: MasterKey, s: Signer, use: (key: Uint8Array) => T): Promise<T> {
  const key = await openSigner(db, masterKey, s);
  try {
    return use(key);
  } finally {
    key.fill(0);
  }
}
