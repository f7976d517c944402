// Private key text formats of the export and import frames (docs/frames.md §3.3): the
// `keyFormat` values @turnkey/iframe-stamper's KeyFormat names, each mapped to and from the
// 32-byte key the bundles carry (docs/export-import.md §2.2, §3.5). Pure: used by the frames
// in the browser and by the unit tests in Node.
import { bech32, createBase58check, base58 } from "@scure/base";
import { sha256 } from "@noble/hashes/sha2.js";
import { ed25519 } from "@noble/curves/ed25519.js";

/** iframe-stamper's KeyFormat values (its `KeyFormat` enum). */
export const KEY_FORMATS = ["HEXADECIMAL", "SOLANA", "BITCOIN_MAINNET_WIF", "BITCOIN_TESTNET_WIF", "SUI_BECH32"] as const;
export type KeyFormat = (typeof KEY_FORMATS)[number];

const base58check = createBase58check(sha256);
const WIF_VERSION = { BITCOIN_MAINNET_WIF: 0x80, BITCOIN_TESTNET_WIF: 0xef } as const;
const SUI_PREFIX = "suiprivkey";
/** Longest key text any format yields (SUI bech32: 70 characters); input past 4× this is refused unread. */
export const MAX_KEY_TEXT = 300;

/** An absent format is HEXADECIMAL (as the stamper documents); an unknown one is refused. */
export function keyFormatOf(v: unknown): KeyFormat {
  if (v === undefined || v === null || v === "") return "HEXADECIMAL";
  if (typeof v === "string" && (KEY_FORMATS as readonly string[]).includes(v)) return v as KeyFormat;
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the caller's value, whatever it is, in the message
  throw new Error(`unsupported key format ${JSON.stringify(String(v).slice(0, 40))}; expected one of ${KEY_FORMATS.join(", ")}`);
}

function hexBytes(hex: string): Uint8Array {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(hex)) throw new Error("the key must be hexadecimal (optionally 0x-prefixed)");
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function toHex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}

function need32(key: Uint8Array, what: string): Uint8Array {
  if (key.length !== 32) throw new Error(`${what}: expected a 32-byte private key, got ${key.length} bytes`);
  return key;
}

/** The key text shown in the export frame for the 32-byte key `key`. */
export function encodeKey(key: Uint8Array, format: KeyFormat): string {
  need32(key, format);
  switch (format) {
    case "HEXADECIMAL":
      return `0x${toHex(key)}`;
    case "SOLANA": {
      // Solana wallets' 64-byte key pair: the ed25519 seed, then its public key.
      const pair = new Uint8Array(64);
      pair.set(key, 0);
      pair.set(ed25519.getPublicKey(key), 32);
      const text = base58.encode(pair);
      pair.fill(0);
      return text;
    }
    case "BITCOIN_MAINNET_WIF":
    case "BITCOIN_TESTNET_WIF": {
      // Compressed-key WIF: version byte, key, 0x01.
      const payload = new Uint8Array(34);
      payload[0] = WIF_VERSION[format];
      payload.set(key, 1);
      payload[33] = 0x01;
      const text = base58check.encode(payload);
      payload.fill(0);
      return text;
    }
    case "SUI_BECH32": {
      // Sui's private key string: scheme flag 0 (ed25519), then the seed, bech32 "suiprivkey".
      const payload = new Uint8Array(33);
      payload.set(key, 1);
      const text = bech32.encode(SUI_PREFIX, bech32.toWords(payload));
      payload.fill(0);
      return text;
    }
  }
}

/** The 32-byte key of the text typed into the import frame, read as `format`. */
export function decodeKey(text: string, format: KeyFormat): Uint8Array {
  const t = text.trim();
  if (t.length === 0) throw new Error("no private key entered");
  if (t.length > MAX_KEY_TEXT) throw new Error("the private key text is too long");
  switch (format) {
    case "HEXADECIMAL":
      return need32(hexBytes(t.startsWith("0x") || t.startsWith("0X") ? t.slice(2) : t), format);
    case "SOLANA": {
      let pair: Uint8Array;
      try {
        pair = base58.decode(t);
      } catch {
        throw new Error("SOLANA: the key must be base58");
      }
      if (pair.length !== 64) throw new Error(`SOLANA: expected a 64-byte key pair, got ${pair.length} bytes`);
      const seed = pair.slice(0, 32);
      // The pair's second half must be the seed's public key: a typo there is caught here.
      const pub = ed25519.getPublicKey(seed);
      const matches = pub.every((b, i) => b === pair[32 + i]);
      pair.fill(0);
      if (!matches) throw new Error("SOLANA: the key pair's public half does not belong to its private half");
      return seed;
    }
    case "BITCOIN_MAINNET_WIF":
    case "BITCOIN_TESTNET_WIF": {
      let payload: Uint8Array;
      try {
        payload = base58check.decode(t);
      } catch {
        throw new Error(`${format}: not a base58check string (or its checksum is wrong)`);
      }
      if (payload[0] !== WIF_VERSION[format]) throw new Error(`${format}: wrong network version byte`);
      if (payload.length !== 34 || payload[33] !== 0x01) throw new Error(`${format}: expected a compressed-key WIF`);
      const key = payload.slice(1, 33);
      payload.fill(0);
      return key;
    }
    case "SUI_BECH32": {
      let decoded: { prefix: string; words: number[] };
      try {
        decoded = bech32.decode(t as `${string}1${string}`);
      } catch {
        throw new Error("SUI_BECH32: not a bech32 string");
      }
      if (decoded.prefix !== SUI_PREFIX) throw new Error(`SUI_BECH32: expected the prefix ${SUI_PREFIX}`);
      const payload = bech32.fromWords(decoded.words);
      if (payload.length !== 33 || payload[0] !== 0) throw new Error("SUI_BECH32: expected an ed25519 key (flag 0, 32 bytes)");
      const key = payload.slice(1);
      payload.fill(0);
      return key;
    }
  }
}
