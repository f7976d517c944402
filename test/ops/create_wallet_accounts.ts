import { it } from "node:test";
import assert from "node:assert/strict";
import { mnemonicToSeedSync } from "@scure/bip39";
import { addressOf, deriveKey } from "../../src/wallets/derivation.ts";
import { completed, conflict, exhausted, invalidRequest, notFound, perEngine, type Json } from "../helpers/inproc.ts";
import { ETH, SOL, newWallet, openedMnemonic } from "../helpers/keys-and-wallets.ts";
import { createWalletAccounts } from "../../src/activities/wallets/create_wallet_accounts.ts";

const OP = "create_wallet_accounts";
const TYPE = "ACTIVITY_TYPE_CREATE_WALLET_ACCOUNTS";
const MISSING = "00000000-0000-4000-8000-000000000000";

perEngine("create_wallet_accounts", (h) => {
  it("derives new accounts from the wallet's seed, addresses in request order", async () => {
    const { walletId, addresses: first } = await newWallet(h(), [ETH()]);
    const accounts = [
      SOL("m/44'/501'/1'/0'"),
      ETH("m/44'/60'/0'/0/1"),
      ETH("m/44'/60'/0'/0/1", { addressFormat: "ADDRESS_FORMAT_COMPRESSED" }),
      ETH("m/44'/60'/0'/0/0", { addressFormat: "ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH", name: "btc" }),
    ];
    const { addresses } = completed(await h().submit(OP, TYPE, { walletId, accounts }), createWalletAccounts);
    const seed = mnemonicToSeedSync(await openedMnemonic(h(), walletId));
    assert.deepEqual(addresses, [
      addressOf(deriveKey(seed, "CURVE_ED25519", "m/44'/501'/1'/0'"), "ADDRESS_FORMAT_SOLANA"),
      addressOf(deriveKey(seed, "CURVE_SECP256K1", "m/44'/60'/0'/0/1"), "ADDRESS_FORMAT_ETHEREUM"),
      addressOf(deriveKey(seed, "CURVE_SECP256K1", "m/44'/60'/0'/0/1"), "ADDRESS_FORMAT_COMPRESSED"),
      addressOf(deriveKey(seed, "CURVE_SECP256K1", "m/44'/60'/0'/0/0"), "ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH"),
    ]);
    const accs = (await h().query("list_wallet_accounts", { walletId })).json.accounts;
    assert.deepEqual(
      accs.map((a: Json) => a.address),
      [...first, ...addresses],
    );
    assert.equal(accs[4].name, "btc");
    // One path, one key, whatever the address format.
    assert.equal(accs[4].publicKey, accs[0].publicKey);
    assert.equal(accs[3].publicKey, accs[2].publicKey);
  });

  it("persist: false derives without recording", async () => {
    const { walletId } = await newWallet(h(), []);
    const { addresses } = completed(
      await h().submit(OP, TYPE, { walletId, accounts: [ETH("m/7")], persist: false }),
      "createWalletAccountsResult",
    );
    assert.match(addresses[0], /^0x/);
    assert.deepEqual((await h().query("list_wallet_accounts", { walletId })).json.accounts, []);
  });

  it("an account the wallet already has (path and format) is 409, and nothing is added", async () => {
    const { walletId } = await newWallet(h(), [ETH()]);
    conflict(
      await h().submit(OP, TYPE, { walletId, accounts: [ETH("m/1"), ETH("m/44h/60h/0h/0/0")] }),
      /accounts\[1\].*already has an account/,
    );
    assert.equal((await h().query("list_wallet_accounts", { walletId })).json.accounts.length, 1);
  });

  it("the same account requested concurrently is created once; the other request is 409", async () => {
    const { walletId } = await newWallet(h(), []);
    const results = await Promise.all(
      ["a", "b", "c"].map((name) => h().submit(OP, TYPE, { walletId, accounts: [ETH("m/44'/60'/0'/0/3", { name })] })),
    );
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 409, 409]);
    assert.equal((await h().query("list_wallet_accounts", { walletId })).json.accounts.length, 1);
  });

  it("refuses bad accounts field by field (400)", async () => {
    const { walletId } = await newWallet(h(), []);
    invalidRequest(
      await h().submit(OP, TYPE, { walletId, accounts: [ETH("m/1"), { ...SOL(), addressFormat: "ADDRESS_FORMAT_ETHEREUM" }] }),
      /ED25519/,
      ["parameters.accounts[1].addressFormat"],
    );
    invalidRequest(await h().submit(OP, TYPE, { walletId, accounts: [SOL("m/0")] }), /hardened/, ["parameters.accounts[0].path"]);
    invalidRequest(await h().submit(OP, TYPE, { walletId, accounts: [] }), /accounts/, ["parameters.accounts"]);
    invalidRequest(await h().submit(OP, TYPE, { walletId: "w", accounts: [ETH()] }), /wallet id/, ["parameters.walletId"]);
  });

  it("an unknown wallet, or another organization's, is 404", async () => {
    notFound(await h().submit(OP, TYPE, { walletId: MISSING, accounts: [ETH()] }), /no wallet/);
    const other = await h().newOrg("Other wallets");
    const { walletId } = await newWallet(h(), []);
    notFound(await h().submit(OP, TYPE, { walletId, accounts: [ETH()] }, { as: other }), /no wallet/);
  });

  it("at most 1,000 accounts per wallet, under concurrency (429)", async () => {
    const { walletId } = await newWallet(h(), []);
    const batch = (k: number) => Array.from({ length: 100 }, (_, i) => ETH(`m/${k}/${i}`, { addressFormat: "ADDRESS_FORMAT_COMPRESSED" }));
    const results = await Promise.all(Array.from({ length: 11 }, (_, k) => h().submit(OP, TYPE, { walletId, accounts: batch(k) })));
    assert.equal(results.filter((r) => r.status === 200).length, 10);
    exhausted(
      results.find((r) => r.status !== 200)!,
      /at most 1000/,
    );
    const count = await h()
      .service.store.db.selectFrom("wallet_accounts")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("wallet_id", "=", walletId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 1000);
  });
});
