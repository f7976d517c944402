// The account layer over derivation.ts: seeds off the event loop agree with @scure/bip39 on the
// published vectors, accounts derive to the published addresses in request order, and each
// refused combination names its field.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { accountProblems, deriveAccounts, normalPath, type AccountParams } from "../../src/wallets/accounts.ts";
import { generateMnemonic, seedOf, seedOfAsync, type AddressFormat, type WalletCurve } from "../../src/wallets/derivation.ts";

const V = JSON.parse(readFileSync(new URL("../vectors/wallet-derivation.json", import.meta.url), "utf8")) as {
  bip39: { mnemonic: string; passphrase: string; seed: string }[];
  addresses: { mnemonic: string; curve: WalletCurve; path: string; format: AddressFormat; address: string }[];
};
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const account = (curve: string, path: string, addressFormat: string): AccountParams =>
  ({ curve, pathFormat: "PATH_FORMAT_BIP32", path, addressFormat }) as AccountParams;

describe("wallet accounts", () => {
  it("seedOfAsync (OpenSSL PBKDF2) equals the BIP-39 vectors and @scure/bip39", async () => {
    for (const v of V.bip39) assert.equal(hex(await seedOfAsync(v.mnemonic, v.passphrase)), v.seed);
    for (const words of [12, 15, 18, 21, 24]) {
      const m = generateMnemonic(words);
      assert.equal(hex(await seedOfAsync(m)), hex(seedOf(m)));
      assert.equal(hex(await seedOfAsync(m, "pässphrase")), hex(seedOf(m, "pässphrase")));
    }
    await assert.rejects(seedOfAsync("abandon abandon"), /not a valid BIP-39/);
  });

  it("derives every published mnemonic → address vector, in request order, several formats on one path", async () => {
    const byMnemonic = new Map<string, typeof V.addresses>();
    for (const v of V.addresses) byMnemonic.set(v.mnemonic, [...(byMnemonic.get(v.mnemonic) ?? []), v]);
    for (const [mnemonic, vectors] of byMnemonic) {
      const seed = await seedOfAsync(mnemonic);
      const ordered = [...vectors].reverse();
      const accounts = ordered.map((v) => account(v.curve, v.path, v.format));
      assert.deepEqual(accountProblems(accounts, "accounts"), []);
      assert.deepEqual(
        deriveAccounts(seed, accounts).map((d) => d.address),
        ordered.map((v) => v.address),
      );
    }
    const formats = new Set(V.addresses.map((v) => v.format));
    for (const f of ["ADDRESS_FORMAT_ETHEREUM", "ADDRESS_FORMAT_SOLANA", "ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH"]) {
      assert.ok(formats.has(f as AddressFormat), `a published vector for ${f}`);
    }
    // The same key behind several formats of one path.
    const seed = await seedOfAsync(V.addresses[0]!.mnemonic);
    const [c, u, e] = deriveAccounts(seed, [
      account("CURVE_SECP256K1", "m/44'/60'/0'/0/0", "ADDRESS_FORMAT_COMPRESSED"),
      account("CURVE_SECP256K1", "m/44h/60h/0h/0/0", "ADDRESS_FORMAT_UNCOMPRESSED"),
      account("CURVE_SECP256K1", "m/44'/60'/0'/0/0", "ADDRESS_FORMAT_ETHEREUM"),
    ]);
    assert.equal(u!.address.slice(2, 66), c!.address.slice(2));
    assert.equal(c!.publicKey, e!.publicKey);
    assert.equal(u!.path, "m/44'/60'/0'/0/0");
    assert.equal(e!.address, "0x9858EfFD232B4033E47d90003D41EC34EcaEda94");
  });

  it("names each refused account field", () => {
    const problems = accountProblems(
      [
        account("CURVE_SECP256K1", "m/44'/60'/0'/0/0", "ADDRESS_FORMAT_ETHEREUM"),
        account("CURVE_ED25519", "m/44'/501'/0'/0'", "ADDRESS_FORMAT_ETHEREUM"),
        account("CURVE_ED25519", "m/44'/501'/0'/0", "ADDRESS_FORMAT_SOLANA"),
        account("CURVE_SECP256K1", "44/0", "ADDRESS_FORMAT_COMPRESSED"),
        account("CURVE_SECP256K1", "m/44h/60h/0h/0/0", "ADDRESS_FORMAT_ETHEREUM"),
        account("CURVE_SECP256K1", "m/0", "ADDRESS_FORMAT_TRON"),
        account("CURVE_ED25519", "m/0'", "ADDRESS_FORMAT_UNCOMPRESSED"),
      ],
      "parameters.accounts",
    );
    assert.deepEqual(
      problems.map((p) => p.field),
      [
        "parameters.accounts[1].addressFormat",
        "parameters.accounts[2].path",
        "parameters.accounts[3].path",
        "parameters.accounts[4]",
        "parameters.accounts[5].addressFormat",
        "parameters.accounts[6].addressFormat",
      ],
    );
    assert.match(problems[0]!.description, /ADDRESS_FORMAT_ETHEREUM addresses are not defined for CURVE_ED25519/);
    assert.match(problems[1]!.description, /hardened at every level .*level 4/);
    assert.match(problems[3]!.description, /same path and address format as parameters.accounts\[0\]/);
    assert.equal(normalPath("m/44H/0h/1'"), "m/44'/0'/1'");
  });
});
