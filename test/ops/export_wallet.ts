// export_wallet (docs/export-import.md §2): the mnemonic, HPKE-encrypted to the caller's key and
// signed by the BUNDLE_SIGNER key, opened here by the SDK's own decryptExportBundle.
import { it } from "node:test";
import assert from "node:assert/strict";
import { decryptExportBundle, generateP256KeyPair } from "@turnkey/crypto";
import { addUsersWithKeys, completed, failsWith, forbidden, invalidRequest, notFound, perEngine } from "../helpers/inproc.ts";
import { ETH, bundleSigner, newWallet, openedMnemonic } from "../helpers/keys-and-wallets.ts";

const OP = "export_wallet";
const TYPE = "ACTIVITY_TYPE_EXPORT_WALLET";

perEngine("export_wallet", (h) => {
  it("exports the mnemonic to the target key (uncompressed or compressed); the wallet is marked exported", async () => {
    const { walletId } = await newWallet(h(), [ETH()]);
    const mnemonic = await openedMnemonic(h(), walletId);
    const signer = await bundleSigner(h());
    for (const form of ["publicKeyUncompressed", "publicKey"] as const) {
      const target = generateP256KeyPair();
      const res = await h().submit(OP, TYPE, { walletId, targetPublicKey: target[form] });
      const result = completed(res, "exportWalletResult");
      assert.equal(result.walletId, walletId);
      const bundle = JSON.parse(result.exportBundle as string);
      assert.deepEqual(Object.keys(bundle), ["version", "data", "dataSignature", "enclaveQuorumPublic"]);
      assert.equal(bundle.enclaveQuorumPublic, signer);
      const data = JSON.parse(Buffer.from(bundle.data, "hex").toString("utf8"));
      assert.deepEqual(Object.keys(data).sort(), ["ciphertext", "encappedPublic", "organizationId"]);
      const opened = await decryptExportBundle({
        exportBundle: result.exportBundle as string,
        embeddedKey: target.privateKey,
        organizationId: h().root.organizationId,
        returnMnemonic: true,
        dangerouslyOverrideSignerPublicKey: signer,
      });
      assert.equal(opened, mnemonic);
      // Another organization id in the check, or another key: refused by the SDK.
      await assert.rejects(
        decryptExportBundle({
          exportBundle: result.exportBundle as string,
          embeddedKey: target.privateKey,
          organizationId: "other",
          returnMnemonic: true,
          dangerouslyOverrideSignerPublicKey: signer,
        }),
        /organization id does not match/,
      );
      await assert.rejects(
        decryptExportBundle({
          exportBundle: result.exportBundle as string,
          embeddedKey: generateP256KeyPair().privateKey,
          organizationId: h().root.organizationId,
          returnMnemonic: true,
          dangerouslyOverrideSignerPublicKey: signer,
        }),
      );
      assert.ok(!JSON.stringify(res.json).includes(mnemonic));
    }
    const got = await h().query("get_wallet", { walletId });
    assert.equal(got.json.wallet.exported, true);
    assert.equal(got.json.wallet.imported, false);
  });

  it("bad target key → 400 naming it; unknown wallet → 404; another language → 400; nothing marked", async () => {
    const { walletId } = await newWallet(h(), []);
    const target = generateP256KeyPair().publicKeyUncompressed;
    for (const bad of ["", "04abcd", `04${"0".repeat(128)}`, `05${target.slice(2)}`, "zz"]) {
      invalidRequest(await h().submit(OP, TYPE, { walletId, targetPublicKey: bad }), /targetPublicKey/, ["parameters.targetPublicKey"]);
    }
    invalidRequest(
      await h().submit(OP, TYPE, { walletId, targetPublicKey: target, language: "MNEMONIC_LANGUAGE_FRENCH" }),
      /MNEMONIC_LANGUAGE_ENGLISH/,
      ["parameters.language"],
    );
    notFound(await h().submit(OP, TYPE, { walletId: "00000000-0000-4000-8000-000000000000", targetPublicKey: target }), /no wallet/);
    const got = await h().query("get_wallet", { walletId });
    assert.equal(got.json.wallet.exported, false);
  });

  it("another organization cannot export the wallet (404 in its own organization; its key is unknown to the owner's)", async () => {
    const { walletId } = await newWallet(h(), []);
    const other = await h().newOrg("export-other");
    const target = generateP256KeyPair().publicKeyUncompressed;
    notFound(await h().submit(OP, TYPE, { walletId, targetPublicKey: target }, { as: other }), /no wallet/);
    const res = await h().submit(OP, TYPE, { walletId, targetPublicKey: target }, { as: other, organizationId: h().root.organizationId });
    failsWith(res, 401, 16, "PUBLIC_KEY_NOT_FOUND");
  });
});

perEngine("export policies (resource WALLET, action EXPORT, the `wallet` keyword)", (h) => {
  it("an ALLOW on WALLET/EXPORT for one label lets a member export that wallet and its accounts, and nothing else", async () => {
    const org = await h().newOrg("Export policies");
    const [member] = await addUsersWithKeys(h(), 1, org);
    const policy = async (policyName: string, condition: string) =>
      completed(
        await h().submit(
          "create_policy",
          "ACTIVITY_TYPE_CREATE_POLICY_V3",
          { policyName, effect: "EFFECT_ALLOW", condition, consensus: "", notes: "" },
          { as: org },
        ),
        "createPolicyResult",
      );
    const wallet = async (walletName: string) =>
      completed(
        await h().submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName, accounts: [ETH()] }, { as: org }),
        "createWalletResult",
      ) as { walletId: string; addresses: string[] };
    const open = await wallet("exportable");
    const shut = await wallet("kept");
    const target = generateP256KeyPair().publicKey;
    forbidden(await h().submit(OP, TYPE, { walletId: open.walletId, targetPublicKey: target }, { as: member! }));
    await policy(
      "export exportable",
      "activity.resource == 'WALLET' && activity.action == 'EXPORT' && wallet.label == 'exportable' && !wallet.imported",
    );
    completed(await h().submit(OP, TYPE, { walletId: open.walletId, targetPublicKey: target }, { as: member! }), "exportWalletResult");
    forbidden(await h().submit(OP, TYPE, { walletId: shut.walletId, targetPublicKey: target }, { as: member! }));
    // export_wallet_account binds `wallet` to the wallet holding the account.
    completed(
      await h().submit(
        "export_wallet_account",
        "ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT",
        { address: open.addresses[0], targetPublicKey: target },
        { as: member! },
      ),
      "exportWalletAccountResult",
    );
    forbidden(
      await h().submit(
        "export_wallet_account",
        "ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT",
        { address: shut.addresses[0], targetPublicKey: target },
        { as: member! },
      ),
    );
    // `wallet.exported` reads the flag an export sets: once the root user exported "kept", the member may.
    await policy("re-export", "activity.resource == 'WALLET' && activity.action == 'EXPORT' && wallet.exported");
    forbidden(await h().submit(OP, TYPE, { walletId: shut.walletId, targetPublicKey: target }, { as: member! }));
    completed(await h().submit(OP, TYPE, { walletId: shut.walletId, targetPublicKey: target }, { as: org }), "exportWalletResult");
    completed(await h().submit(OP, TYPE, { walletId: shut.walletId, targetPublicKey: target }, { as: member! }), "exportWalletResult");
  });
});
