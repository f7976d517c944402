// Wallets end to end: the real server (child process) and the official SDK only
// (@turnkey/sdk-server's apiClient and its `server` actions), on both engines. Creating wallets
// and accounts, reading them back, renaming and deleting; wallet policies accepted and
// evaluated for a non-root user; sign-up with a wallet (server.createSuborg, found by account
// address, server.getOrCreateSuborg); and the grep: neither database (the SQLite files byte for byte, every
// PostgreSQL row) nor the server's log holds the mnemonic (as a word sequence) or the seed.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { createRequire } from "node:module";
import { randomBytes } from "node:crypto";
import { Turnkey } from "@turnkey/sdk-server";
import { DEFAULT_ETHEREUM_ACCOUNTS, DEFAULT_SOLANA_ACCOUNTS } from "@turnkey/sdk-server";
import { assertSecretsNowhere } from "../helpers/secrets-grep.ts";
import {
  engines,
  newInstance,
  sigilInit,
  startServer,
  type InitResult,
  type Instance,
  type RunningServer,
  rejection,
} from "../helpers/server.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { MasterKey } from "../../src/crypto/envelope.ts";
import { openStore } from "../../src/store/db.ts";
import { addressOf, deriveKey, seedOf } from "../../src/wallets/derivation.ts";

const require = createRequire(import.meta.url);

/**
 * @turnkey/sdk-server's `server` actions (createSuborg, getSuborgs, getOrCreateSuborg) as a
 * Next.js app uses them: their client is built from NEXT_PUBLIC_BASE_URL,
 * NEXT_PUBLIC_ORGANIZATION_ID and TURNKEY_API_{PUBLIC,PRIVATE}_KEY when the module loads, so
 * the package is loaded afresh for each server this file starts.
 */
function sdkServerFor(url: string, init: InitResult): typeof import("@turnkey/sdk-server") {
  process.env.NEXT_PUBLIC_BASE_URL = url;
  process.env.NEXT_PUBLIC_ORGANIZATION_ID = init.organizationId;
  process.env.TURNKEY_API_PUBLIC_KEY = init.apiPublicKey;
  process.env.TURNKEY_API_PRIVATE_KEY = init.apiPrivateKey;
  const dist = `${path.sep}@turnkey${path.sep}sdk-server${path.sep}dist${path.sep}`;
  for (const id of Object.keys(require.cache)) if (id.includes(dist)) delete require.cache[id];
  return require("@turnkey/sdk-server") as typeof import("@turnkey/sdk-server");
}

type Key = { publicKey: string; privateKey: string };
const ETH0 = {
  curve: "CURVE_SECP256K1",
  pathFormat: "PATH_FORMAT_BIP32",
  path: "m/44'/60'/0'/0/0",
  addressFormat: "ADDRESS_FORMAT_ETHEREUM",
} as const;

for (const engine of engines()) {
  describe(`wallets through the official SDK (${engine.name})`, { skip: engine.skip, timeout: 180_000 }, () => {
    let inst: Instance;
    let server: RunningServer;
    let init: InitResult;
    /** Every wallet this suite created, whose mnemonic must appear nowhere. */
    const created: string[] = [];

    const apiClient = (key: Key, organizationId = init.organizationId) =>
      new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: key.publicKey,
        apiPrivateKey: key.privateKey,
        defaultOrganizationId: organizationId,
      }).apiClient();
    const root = () => apiClient({ publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey });

    /** The mnemonic of a wallet, opened from its row with the instance's master key (only the server can). */
    async function mnemonicOf(walletId: string): Promise<string> {
      const store = openStore({ dataDir: inst.dataDir, databaseUrl: inst.env.DATABASE_URL || undefined });
      try {
        const row = await store.db.selectFrom("wallets").select("seed_sealed").where("id", "=", walletId).executeTakeFirstOrThrow();
        assert.match(row.seed_sealed, /^sgl1\./);
        return (await MasterKey.parse(inst.env.SIGIL_MASTER_KEY!).open(row.seed_sealed, `wallet-seed:${walletId}`)).toString("utf8");
      } finally {
        await store.close();
      }
    }

    before(async () => {
      inst = await newInstance(engine.name, { LOG_LEVEL: "debug" });
      init = await sigilInit(inst, ["--name", "Wallets Org"]);
      server = await startServer(inst);
    });
    after(async () => {
      await server?.stop();
      await inst?.cleanup();
    });

    it("createWallet, createWalletAccounts, getWallet(s), getWalletAccount(s), updateWallet, deleteWallets", async () => {
      const c = root();
      const res = await c.createWallet({
        walletName: "sdk wallet",
        accounts: [...DEFAULT_ETHEREUM_ACCOUNTS, ...DEFAULT_SOLANA_ACCOUNTS, { ...ETH0, addressFormat: "ADDRESS_FORMAT_COMPRESSED" }],
        mnemonicLength: 18,
      });
      assert.equal(res.activity.status, "ACTIVITY_STATUS_COMPLETED");
      created.push(res.walletId);
      assert.equal(res.addresses.length, 3);
      const mnemonic = await mnemonicOf(res.walletId);
      assert.equal(mnemonic.split(" ").length, 18);
      const seed = seedOf(mnemonic);
      assert.equal(res.addresses[0], addressOf(deriveKey(seed, "CURVE_SECP256K1", "m/44'/60'/0'/0/0"), "ADDRESS_FORMAT_ETHEREUM"));
      assert.equal(res.addresses[1], addressOf(deriveKey(seed, "CURVE_ED25519", "m/44'/501'/0'/0'"), "ADDRESS_FORMAT_SOLANA"));
      assert.equal(res.addresses[2], addressOf(deriveKey(seed, "CURVE_SECP256K1", "m/44'/60'/0'/0/0"), "ADDRESS_FORMAT_COMPRESSED"));

      const more = await c.createWalletAccounts({ walletId: res.walletId, accounts: [{ ...ETH0, path: "m/44'/60'/0'/0/1" }] });
      assert.equal(more.addresses[0], addressOf(deriveKey(seed, "CURVE_SECP256K1", "m/44'/60'/0'/0/1"), "ADDRESS_FORMAT_ETHEREUM"));

      const { wallet } = await c.getWallet({ walletId: res.walletId });
      assert.deepEqual([wallet.walletName, wallet.exported, wallet.imported], ["sdk wallet", false, false]);
      assert.ok((await c.getWallets()).wallets.some((w) => w.walletId === res.walletId));
      const { accounts } = await c.getWalletAccounts({ walletId: res.walletId });
      assert.deepEqual(
        accounts.map((a) => a.address),
        [...res.addresses, ...more.addresses],
      );
      const { account } = await c.getWalletAccount({ walletId: res.walletId, address: res.addresses[1]! });
      assert.deepEqual(
        [account.curve, account.path, account.addressFormat],
        ["CURVE_ED25519", "m/44'/501'/0'/0'", "ADDRESS_FORMAT_SOLANA"],
      );

      const upd = await c.updateWallet({ walletId: res.walletId, walletName: "renamed" });
      assert.equal(upd.walletId, res.walletId);
      assert.equal((await c.getWallet({ walletId: res.walletId })).wallet.walletName, "renamed");

      const bad = await rejection(c.createWallet({ walletName: "bad", accounts: [{ ...ETH0, curve: "CURVE_ED25519" }] }));
      assert.equal(bad.code, 3);
      assert.match(bad.message, /parameters\.accounts\[0\]\.addressFormat/);

      const doomed = await c.createWallet({ walletName: "doomed", accounts: [ETH0] });
      created.push(doomed.walletId);
      assert.equal((await rejection(c.deleteWallets({ walletIds: [doomed.walletId] }))).code, 3);
      const del = await c.deleteWallets({ walletIds: [doomed.walletId], deleteWithoutExport: true });
      assert.deepEqual(del.walletIds, [doomed.walletId]);
      assert.equal((await rejection(c.getWallet({ walletId: doomed.walletId }))).code, 5);
    });

    it("wallet policies are accepted and evaluated: a DENY on wallet.label governs update_wallet for a non-root user", async () => {
      const c = root();
      const memberKey = generateP256KeyPair();
      const users = await c.createUsers({
        users: [
          {
            userName: `member-${randomBytes(3).toString("hex")}`,
            apiKeys: [{ apiKeyName: "k", publicKey: memberKey.publicKey, curveType: "API_KEY_CURVE_P256" }],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          },
        ],
      });
      assert.equal(users.userIds.length, 1);
      const member = apiClient(memberKey);
      const cold = await c.createWallet({ walletName: "cold", accounts: [ETH0] });
      const hot = await c.createWallet({ walletName: "hot", accounts: [ETH0] });
      created.push(cold.walletId, hot.walletId);

      // A policy set written for the hosted service imports: signing keywords included.
      const imported = await c.createPolicies({
        policies: [
          {
            policyName: "wallet admins",
            effect: "EFFECT_ALLOW",
            condition: "activity.resource == 'WALLET' && activity.action == 'UPDATE'",
            consensus: "",
            notes: "",
          },
          { policyName: "cold stays cold", effect: "EFFECT_DENY", condition: "wallet.label == 'cold'", consensus: "", notes: "" },
          {
            policyName: "usdc transfers",
            effect: "EFFECT_ALLOW",
            condition: "eth.tx.to == '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48' && eth.tx.value < 1000",
            consensus: "",
            notes: "",
          },
          {
            policyName: "sign with",
            effect: "EFFECT_ALLOW",
            condition: "activity.action == 'SIGN' && wallet_account.address == '0x0'",
            consensus: "",
            notes: "",
          },
        ],
      });
      assert.equal(imported.policyIds.length, 4);

      const ok = await member.updateWallet({ walletId: hot.walletId, walletName: "hot-renamed" });
      assert.equal(ok.activity.status, "ACTIVITY_STATUS_COMPLETED");
      const denied = await rejection(member.updateWallet({ walletId: cold.walletId, walletName: "warm" }));
      assert.equal(denied.code, 7, denied.message);
      assert.equal((await c.getWallet({ walletId: cold.walletId })).wallet.walletName, "cold");
      // The signing-only policies never allow anything here (their keywords are absent).
      const notAllowed = await rejection(member.createWallet({ walletName: "member's", accounts: [] }));
      assert.equal(notAllowed.code, 7, notAllowed.message);
    });

    it("sign-up with a wallet: server.createSuborg (its default wallet), found by account address; server.getOrCreateSuborg", async () => {
      const { server: actions } = sdkServerFor(server.url, init);
      const email = `signup-${randomBytes(4).toString("hex")}@example.com`;
      const made = await actions.createSuborg({ email });
      assert.ok(made?.subOrganizationId, "createSuborg returned a sub-organization (it logs and returns undefined on failure)");
      const subId = made.subOrganizationId;
      // The parent reads the sub-organization's wallet: sdk-server's default (Ethereum + Solana).
      const c = root();
      const { wallets } = await c.getWallets({ organizationId: subId });
      assert.equal(wallets.length, 1);
      assert.equal(wallets[0]!.walletName, "Wallet 1");
      created.push(wallets[0]!.walletId);
      const { accounts } = await c.getWalletAccounts({ organizationId: subId, walletId: wallets[0]!.walletId });
      assert.deepEqual(
        accounts.map((a) => a.addressFormat),
        ["ADDRESS_FORMAT_ETHEREUM", "ADDRESS_FORMAT_SOLANA"],
      );
      const mnemonic = await mnemonicOf(wallets[0]!.walletId);
      assert.equal(
        accounts[0]!.address,
        addressOf(deriveKey(seedOf(mnemonic), "CURVE_SECP256K1", "m/44'/60'/0'/0/0"), "ADDRESS_FORMAT_ETHEREUM"),
      );

      // Found by either account's address (the Ethereum one in any casing).
      for (const address of [accounts[0]!.address, accounts[0]!.address.toLowerCase(), accounts[1]!.address]) {
        const found = await actions.getSuborgs({ filterType: "WALLET_ACCOUNT_ADDRESS" as never, filterValue: address });
        assert.deepEqual(found.organizationIds, [subId], address);
      }
      assert.deepEqual(
        (await c.getSubOrgIds({ filterType: "WALLET_ACCOUNT_ADDRESS", filterValue: "0x000000000000000000000000000000000000dEaD" }))
          .organizationIds,
        [],
      );

      // getOrCreateSuborg: found by address → that one; by a new public key → created, then found.
      const again = await actions.getOrCreateSuborg({ filterType: "WALLET_ACCOUNT_ADDRESS" as never, filterValue: accounts[1]!.address });
      assert.deepEqual(again.subOrganizationIds, [subId]);
      const publicKey = generateP256KeyPair().publicKey;
      const fresh = await actions.getOrCreateSuborg({
        filterType: "PUBLIC_KEY" as never,
        filterValue: publicKey,
        additionalData: { email: `x-${email}` },
      });
      assert.equal(fresh.subOrganizationIds.length, 1);
      assert.notEqual(fresh.subOrganizationIds[0], subId);
      const freshWallets = await c.getWallets({ organizationId: fresh.subOrganizationIds[0]! });
      assert.equal(freshWallets.wallets.length, 1);
      created.push(freshWallets.wallets[0]!.walletId);

      // The result carries the wallet as the SDK reads it (createSubOrganization V8).
      const direct = await c.createSubOrganization({
        subOrganizationName: `direct-${randomBytes(3).toString("hex")}`,
        rootQuorumThreshold: 1,
        rootUsers: [{ userName: "u", apiKeys: [], authenticators: [], oauthProviders: [] }],
        wallet: { walletName: "main", accounts: [ETH0, { ...ETH0, addressFormat: "ADDRESS_FORMAT_COMPRESSED" }], mnemonicLength: 24 },
      });
      assert.equal(direct.wallet?.addresses.length, 2);
      created.push(direct.wallet!.walletId);
      assert.equal((await mnemonicOf(direct.wallet!.walletId)).split(" ").length, 24);
      const bad = await rejection(
        c.createSubOrganization({
          subOrganizationName: "bad wallet",
          rootQuorumThreshold: 1,
          rootUsers: [{ userName: "u", apiKeys: [], authenticators: [], oauthProviders: [] }],
          wallet: { walletName: "w", accounts: [{ ...ETH0, curve: "CURVE_ED25519" }] },
        }),
      );
      assert.equal(bad.code, 3);
      assert.match(bad.message, /parameters\.wallet\.accounts\[0\]\.addressFormat/);
    });

    it("neither database nor the log holds a mnemonic (as a word sequence) or a seed", async () => {
      assert.ok(created.length >= 4);
      const secrets: { what: string; needle: string }[] = [];
      for (const walletId of created) {
        const mnemonic = await mnemonicOf(walletId).catch(() => undefined);
        if (!mnemonic) continue; // deleted: its row (and sealed mnemonic) is gone
        const words = mnemonic.split(" ");
        const seed = Buffer.from(seedOf(mnemonic));
        secrets.push({ what: `${walletId} mnemonic`, needle: mnemonic });
        // Any three consecutive words: a word sequence, not a common English word.
        for (let i = 0; i + 3 <= words.length; i++)
          secrets.push({ what: `${walletId} words ${i}..${i + 2}`, needle: words.slice(i, i + 3).join(" ") });
        secrets.push({ what: `${walletId} seed hex`, needle: seed.toString("hex") });
        secrets.push({ what: `${walletId} seed base64`, needle: seed.toString("base64") });
      }
      assert.ok(secrets.length > 10);
      await assertSecretsNowhere(engine.name, inst, server.output(), secrets, "wallets");
    });
  });
}
