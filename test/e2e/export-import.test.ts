// Wallet and private key export and import end to end (docs/export-import.md): the real server (child process),
// @turnkey/sdk-server's apiClient and @turnkey/crypto's own decryptExportBundle and
// encryptWalletToBundle, given the BUNDLE_SIGNER key from discovery; @sigil/client's helpers
// against the same bundles; on both engines. Export gives back the mnemonic (and an account's
// key) that derives the wallet's addresses; importing the BIP-39 test mnemonic gives its known
// address; a bundle is accepted once; a sub-organization exports only its own wallets; and
// neither database nor the server's log holds a mnemonic, an exported key or a target key.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { Turnkey } from "@turnkey/sdk-server";
import { decryptExportBundle, encryptPrivateKeyToBundle, encryptWalletToBundle, generateP256KeyPair } from "@turnkey/crypto";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { createSigilClient } from "@sigil/client";
import {
  engines,
  newInstance,
  rejection,
  sigilInit,
  startServer,
  type InitResult,
  type Instance,
  type RunningServer,
} from "../helpers/server.ts";
import { assertSecretsNowhere, type Secret } from "../helpers/secrets-grep.ts";
import { openStore } from "../../src/store/db.ts";
import { addressOf, deriveKey, seedOf } from "../../src/wallets/derivation.ts";

const ETH0 = {
  curve: "CURVE_SECP256K1",
  pathFormat: "PATH_FORMAT_BIP32",
  path: "m/44'/60'/0'/0/0",
  addressFormat: "ADDRESS_FORMAT_ETHEREUM",
} as const;
const SOL0 = {
  curve: "CURVE_ED25519",
  pathFormat: "PATH_FORMAT_BIP32",
  path: "m/44'/501'/0'/0'",
  addressFormat: "ADDRESS_FORMAT_SOLANA",
} as const;
/** The BIP-39 test mnemonic and its first Ethereum address (m/44'/60'/0'/0/0). */
const TEST_MNEMONIC = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about";
const TEST_ADDRESS = "0x9858EfFD232B4033E47d90003D41EC34EcaEda94";
/** A second, 24-word mnemonic imported through @sigil/client (BIP-39 vector: entropy 0x7f × 32). */
const CLIENT_MNEMONIC =
  "legal winner thank year wave sausage worth useful legal winner thank year wave sausage worth useful legal winner thank year wave sausage worth title";

type Key = { publicKey: string; privateKey: string };

for (const engine of engines()) {
  describe(`wallet export and import (${engine.name})`, { skip: engine.skip, timeout: 180_000 }, () => {
    let inst: Instance;
    let server: RunningServer;
    let init: InitResult;
    let signer: string;
    /** Every secret that crossed the wire encrypted and must appear nowhere in plain. */
    const secrets: Secret[] = [];

    const apiClient = (key: Key, organizationId = init.organizationId) =>
      new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: key.publicKey,
        apiPrivateKey: key.privateKey,
        defaultOrganizationId: organizationId,
      }).apiClient();
    const root = () => apiClient({ publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey });
    const remember = (what: string, mnemonic: string) => {
      secrets.push({ what, needle: mnemonic });
      const words = mnemonic.split(" ");
      for (let i = 0; i + 3 <= words.length; i++)
        secrets.push({ what: `${what} words ${i}..${i + 2}`, needle: words.slice(i, i + 3).join(" ") });
    };

    before(async () => {
      inst = await newInstance(engine.name, { LOG_LEVEL: "debug" });
      init = await sigilInit(inst, ["--name", "Export Org"]);
      server = await startServer(inst);
      const doc = (await (await fetch(`${server.url}/public/v1/discovery/keys`)).json()) as {
        keys: { purpose: string; publicKey: string; status: string }[];
      };
      const key = doc.keys.find((k) => k.purpose === "BUNDLE_SIGNER" && k.status === "active");
      assert.ok(key, "discovery publishes the BUNDLE_SIGNER key (created at start)");
      signer = key.publicKey;
    });
    after(async () => {
      await server?.stop();
      await inst?.cleanup();
    });

    it("exportWallet → decryptExportBundle gives the mnemonic, which derives the addresses; exportWalletAccount gives the key; exported: true", async () => {
      const c = root();
      const made = await c.createWallet({ walletName: "to export", accounts: [ETH0, SOL0] });
      const target = generateP256KeyPair();
      const res = await c.exportWallet({ walletId: made.walletId, targetPublicKey: target.publicKeyUncompressed });
      assert.equal(res.walletId, made.walletId);
      const mnemonic = await decryptExportBundle({
        exportBundle: res.exportBundle,
        embeddedKey: target.privateKey,
        organizationId: init.organizationId,
        returnMnemonic: true,
        dangerouslyOverrideSignerPublicKey: signer,
      });
      remember("exported mnemonic", mnemonic);
      assert.equal(mnemonic.split(" ").length, 12);
      const seed = seedOf(mnemonic);
      assert.equal(addressOf(deriveKey(seed, "CURVE_SECP256K1", ETH0.path), "ADDRESS_FORMAT_ETHEREUM"), made.addresses[0]);
      assert.equal(addressOf(deriveKey(seed, "CURVE_ED25519", SOL0.path), "ADDRESS_FORMAT_SOLANA"), made.addresses[1]);
      // Without the override the SDK pins upstream's signer and refuses the bundle.
      await assert.rejects(
        decryptExportBundle({
          exportBundle: res.exportBundle,
          embeddedKey: target.privateKey,
          organizationId: init.organizationId,
          returnMnemonic: true,
        }),
        /signer key/,
      );

      const { wallet } = await c.getWallet({ walletId: made.walletId });
      assert.deepEqual([wallet.exported, wallet.imported], [true, false]);
      assert.equal((await c.getWallets()).wallets.find((w) => w.walletId === made.walletId)?.exported, true);

      // @sigil/client opens the same kind of bundle with the key it fetches itself.
      const sigil = createSigilClient({ baseUrl: server.url });
      const target2 = generateP256KeyPair();
      const again = await c.exportWallet({ walletId: made.walletId, targetPublicKey: target2.publicKey });
      assert.equal(
        await sigil.decryptExportBundle({
          exportBundle: again.exportBundle,
          embeddedKey: target2.privateKey,
          organizationId: init.organizationId,
          returnMnemonic: true,
        }),
        mnemonic,
      );
      await assert.rejects(
        sigil.decryptExportBundle({
          exportBundle: again.exportBundle,
          embeddedKey: target2.privateKey,
          organizationId: "another",
          returnMnemonic: true,
        }),
        /organization/,
      );

      const accountTarget = generateP256KeyPair();
      const acc = await c.exportWalletAccount({ address: made.addresses[0]!, targetPublicKey: accountTarget.publicKeyUncompressed });
      assert.equal(acc.address, made.addresses[0]);
      const privateKey = await decryptExportBundle({
        exportBundle: acc.exportBundle,
        embeddedKey: accountTarget.privateKey,
        organizationId: init.organizationId,
        returnMnemonic: false,
        dangerouslyOverrideSignerPublicKey: signer,
      });
      assert.equal(privateKey, Buffer.from(deriveKey(seed, "CURVE_SECP256K1", ETH0.path).privateKey).toString("hex"));
      secrets.push({ what: "exported private key", needle: privateKey });

      // A bad target key is a 400 naming the field; an unknown wallet a 404.
      const bad = await rejection(c.exportWallet({ walletId: made.walletId, targetPublicKey: "04deadbeef" }));
      assert.equal(bad.code, 3);
      assert.match(bad.message, /parameters\.targetPublicKey/);
      const unknown = await rejection(
        c.exportWallet({ walletId: "00000000-0000-4000-8000-000000000000", targetPublicKey: target.publicKey }),
      );
      assert.equal(unknown.code, 5);
    });

    it("initImportWallet → encryptWalletToBundle → importWallet: the known address, imported: true; the same bundle twice is refused", async () => {
      const c = root();
      const { importBundle } = await c.initImportWallet({ userId: init.userId });
      const encryptedBundle = await encryptWalletToBundle({
        mnemonic: TEST_MNEMONIC,
        importBundle,
        userId: init.userId,
        organizationId: init.organizationId,
        dangerouslyOverrideSignerPublicKey: signer,
      });
      remember("imported test mnemonic", TEST_MNEMONIC);
      const res = await c.importWallet({ userId: init.userId, walletName: "imported", encryptedBundle, accounts: [ETH0] });
      assert.deepEqual(res.addresses, [TEST_ADDRESS]);
      const { wallet } = await c.getWallet({ walletId: res.walletId });
      assert.deepEqual([wallet.imported, wallet.exported], [true, false]);

      const replay = await rejection(
        c.importWallet({ userId: init.userId, walletName: "imported again", encryptedBundle, accounts: [ETH0] }),
      );
      assert.equal(replay.code, 5);
      assert.match(replay.message, /no pending import/);

      // @sigil/client builds the same bundle from the key it fetches; the import round-trips through export.
      const sigil = createSigilClient({ baseUrl: server.url });
      const second = await c.initImportWallet({ userId: init.userId });
      const clientBundle = await sigil.encryptWalletToBundle({
        mnemonic: CLIENT_MNEMONIC,
        importBundle: second.importBundle,
        userId: init.userId,
        organizationId: init.organizationId,
      });
      remember("imported client mnemonic", CLIENT_MNEMONIC);
      const imported = await c.importWallet({
        userId: init.userId,
        walletName: "imported by @sigil/client",
        encryptedBundle: clientBundle,
        accounts: [ETH0],
      });
      assert.equal(
        imported.addresses[0],
        addressOf(deriveKey(seedOf(CLIENT_MNEMONIC), "CURVE_SECP256K1", ETH0.path), "ADDRESS_FORMAT_ETHEREUM"),
      );
      const target = generateP256KeyPair();
      const exported = await c.exportWallet({ walletId: imported.walletId, targetPublicKey: target.publicKey });
      const back = await decryptExportBundle({
        exportBundle: exported.exportBundle,
        embeddedKey: target.privateKey,
        organizationId: init.organizationId,
        returnMnemonic: true,
        dangerouslyOverrideSignerPublicKey: signer,
      });
      assert.equal(back, CLIENT_MNEMONIC);
    });

    it("a mnemonic with a BIP-39 passphrase (the import frame's `mnemonic\\n--PASS--\\npassphrase`): the passphrase's addresses, signing with them, export hands the same text back", async () => {
      const c = root();
      const PASSPHRASE = " TREZOR x"; // spaces count
      const text = `${TEST_MNEMONIC}\n--PASS--\n${PASSPHRASE}`;
      const { importBundle } = await c.initImportWallet({ userId: init.userId });
      const encryptedBundle = await encryptWalletToBundle({
        mnemonic: text,
        importBundle,
        userId: init.userId,
        organizationId: init.organizationId,
        dangerouslyOverrideSignerPublicKey: signer,
      });
      const res = await c.importWallet({ userId: init.userId, walletName: "imported with passphrase", encryptedBundle, accounts: [ETH0] });
      const expected = addressOf(deriveKey(seedOf(TEST_MNEMONIC, PASSPHRASE), "CURVE_SECP256K1", ETH0.path), "ADDRESS_FORMAT_ETHEREUM");
      assert.notEqual(expected, TEST_ADDRESS);
      assert.deepEqual(res.addresses, [expected]);
      // An account added later derives from the same seed (passphrase included).
      const more = await c.createWalletAccounts({ walletId: res.walletId, accounts: [{ ...ETH0, path: "m/44'/60'/0'/0/1" }] });
      assert.equal(
        more.addresses[0],
        addressOf(deriveKey(seedOf(TEST_MNEMONIC, PASSPHRASE), "CURVE_SECP256K1", "m/44'/60'/0'/0/1"), "ADDRESS_FORMAT_ETHEREUM"),
      );
      // Signing uses the passphrase's key.
      const digest = "11".repeat(32);
      const sig = await c.signRawPayload({
        signWith: expected,
        payload: digest,
        encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
        hashFunction: "HASH_FUNCTION_NO_OP",
      });
      const { recoverAddress } = await import("viem");
      const v = BigInt(parseInt(sig.v, 16) + 27);
      assert.equal(await recoverAddress({ hash: `0x${digest}`, signature: { r: `0x${sig.r}`, s: `0x${sig.s}`, v } }), expected);
      const target = generateP256KeyPair();
      const exported = await c.exportWallet({ walletId: res.walletId, targetPublicKey: target.publicKey });
      const back = await decryptExportBundle({
        exportBundle: exported.exportBundle,
        embeddedKey: target.privateKey,
        organizationId: init.organizationId,
        returnMnemonic: true,
        dangerouslyOverrideSignerPublicKey: signer,
      });
      assert.equal(back, text);
    });

    it("private keys: createPrivateKeys → exportPrivateKey opens to the key; initImportPrivateKey → encryptPrivateKeyToBundle → importPrivateKey", async () => {
      const c = root();
      const made = await c.createPrivateKeys({
        privateKeys: [
          { privateKeyName: "to export", curve: "CURVE_SECP256K1", privateKeyTags: [], addressFormats: ["ADDRESS_FORMAT_ETHEREUM"] },
        ],
      });
      const privateKeyId = made.privateKeys[0]!.privateKeyId!;
      const addresses = made.privateKeys[0]!.addresses!;
      const target = generateP256KeyPair();
      const res = await c.exportPrivateKey({ privateKeyId, targetPublicKey: target.publicKeyUncompressed });
      const key = await decryptExportBundle({
        exportBundle: res.exportBundle,
        embeddedKey: target.privateKey,
        organizationId: init.organizationId,
        returnMnemonic: false,
        dangerouslyOverrideSignerPublicKey: signer,
      });
      const key1 = {
        curve: "CURVE_SECP256K1" as const,
        privateKey: Buffer.from(key, "hex"),
        publicKey: secp256k1.getPublicKey(Buffer.from(key, "hex"), true),
      };
      assert.equal(addressOf(key1, "ADDRESS_FORMAT_ETHEREUM"), addresses[0]!.address);
      secrets.push({ what: "exported private key (key store)", needle: key });
      assert.equal((await c.getPrivateKey({ privateKeyId })).privateKey.exported, true);

      const fresh = secp256k1.utils.randomSecretKey();
      const freshHex = Buffer.from(fresh).toString("hex");
      secrets.push({ what: "imported private key", needle: freshHex });
      const { importBundle } = await c.initImportPrivateKey({ userId: init.userId });
      const encryptedBundle = await encryptPrivateKeyToBundle({
        privateKey: freshHex,
        keyFormat: "HEXADECIMAL",
        importBundle,
        userId: init.userId,
        organizationId: init.organizationId,
        dangerouslyOverrideSignerPublicKey: signer,
      });
      const imported = await c.importPrivateKey({
        userId: init.userId,
        privateKeyName: "imported key",
        encryptedBundle,
        curve: "CURVE_SECP256K1",
        addressFormats: ["ADDRESS_FORMAT_ETHEREUM"],
      });
      assert.equal(
        imported.addresses[0]!.address,
        addressOf(
          { curve: "CURVE_SECP256K1", privateKey: fresh, publicKey: secp256k1.getPublicKey(fresh, true) },
          "ADDRESS_FORMAT_ETHEREUM",
        ),
      );
      assert.equal((await c.getPrivateKey({ privateKeyId: imported.privateKeyId })).privateKey.imported, true);
      const replay = await rejection(
        c.importPrivateKey({ userId: init.userId, privateKeyName: "again", encryptedBundle, curve: "CURVE_SECP256K1", addressFormats: [] }),
      );
      assert.equal(replay.code, 5);
    });

    it("a sub-organization exports only its own wallets; a parent does not export a sub-organization's", async () => {
      const c = root();
      const subs: { id: string; key: Key; walletId: string; address: string }[] = [];
      for (const name of ["a", "b"]) {
        const key = generateP256KeyPair();
        const sub = await c.createSubOrganization({
          subOrganizationName: `sub-${name}-${randomBytes(3).toString("hex")}`,
          rootQuorumThreshold: 1,
          rootUsers: [
            {
              userName: "owner",
              apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
              authenticators: [],
              oauthProviders: [],
            },
          ],
          wallet: { walletName: "own", accounts: [ETH0] },
        });
        subs.push({ id: sub.subOrganizationId, key, walletId: sub.wallet!.walletId, address: sub.wallet!.addresses[0]! });
      }
      const [a, b] = subs as [(typeof subs)[0], (typeof subs)[0]];
      const target = generateP256KeyPair();
      const asA = apiClient(a.key, a.id);
      // Its own wallet: yes.
      const own = await asA.exportWallet({ walletId: a.walletId, targetPublicKey: target.publicKey });
      const ownMnemonic = await decryptExportBundle({
        exportBundle: own.exportBundle,
        embeddedKey: target.privateKey,
        organizationId: a.id,
        returnMnemonic: true,
        dangerouslyOverrideSignerPublicKey: signer,
      });
      remember("sub-organization mnemonic", ownMnemonic);
      // B's wallet or account named in A's organization: not found there.
      assert.equal((await rejection(asA.exportWallet({ walletId: b.walletId, targetPublicKey: target.publicKey }))).code, 5);
      assert.equal((await rejection(asA.exportWalletAccount({ address: b.address, targetPublicKey: target.publicKey }))).code, 5);
      // A's key against B's organization: not a credential there.
      assert.equal(
        (await rejection(asA.exportWallet({ organizationId: b.id, walletId: b.walletId, targetPublicKey: target.publicKey }))).code,
        16,
      );
      // The parent reads sub-organizations but does not write in them (docs/request-path.md §5).
      const parent = await rejection(c.exportWallet({ organizationId: b.id, walletId: b.walletId, targetPublicKey: target.publicKey }));
      assert.equal(parent.code, 7, parent.message);
      assert.equal((await c.getWallet({ organizationId: b.id, walletId: b.walletId })).wallet.exported, false);
    });

    it("neither database nor the log holds a mnemonic or an exported key; no import target (sealed key) is left", async () => {
      assert.ok(secrets.length > 20);
      const store = openStore({ dataDir: inst.dataDir, databaseUrl: inst.env.DATABASE_URL || undefined });
      try {
        assert.deepEqual(await store.db.selectFrom("import_targets").select("id").execute(), []);
      } finally {
        await store.close();
      }
      await assertSecretsNowhere(engine.name, inst, server.output(), secrets, "import_targets");
    });
  });
}
