import { it } from "node:test";
import assert from "node:assert/strict";
import { HDKey } from "@scure/bip32";
import { mnemonicToSeedSync, validateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { addressOf, deriveKey } from "../../src/wallets/derivation.ts";
import { assertIdempotent, completed, conflict, invalidRequest, perEngine, UUID, type Json } from "../helpers/inproc.ts";
import { ETH, SOL, newWallet, openedMnemonic } from "../helpers/keys-and-wallets.ts";

const OP = "create_wallet";
const TYPE = "ACTIVITY_TYPE_CREATE_WALLET";

let n = 0;

perEngine("create_wallet", (h) => {
  it("creates a wallet whose addresses derive from its sealed mnemonic; formats of one path in request order", async () => {
    const accounts = [
      ETH(),
      {
        curve: "CURVE_SECP256K1",
        pathFormat: "PATH_FORMAT_BIP32",
        path: "m/84'/0'/0'/0/0",
        addressFormat: "ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH",
      },
      ETH("m/44'/60'/0'/0/0", { addressFormat: "ADDRESS_FORMAT_COMPRESSED" }),
      SOL(),
      ETH("m/44'/60'/0'/0/0", { addressFormat: "ADDRESS_FORMAT_UNCOMPRESSED" }),
      {
        curve: "CURVE_SECP256K1",
        pathFormat: "PATH_FORMAT_BIP32",
        path: "m/84'/1'/0'/0/0",
        addressFormat: "ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH",
      },
    ];
    const res = await h().submit(OP, TYPE, { walletName: "main", accounts, mnemonicLength: 24 });
    const { walletId, addresses } = completed(res, "createWalletResult");
    assert.match(walletId, UUID);
    assert.equal(addresses.length, 6);
    assert.match(addresses[0], /^0x[0-9a-fA-F]{40}$/);
    assert.match(addresses[1], /^bc1q/);
    assert.match(addresses[2], /^0[23][0-9a-f]{64}$/);
    assert.match(addresses[3], /^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    assert.match(addresses[4], /^04[0-9a-f]{128}$/);
    assert.match(addresses[5], /^tb1q/);
    // The compressed and uncompressed forms are the same key as the Ethereum address.
    assert.equal(addresses[4].slice(2, 66), addresses[2].slice(2));

    // Independently of the service's code: the sealed mnemonic (24 words, valid) derives them.
    const mnemonic = await openedMnemonic(h(), walletId);
    assert.equal(mnemonic.split(" ").length, 24);
    assert.ok(validateMnemonic(mnemonic, wordlist));
    const seed = mnemonicToSeedSync(mnemonic);
    const eth = HDKey.fromMasterSeed(seed).derive("m/44'/60'/0'/0/0");
    assert.equal(Buffer.from(eth.publicKey!).toString("hex"), addresses[2]);
    assert.equal(addressOf(deriveKey(seed, "CURVE_ED25519", "m/44'/501'/0'/0'"), "ADDRESS_FORMAT_SOLANA"), addresses[3]);

    // The mnemonic is sealed at rest and never in the activity.
    const row = await h().service.store.db.selectFrom("wallets").selectAll().where("id", "=", walletId).executeTakeFirstOrThrow();
    assert.match(row.seed_sealed, /^sgl1\./);
    assert.ok(!row.seed_sealed.includes(mnemonic.split(" ").slice(0, 3).join(" ")));
    assert.equal(row.imported, 0);
    assert.equal(row.exported, 0);
    const text = JSON.stringify(res.json);
    for (const word of new Set(mnemonic.split(" "))) assert.ok(!text.includes(` ${word} `), "a mnemonic word sequence in the activity");
    assert.ok(!text.includes(mnemonic));
    const stored = await h()
      .service.store.db.selectFrom("activities")
      .select(["intent", "result"])
      .where("id", "=", res.json.activity.id)
      .executeTakeFirstOrThrow();
    assert.ok(!`${stored.intent}${stored.result}`.includes(mnemonic.split(" ").slice(0, 2).join(" ")));

    const accs = (await h().query("list_wallet_accounts", { walletId, paginationOptions: { limit: "100" } })).json.accounts;
    assert.deepEqual(
      accs.map((a: Json) => a.address),
      addresses,
    );
    assert.deepEqual(Object.keys(accs[0]).sort(), [
      "address",
      "addressFormat",
      "createdAt",
      "curve",
      "organizationId",
      "path",
      "pathFormat",
      "publicKey",
      "updatedAt",
      "walletAccountId",
      "walletId",
    ]);
  });

  it("defaults to 12 words, and accepts no accounts", async () => {
    const { walletId, addresses } = await newWallet(h(), []);
    assert.deepEqual(addresses, []);
    assert.equal((await openedMnemonic(h(), walletId)).split(" ").length, 12);
  });

  it("`h` marks hardened steps like ': both spellings are one account path", async () => {
    const { walletId, addresses } = await newWallet(h(), [ETH("m/44h/60h/0h/0/1")]);
    const mnemonic = await openedMnemonic(h(), walletId);
    const key = deriveKey(mnemonicToSeedSync(mnemonic), "CURVE_SECP256K1", "m/44'/60'/0'/0/1");
    assert.equal(addressOf(key, "ADDRESS_FORMAT_ETHEREUM"), addresses[0]);
  });

  it("the same body twice is one activity (one wallet)", async () => {
    const before = (await h().query("list_wallets")).json.wallets.length;
    await assertIdempotent(h(), OP, TYPE, { walletName: "idem", accounts: [ETH()] });
    assert.equal((await h().query("list_wallets")).json.wallets.length, before + 1);
  });

  it("a wallet name is unique in the organization (409)", async () => {
    await newWallet(h(), [], { walletName: "taken" });
    conflict(await h().submit(OP, TYPE, { walletName: "taken", accounts: [] }), /already exists/);
  });

  const refused: [string, Json, RegExp, string[]][] = [
    [
      "an ed25519 curve with an Ethereum address",
      { accounts: [ETH(), { ...SOL(), addressFormat: "ADDRESS_FORMAT_ETHEREUM" }] },
      /not defined for CURVE_ED25519/,
      ["parameters.accounts[1].addressFormat"],
    ],
    ["a non-hardened ed25519 path", { accounts: [SOL("m/44'/501'/0'/0")] }, /hardened/, ["parameters.accounts[0].path"]],
    ["a malformed path", { accounts: [ETH("44'/60'/0'")] }, /must start with "m\/"/, ["parameters.accounts[0].path"]],
    ["a path level that is not a number", { accounts: [ETH("m/44'/x/0")] }, /must be a number/, ["parameters.accounts[0].path"]],
    ["a path level of 2^31", { accounts: [ETH("m/2147483648")] }, /below 2\^31/, ["parameters.accounts[0].path"]],
    [
      "an unknown address format",
      { accounts: [ETH("m/0", { addressFormat: "ADDRESS_FORMAT_DOGE" })] },
      /unsupported address format/,
      ["parameters.accounts[0].addressFormat"],
    ],
    [
      "a P-256 curve",
      { accounts: [ETH("m/0", { curve: "CURVE_P256" })] },
      /CURVE_SECP256K1 or CURVE_ED25519/,
      ["parameters.accounts[0].curve"],
    ],
    [
      "another path format",
      { accounts: [ETH("m/0", { pathFormat: "PATH_FORMAT_X" })] },
      /PATH_FORMAT_BIP32/,
      ["parameters.accounts[0].pathFormat"],
    ],
    ["the same path and format twice", { accounts: [ETH(), ETH()] }, /same path and address format/, ["parameters.accounts[1]"]],
    ["a mnemonic of 11 words", { mnemonicLength: 11, accounts: [] }, /12, 15, 18, 21 or 24/, ["parameters.mnemonicLength"]],
    ["a mnemonic of 25 words", { mnemonicLength: 25, accounts: [] }, /12, 15, 18, 21 or 24/, ["parameters.mnemonicLength"]],
    ["a mnemonic of 13 words", { mnemonicLength: 13, accounts: [] }, /12, 15, 18, 21 or 24/, ["parameters.mnemonicLength"]],
    ["101 accounts", { accounts: Array.from({ length: 101 }, (_, i) => ETH(`m/${i}`)) }, /at most 100/, ["parameters.accounts"]],
    ["a blank name", { walletName: " ", accounts: [] }, /walletName/, ["parameters.walletName"]],
  ];
  for (const [what, params, message, fields] of refused) {
    it(`refuses ${what} (400), and creates nothing`, async () => {
      const before = (await h().query("list_wallets")).json.wallets.length;
      invalidRequest(await h().submit(OP, TYPE, { walletName: `bad-${n++}`, ...params }), message, fields);
      assert.equal((await h().query("list_wallets")).json.wallets.length, before);
    });
  }
});

perEngine("create_wallet limits", (h) => {
  it("at most 100 wallets per organization, also when created concurrently (429)", async () => {
    const org = await h().newOrg("Wallet cap");
    const results = await Promise.all(
      Array.from({ length: 104 }, (_, i) => h().submit(OP, TYPE, { walletName: `cap-${i}`, accounts: [] }, { as: org })),
    );
    const ok = results.filter((r) => r.status === 200 && r.json.activity.status === "ACTIVITY_STATUS_COMPLETED");
    const capped = results.filter((r) => r.status === 429);
    assert.equal(ok.length, 100, JSON.stringify(results.find((r) => r.status !== 200 && r.status !== 429)?.json));
    assert.equal(capped.length, 4);
    assert.match(capped[0]!.json.message, /maximum of 100 wallets/);
    assert.equal((await h().query("list_wallets", {}, { as: org })).json.wallets.length, 100);
  });
});

perEngine("sign-up with a wallet (create_sub_organization V8/V7 `wallet`, list_suborgs WALLET_ACCOUNT_ADDRESS)", (h) => {
  it("creates the wallet in the new sub-organization, returns it, and finds the sub-organization by address", async () => {
    const rootUser = { userName: "end-user", apiKeys: [], authenticators: [], oauthProviders: [] };
    for (const type of ["ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7"]) {
      const res = await h().submit("create_sub_organization", type, {
        subOrganizationName: `signup-${n++}`,
        rootQuorumThreshold: 1,
        rootUsers: [rootUser],
        wallet: { walletName: "Wallet 1", accounts: [ETH(), SOL()] },
      });
      const key = type.endsWith("V8") ? "createSubOrganizationResultV8" : "createSubOrganizationResultV7";
      const { subOrganizationId, wallet } = completed(res, key);
      assert.match(wallet.walletId, UUID);
      assert.equal(wallet.addresses.length, 2);
      const mnemonic = await openedMnemonic(h(), wallet.walletId);
      const seed = mnemonicToSeedSync(mnemonic);
      assert.equal(wallet.addresses[0], addressOf(deriveKey(seed, "CURVE_SECP256K1", "m/44'/60'/0'/0/0"), "ADDRESS_FORMAT_ETHEREUM"));
      const row = await h().service.store.db.selectFrom("wallets").selectAll().where("id", "=", wallet.walletId).executeTakeFirstOrThrow();
      assert.equal(row.organization_id, subOrganizationId);
      for (const address of [...wallet.addresses, wallet.addresses[0].toLowerCase()]) {
        const found = await h().query("list_suborgs", { filterType: "WALLET_ACCOUNT_ADDRESS", filterValue: address });
        assert.deepEqual(found.json.organizationIds, [subOrganizationId], address);
      }
    }
    const none = await h().query("list_suborgs", {
      filterType: "WALLET_ACCOUNT_ADDRESS",
      filterValue: "0x000000000000000000000000000000000000dEaD",
    });
    assert.deepEqual(none.json.organizationIds, []);
  });

  it("a refused wallet refuses the whole sign-up: no sub-organization is created", async () => {
    const before = (await h().query("list_suborgs", { paginationOptions: { limit: "100" } })).json.organizationIds.length;
    invalidRequest(
      await h().submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
        subOrganizationName: "bad-wallet",
        rootQuorumThreshold: 1,
        rootUsers: [{ userName: "u", apiKeys: [], authenticators: [], oauthProviders: [] }],
        wallet: { walletName: "w", accounts: [SOL("m/44'/501'/0'/0")], mnemonicLength: 15 },
      }),
      /hardened/,
      ["parameters.wallet.accounts[0].path"],
    );
    assert.equal((await h().query("list_suborgs", { paginationOptions: { limit: "100" } })).json.organizationIds.length, before);
  });
});
