// import_wallet (docs/export-import.md §3): a mnemonic encrypted by the SDK's
// encryptWalletToBundle to the user's init_import_wallet target becomes a wallet (imported:
// true) with the known addresses; a target is used once; nothing secret is kept.
import { it } from "node:test";
import assert from "node:assert/strict";
import { encryptWalletToBundle, generateP256KeyPair } from "@turnkey/crypto";
import { completed, conflict, invalidRequest, notFound, perEngine, type Harness } from "../helpers/inproc.ts";
import { ETH, SOL, bundleSigner, initImport, openedMnemonic } from "../helpers/keys-and-wallets.ts";

const OP = "import_wallet";
const TYPE = "ACTIVITY_TYPE_IMPORT_WALLET";
/** The BIP-39 test mnemonic and its first Ethereum account (m/44'/60'/0'/0/0). */
export const TEST_MNEMONIC = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about";
export const TEST_ADDRESS = "0x9858EfFD232B4033E47d90003D41EC34EcaEda94";

let n = 0;
async function encrypted(h: Harness, mnemonic: string, importBundle: string): Promise<string> {
  const { organizationId, userId } = h.root;
  return encryptWalletToBundle({
    mnemonic,
    importBundle,
    userId,
    organizationId,
    dangerouslyOverrideSignerPublicKey: await bundleSigner(h),
  });
}

perEngine("import_wallet", (h) => {
  it("imports the test mnemonic: the known address, imported: true; the same bundle twice is refused", async () => {
    const { userId } = h().root;
    const encryptedBundle = await encrypted(h(), TEST_MNEMONIC, await initImport(h()));
    const res = await h().submit(OP, TYPE, { userId, walletName: `imported-${n++}`, encryptedBundle, accounts: [ETH(), SOL()] });
    const { walletId, addresses } = completed(res, "importWalletResult");
    assert.equal(addresses[0], TEST_ADDRESS);
    assert.equal(addresses.length, 2);
    assert.equal(await openedMnemonic(h(), walletId), TEST_MNEMONIC);
    const wallet = (await h().query("get_wallet", { walletId })).json.wallet;
    assert.equal(wallet.imported, true);
    assert.equal(wallet.exported, false);
    // The target is gone: the same bundle again (a replay) is refused.
    notFound(
      await h().submit(OP, TYPE, { userId, walletName: `imported-${n++}`, encryptedBundle, accounts: [] }),
      /no pending import.*init_import_wallet/,
    );
    assert.equal((await h().service.store.db.selectFrom("import_targets").select("id").where("user_id", "=", userId).execute()).length, 0);
    assert.ok(!JSON.stringify(res.json).includes("abandon"));
  });

  it("a bundle for an earlier target, garbage, or no mnemonic → 400 and the target stays for a good bundle", async () => {
    const { userId } = h().root;
    const old = await initImport(h());
    const stale = await encrypted(h(), TEST_MNEMONIC, old);
    const current = await initImport(h());
    invalidRequest(
      await h().submit(OP, TYPE, { userId, walletName: `x-${n++}`, encryptedBundle: stale, accounts: [] }),
      /could not be decrypted/,
      ["parameters.encryptedBundle"],
    );
    invalidRequest(await h().submit(OP, TYPE, { userId, walletName: `x-${n++}`, encryptedBundle: "not json", accounts: [] }), /JSON text/, [
      "parameters.encryptedBundle",
    ]);
    const words = "correct horse battery staple is not a mnemonic";
    const res = await h().submit(OP, TYPE, {
      userId,
      walletName: `x-${n++}`,
      encryptedBundle: await encrypted(h(), words, current),
      accounts: [],
    });
    invalidRequest(res, /not a valid English BIP-39 mnemonic/, ["parameters.encryptedBundle"]);
    assert.ok(!JSON.stringify(res.json).includes("horse"));
    // A wallet name already taken: 409, and the target is still there for the retry.
    const taken = `taken-${n++}`;
    completed(await h().submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName: taken, accounts: [] }), "createWalletResult");
    const good = await encrypted(h(), TEST_MNEMONIC, current);
    conflict(await h().submit(OP, TYPE, { userId, walletName: taken, encryptedBundle: good, accounts: [] }), /already exists/);
    const ok = completed(
      await h().submit(OP, TYPE, { userId, walletName: `ok-${n++}`, encryptedBundle: good, accounts: [ETH()] }),
      "importWalletResult",
    );
    assert.deepEqual(ok.addresses, [TEST_ADDRESS]);
  });

  it("two concurrent imports of one bundle: exactly one wallet, the other finds no pending import", async () => {
    const { userId } = h().root;
    const encryptedBundle = await encrypted(h(), TEST_MNEMONIC, await initImport(h()));
    const results = await Promise.all(
      [0, 1, 2].map((i) => h().submit(OP, TYPE, { userId, walletName: `race-${n}-${i}`, encryptedBundle, accounts: [ETH()] })),
    );
    n++;
    const done = results.filter((r) => r.status === 200 && r.json.activity?.status === "ACTIVITY_STATUS_COMPLETED");
    assert.equal(done.length, 1, JSON.stringify(results.map((r) => [r.status, r.json.message])));
    for (const r of results.filter((x) => !done.includes(x))) notFound(r, /no pending import/);
  });

  it("no init for the user → 404; an unknown user → 404; an expired target → 400", async () => {
    const other = await h().newOrg("import-other");
    const target = generateP256KeyPair();
    const fake = JSON.stringify({ encappedPublic: target.publicKeyUncompressed, ciphertext: "00".repeat(40) });
    notFound(
      await h().submit(OP, TYPE, { userId: other.userId, walletName: "w", encryptedBundle: fake, accounts: [] }, { as: other }),
      /no pending import/,
    );
    notFound(
      await h().submit(OP, TYPE, { userId: "00000000-0000-4000-8000-000000000000", walletName: "w", encryptedBundle: fake, accounts: [] }),
      /no user/,
    );
    const { userId } = h().root;
    const bundle = await encrypted(h(), TEST_MNEMONIC, await initImport(h()));
    await h()
      .service.store.db.updateTable("import_targets")
      .set({ expires_at: Date.now() - 1 })
      .where("user_id", "=", userId)
      .execute();
    invalidRequest(await h().submit(OP, TYPE, { userId, walletName: `exp-${n++}`, encryptedBundle: bundle, accounts: [] }), /expired/, [
      "parameters.encryptedBundle",
    ]);
  });
});
