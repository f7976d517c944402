// Wallet account parameters as the SDK sends them (v1WalletAccountParams): their schema, the
// checks a request can be told about field by field (before any policy is consulted), and
// the derivation of their addresses from a wallet's seed, in the order requested.
import { Type, type Static } from "@sinclair/typebox";
import { invalid, type FieldViolation } from "../errors.ts";
import { Name, maxItems } from "../schemas/common.ts";
import {
  addressOf,
  DerivationError,
  deriveKey,
  formatProblem,
  parsePath,
  unhardenedLevel,
  type AddressFormat,
  type DerivedKey,
  type WalletCurve,
} from "./derivation.ts";

/** Accounts one request may create (create_wallet, create_wallet_accounts, a sign-up's wallet). */
export const MAX_ACCOUNTS_PER_REQUEST = 100;
/** Accounts one wallet may hold. */
export const MAX_ACCOUNTS_PER_WALLET = 1000;

export const WalletCurveSchema = Type.Union([Type.Literal("CURVE_SECP256K1"), Type.Literal("CURVE_ED25519")], {
  errorMessage: "must be CURVE_SECP256K1 or CURVE_ED25519 (P-256 wallet accounts are not supported)",
});

export const WalletAccountParams = Type.Object({
  curve: WalletCurveSchema,
  pathFormat: Type.Literal("PATH_FORMAT_BIP32", { errorMessage: "must be PATH_FORMAT_BIP32" }),
  path: Type.String({
    minLength: 1,
    maxLength: 256,
    errorMessage: "must be a BIP-32 path such as m/44'/60'/0'/0/0 (at most 256 characters)",
  }),
  addressFormat: Type.String({ minLength: 1, maxLength: 64, errorMessage: "must be an ADDRESS_FORMAT_* value" }),
  name: Type.Optional(Name("name")),
});
export type AccountParams = Static<typeof WalletAccountParams>;

/** BIP-39 mnemonic lengths (words) a wallet may be created with; 12 when absent. */
export const MnemonicLength = Type.Integer({
  minimum: 12,
  maximum: 24,
  multipleOf: 3,
  errorMessage: "must be 12, 15, 18, 21 or 24 (words)",
});

export const AccountList = (min = 0) => maxItems(WalletAccountParams, "accounts", MAX_ACCOUNTS_PER_REQUEST, min);

/**
 * What is wrong with each account, named `<field>[i].<key>`: a format not defined for the
 * curve (an ed25519 key has no Ethereum address), a malformed path, a non-hardened ed25519
 * path, the same (path, format) twice.
 */
export function accountProblems(accounts: readonly AccountParams[], field: string): FieldViolation[] {
  const problems: FieldViolation[] = [];
  const seen = new Map<string, number>();
  accounts.forEach((a, i) => {
    const at = `${field}[${i}]`;
    const fmt = formatProblem(a.curve, a.addressFormat);
    if (fmt) problems.push({ field: `${at}.addressFormat`, description: fmt });
    let indices: number[] | undefined;
    try {
      indices = parsePath(a.path);
    } catch (err) {
      if (!(err instanceof DerivationError)) throw err;
      problems.push({ field: `${at}.path`, description: err.message });
    }
    if (indices && a.curve === "CURVE_ED25519") {
      const level = unhardenedLevel(indices);
      if (level !== null) {
        problems.push({
          field: `${at}.path`,
          description: `ed25519 paths must be hardened at every level (SLIP-10); level ${level} is not`,
        });
      }
    }
    const key = `${normalPath(a.path)}\u0000${a.addressFormat}`;
    const first = seen.get(key);
    if (first !== undefined) problems.push({ field: at, description: `same path and address format as ${field}[${first}]` });
    else seen.set(key, i);
  });
  return problems;
}

/** Throws 400 naming every offending field (the first in the message). */
export function checkAccounts(accounts: readonly AccountParams[], field: string): void {
  const problems = accountProblems(accounts, field);
  if (problems.length) throw invalid(`${problems[0]!.field}: ${problems[0]!.description}`, problems.slice(0, 20));
}

/** `h`/`H` and `'` mark the same hardened step: one spelling is stored and compared. */
export function normalPath(path: string): string {
  return path.replace(/[hH]/g, "'");
}

export interface DerivedAccount {
  params: AccountParams;
  path: string;
  address: string;
  /** Lower-case hex of the compressed (secp256k1) or raw (ed25519) public key. */
  publicKey: string;
}

/**
 * Each account's address, in request order; one key per (curve, path), however many formats it
 * carries. A derivation the checks let through but derivation.ts still refuses is a 400 naming
 * the account, not a crash.
 */
export function deriveAccounts(seed: Uint8Array, accounts: readonly AccountParams[], field = "accounts"): DerivedAccount[] {
  const keys = new Map<string, DerivedKey>();
  let at = 0;
  try {
    return accounts.map((params, i) => {
      at = i;
      const path = normalPath(params.path);
      const id = `${params.curve}\u0000${path}`;
      let key = keys.get(id);
      if (!key) {
        key = deriveKey(seed, params.curve as WalletCurve, path);
        keys.set(id, key);
      }
      return {
        params,
        path,
        address: addressOf(key, params.addressFormat as AddressFormat),
        publicKey: Buffer.from(key.publicKey).toString("hex"),
      };
    });
  } catch (err) {
    if (err instanceof DerivationError) {
      throw invalid(`${field}[${at}]: cannot derive this account: ${err.message}`, [
        { field: `${field}[${at}]`, description: err.message },
      ]);
    }
    throw err;
  } finally {
    for (const k of keys.values()) k.privateKey.fill(0);
  }
}
