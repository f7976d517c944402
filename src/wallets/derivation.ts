// HD wallet key derivation, pure (no I/O): BIP-39 mnemonics and seeds, BIP-32 over secp256k1
// and SLIP-10 over ed25519 (hardened steps only, as SLIP-10 defines for ed25519), and the
// address formats accounts are created with. The audited @scure/@noble libraries do the
// cryptography; this module decides which combinations are valid and names what is wrong.
import { pbkdf2 } from "node:crypto";
import { generateMnemonic as bip39Generate, mnemonicToSeedSync, validateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { HDKey } from "@scure/bip32";
import { ed25519 } from "@noble/curves/ed25519.js";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { sha512 } from "@noble/hashes/sha2.js";
import { ripemd160 } from "@noble/hashes/legacy.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { base58, bech32 } from "@scure/base";

export type WalletCurve = "CURVE_SECP256K1" | "CURVE_ED25519";
export type AddressFormat =
  | "ADDRESS_FORMAT_COMPRESSED"
  | "ADDRESS_FORMAT_UNCOMPRESSED"
  | "ADDRESS_FORMAT_ETHEREUM"
  | "ADDRESS_FORMAT_SOLANA"
  | "ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH"
  | "ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH";

export const MNEMONIC_LENGTHS = [12, 15, 18, 21, 24] as const;
const HARDENED = 0x80000000;

/** A derivation problem a request can be told about. */
export class DerivationError extends Error {}

/** A new BIP-39 English mnemonic of `words` words (12–24, a multiple of 3). */
export function generateMnemonic(words: number = 12): string {
  if (!(MNEMONIC_LENGTHS as readonly number[]).includes(words)) {
    throw new DerivationError(`mnemonic length must be one of ${MNEMONIC_LENGTHS.join(", ")} words, got ${words}`);
  }
  return bip39Generate(wordlist, (words / 3) * 32);
}

export function isValidMnemonic(mnemonic: string): boolean {
  return validateMnemonic(mnemonic, wordlist);
}

/** The BIP-39 seed (64 bytes). A secret: never log or store it plain. */
export function seedOf(mnemonic: string, passphrase = ""): Uint8Array {
  if (!isValidMnemonic(mnemonic)) throw new DerivationError("not a valid BIP-39 English mnemonic");
  return mnemonicToSeedSync(mnemonic, passphrase);
}

/** "m/44'/60'/0'/0/0" → child indices (hardened ones ≥ 2^31). `'` and `h`/`H` mark hardened steps. */
export function parsePath(path: string): number[] {
  const parts = path.split("/");
  if (parts[0] !== "m") throw new DerivationError(`path must start with "m/": ${JSON.stringify(path.slice(0, 80))}`);
  if (parts.length > 11) throw new DerivationError("path may have at most 10 levels");
  return parts.slice(1).map((p, i) => {
    const m = /^(\d{1,10})(['hH]?)$/.exec(p);
    if (!m) throw new DerivationError(`path level ${i + 1} (${JSON.stringify(p.slice(0, 20))}) must be a number, optionally followed by '`);
    const n = Number(m[1]);
    if (n >= HARDENED) throw new DerivationError(`path level ${i + 1} must be below 2^31`);
    return m[2] ? n + HARDENED : n;
  });
}

export interface DerivedKey {
  curve: WalletCurve;
  /** secp256k1: 33-byte compressed point; ed25519: 32-byte public key. */
  publicKey: Uint8Array;
  /** A secret: never log or store it plain. */
  privateKey: Uint8Array;
}

/** SLIP-10 for ed25519: master from HMAC-SHA512("ed25519 seed", seed), hardened children only. */
function slip10Ed25519(seed: Uint8Array, indices: readonly number[]): Uint8Array {
  let I = hmac(sha512, new TextEncoder().encode("ed25519 seed"), seed);
  let key = I.slice(0, 32);
  let chain = I.slice(32);
  for (const index of indices) {
    const data = new Uint8Array(37);
    data.set(key, 1);
    new DataView(data.buffer).setUint32(33, index, false);
    I = hmac(sha512, chain, data);
    key = I.slice(0, 32);
    chain = I.slice(32);
  }
  return key;
}

export function deriveKey(seed: Uint8Array, curve: WalletCurve, path: string): DerivedKey {
  const indices = parsePath(path);
  if (curve === "CURVE_ED25519") {
    const soft = indices.findIndex((i) => i < HARDENED);
    if (soft >= 0)
      throw new DerivationError(`ed25519 paths must be hardened at every level (SLIP-10); level ${soft + 1} of ${path} is not`);
    const privateKey = slip10Ed25519(seed, indices);
    return { curve, privateKey, publicKey: ed25519.getPublicKey(privateKey) };
  }
  const master = HDKey.fromMasterSeed(seed);
  const node = master.derive(path.replace(/[hH]/g, "'"));
  try {
    if (!node.privateKey || !node.publicKey) throw new DerivationError(`could not derive ${path}`);
    // Copies: the master node (the whole wallet) and the leaf are wiped before returning.
    return { curve, privateKey: Uint8Array.from(node.privateKey), publicKey: Uint8Array.from(node.publicKey) };
  } finally {
    node.wipePrivateData();
    master.wipePrivateData();
  }
}

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

/** EIP-55 mixed-case checksum address of a secp256k1 public key. */
function ethereumAddress(compressed: Uint8Array): string {
  const uncompressed = secp256k1.Point.fromBytes(compressed).toBytes(false);
  return eip55(hex(keccak_256(uncompressed.slice(1)).slice(-20)));
}

/** EIP-55 checksum casing of a 20-byte address given as 40 hex digits (any case), with 0x. */
export function eip55(hex40: string): string {
  const addr = hex40.toLowerCase();
  const digest = hex(keccak_256(new TextEncoder().encode(addr)));
  let out = "0x";
  for (let i = 0; i < addr.length; i++) out += parseInt(digest[i]!, 16) >= 8 ? addr[i]!.toUpperCase() : addr[i]!;
  return out;
}

function p2wpkh(compressed: Uint8Array, hrp: "bc" | "tb"): string {
  const program = ripemd160(sha256(compressed));
  return bech32.encode(hrp, [0, ...bech32.toWords(program)]);
}

/** Which curve each format is defined over (COMPRESSED works for both: the key as is). */
const FORMAT_CURVES: ReadonlyMap<AddressFormat, readonly WalletCurve[]> = new Map<AddressFormat, readonly WalletCurve[]>([
  ["ADDRESS_FORMAT_COMPRESSED", ["CURVE_SECP256K1", "CURVE_ED25519"]],
  ["ADDRESS_FORMAT_UNCOMPRESSED", ["CURVE_SECP256K1"]],
  ["ADDRESS_FORMAT_ETHEREUM", ["CURVE_SECP256K1"]],
  ["ADDRESS_FORMAT_SOLANA", ["CURVE_ED25519"]],
  ["ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH", ["CURVE_SECP256K1"]],
  ["ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH", ["CURVE_SECP256K1"]],
]);

export function isAddressFormat(v: string): v is AddressFormat {
  return FORMAT_CURVES.has(v as AddressFormat);
}

/** Why a curve/format combination is refused, or null when it is fine. */
export function formatProblem(curve: WalletCurve, format: string): string | null {
  const curves = FORMAT_CURVES.get(format as AddressFormat);
  if (!curves)
    return `unsupported address format ${JSON.stringify(format.slice(0, 60))}; supported: ${[...FORMAT_CURVES.keys()].join(", ")}`;
  if (!curves.includes(curve)) return `${format} addresses are not defined for ${curve} keys (use ${curves.join(" or ")})`;
  return null;
}

export function addressOf(key: DerivedKey, format: AddressFormat): string {
  const problem = formatProblem(key.curve, format);
  if (problem) throw new DerivationError(problem);
  switch (format) {
    case "ADDRESS_FORMAT_COMPRESSED":
      return hex(key.publicKey);
    case "ADDRESS_FORMAT_UNCOMPRESSED":
      return hex(secp256k1.Point.fromBytes(key.publicKey).toBytes(false));
    case "ADDRESS_FORMAT_ETHEREUM":
      return ethereumAddress(key.publicKey);
    case "ADDRESS_FORMAT_SOLANA":
      return base58.encode(key.publicKey);
    case "ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH":
      return p2wpkh(key.publicKey, "bc");
    case "ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH":
      return p2wpkh(key.publicKey, "tb");
  }
}

/**
 * The BIP-39 seed, computed off the event loop: PBKDF2-HMAC-SHA512 (2,048 rounds, salt
 * "mnemonic" + passphrase, both NFKD) by node's OpenSSL, which takes ~2 ms where the
 * JavaScript implementation takes ~250 ms of blocked event loop. Same result as `seedOf`
 * (test/unit/wallet-derivation.test.ts checks both against the published vectors).
 */
export async function seedOfAsync(mnemonic: string, passphrase = ""): Promise<Uint8Array> {
  if (!isValidMnemonic(mnemonic)) throw new DerivationError("not a valid BIP-39 English mnemonic");
  return new Promise((resolve, reject) => {
    pbkdf2(
      Buffer.from(mnemonic.normalize("NFKD"), "utf8"),
      Buffer.from(`mnemonic${passphrase}`.normalize("NFKD"), "utf8"),
      2048,
      64,
      "sha512",
      (err, key) => (err ? reject(err) : resolve(new Uint8Array(key.buffer, key.byteOffset, key.length))),
    );
  });
}

/**
 * A wallet's secret text: the mnemonic, or `<mnemonic>\n--PASS--\n<passphrase>` for a wallet
 * imported with a BIP-39 passphrase — the hosted import frame's encoding, which export hands
 * back unchanged (docs/export-import.md §3.2). Split at the first separator.
 */
export const PASSPHRASE_SEPARATOR = "\n--PASS--\n";
export function splitWalletSecret(text: string): { mnemonic: string; passphrase: string } {
  const at = text.indexOf(PASSPHRASE_SEPARATOR);
  return at < 0
    ? { mnemonic: text, passphrase: "" }
    : { mnemonic: text.slice(0, at), passphrase: text.slice(at + PASSPHRASE_SEPARATOR.length) };
}

/** The seed of a wallet's stored secret text (mnemonic, and passphrase if it has one). */
export function seedOfWalletSecret(text: string): Promise<Uint8Array> {
  const { mnemonic, passphrase } = splitWalletSecret(text);
  return seedOfAsync(mnemonic, passphrase);
}

/** Whether every level of a parsed path is hardened (what SLIP-10 ed25519 requires). */
export function unhardenedLevel(indices: readonly number[]): number | null {
  const i = indices.findIndex((n) => n < HARDENED);
  return i < 0 ? null : i + 1;
}
