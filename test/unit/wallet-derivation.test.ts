// Wallet derivation against published vectors (test/vectors/wallet-derivation.json: BIP-39,
// BIP-32, SLIP-10 ed25519, and known mnemonic → address pairs), and the combinations refused.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { HDKey } from "@scure/bip32";
import { entropyToMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { bech32 } from "@scure/base";
import {
  addressOf,
  deriveKey,
  DerivationError,
  formatProblem,
  generateMnemonic,
  isValidMnemonic,
  parsePath,
  seedOf,
  type AddressFormat,
  type WalletCurve,
} from "../../src/wallets/derivation.ts";

const V = JSON.parse(readFileSync(new URL("../vectors/wallet-derivation.json", import.meta.url), "utf8")) as {
  bip39: { entropy: string; mnemonic: string; passphrase: string; seed: string }[];
  bip32: { seed: string; path: string; xpub?: string; xprv?: string }[];
  slip10_ed25519: { seed: string; path: string; private: string; public: string }[];
  addresses: { mnemonic: string; curve: WalletCurve; path: string; format: AddressFormat; address: string }[];
};
const bytes = (h: string) => Uint8Array.from(Buffer.from(h, "hex"));
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

describe("wallet derivation vectors", () => {
  for (const v of V.bip39) {
    it(`BIP-39 ${v.entropy} → mnemonic and seed`, () => {
      assert.equal(entropyToMnemonic(bytes(v.entropy), wordlist), v.mnemonic);
      assert.equal(hex(seedOf(v.mnemonic, v.passphrase)), v.seed);
    });
  }
  for (const v of V.bip32) {
    it(`BIP-32 ${v.seed} ${v.path}`, () => {
      const node = HDKey.fromMasterSeed(bytes(v.seed)).derive(v.path);
      if (v.xpub) assert.equal(node.publicExtendedKey, v.xpub);
      if (v.xprv) assert.equal(node.privateExtendedKey, v.xprv);
      // deriveKey walks the same path to the same key.
      assert.equal(hex(deriveKey(bytes(v.seed), "CURVE_SECP256K1", v.path).publicKey), hex(node.publicKey!));
    });
  }
  for (const v of V.slip10_ed25519) {
    it(`SLIP-10 ed25519 ${v.seed} ${v.path}`, () => {
      const k = deriveKey(bytes(v.seed), "CURVE_ED25519", v.path);
      assert.equal(hex(k.privateKey), v.private);
      assert.equal(hex(k.publicKey), v.public);
    });
  }
  for (const v of V.addresses) {
    it(`${v.format} at ${v.path}`, () => {
      assert.equal(addressOf(deriveKey(seedOf(v.mnemonic), v.curve, v.path), v.format), v.address);
    });
  }
  it("testnet P2WPKH commits to the same key hash as mainnet", () => {
    const k = deriveKey(seedOf(V.addresses[0]!.mnemonic), "CURVE_SECP256K1", "m/84'/1'/0'/0/0");
    const main = bech32.decode(addressOf(k, "ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH") as `${string}1${string}`);
    const test = bech32.decode(addressOf(k, "ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH") as `${string}1${string}`);
    assert.equal(test.prefix, "tb");
    assert.deepEqual(test.words, main.words);
  });
  it("uncompressed keys are the same point as compressed", () => {
    const k = deriveKey(seedOf(V.addresses[0]!.mnemonic), "CURVE_SECP256K1", "m/44'/60'/0'/0/0");
    const u = addressOf(k, "ADDRESS_FORMAT_UNCOMPRESSED");
    assert.match(u, /^04[0-9a-f]{128}$/);
    assert.equal(u.slice(2, 66), addressOf(k, "ADDRESS_FORMAT_COMPRESSED").slice(2));
  });
});

describe("wallet derivation refusals", () => {
  it("mnemonic lengths 12–24 words in steps of 3", () => {
    for (const n of [12, 15, 18, 21, 24]) {
      const m = generateMnemonic(n);
      assert.equal(m.split(" ").length, n);
      assert.ok(isValidMnemonic(m));
    }
    for (const n of [0, 11, 13, 25, 27]) assert.throws(() => generateMnemonic(n), DerivationError);
  });
  it("an ed25519 curve with an Ethereum or Bitcoin address, a secp256k1 key with a Solana address", () => {
    assert.match(formatProblem("CURVE_ED25519", "ADDRESS_FORMAT_ETHEREUM")!, /not defined for CURVE_ED25519/);
    assert.match(formatProblem("CURVE_ED25519", "ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH")!, /not defined/);
    assert.match(formatProblem("CURVE_SECP256K1", "ADDRESS_FORMAT_SOLANA")!, /not defined/);
    assert.match(formatProblem("CURVE_SECP256K1", "ADDRESS_FORMAT_TRON")!, /unsupported address format/);
    assert.equal(formatProblem("CURVE_ED25519", "ADDRESS_FORMAT_COMPRESSED"), null);
  });
  it("non-hardened ed25519 paths and malformed paths", () => {
    const seed = bytes("000102030405060708090a0b0c0d0e0f");
    assert.throws(() => deriveKey(seed, "CURVE_ED25519", "m/44'/501'/0'/0"), /hardened at every level/);
    for (const bad of ["44'/60'", "m/", "m/x", "m/-1", "m/2147483648", "m/1''", "m/1/2/3/4/5/6/7/8/9/10/11", "M/0"]) {
      assert.throws(() => parsePath(bad), DerivationError, bad);
    }
    assert.deepEqual(parsePath("m/44'/60h/0H/0/1"), [0x8000002c, 0x8000003c, 0x80000000, 0, 1]);
  });
  it("an invalid mnemonic (bad checksum, unknown word) is refused", () => {
    assert.throws(
      () => seedOf("abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon"),
      DerivationError,
    );
    assert.throws(() => seedOf("sigil sigil sigil sigil sigil sigil sigil sigil sigil sigil sigil sigil"), DerivationError);
  });
});
