// export_private_key (docs/export-import.md §2): the key, HPKE-encrypted to the caller's key,
// opened by the SDK's decryptExportBundle; the key is marked exported; `private_key` binds it.
import { it } from "node:test";
import assert from "node:assert/strict";
import { decryptExportBundle, generateP256KeyPair } from "@turnkey/crypto";
import { addUsersWithKeys, completed, forbidden, invalidRequest, notFound, perEngine } from "../helpers/inproc.ts";
import { bundleSigner, newPrivateKey, openedPrivateKey } from "../helpers/keys-and-wallets.ts";

const OP = "export_private_key";
const TYPE = "ACTIVITY_TYPE_EXPORT_PRIVATE_KEY";

perEngine("export_private_key", (h) => {
  it("exports a secp256k1 and an ed25519 key (the SDK opens them: hex, and SOLANA's key pair); exported: true", async () => {
    const signer = await bundleSigner(h());
    const orgId = h().root.organizationId;
    const eth = await newPrivateKey(h(), "CURVE_SECP256K1", ["ADDRESS_FORMAT_ETHEREUM"]);
    const target = generateP256KeyPair();
    const res = await h().submit(OP, TYPE, { privateKeyId: eth.privateKeyId, targetPublicKey: target.publicKeyUncompressed });
    const result = completed(res, "exportPrivateKeyResult");
    assert.equal(result.privateKeyId, eth.privateKeyId);
    const hex = await decryptExportBundle({
      exportBundle: result.exportBundle as string,
      embeddedKey: target.privateKey,
      organizationId: orgId,
      returnMnemonic: false,
      dangerouslyOverrideSignerPublicKey: signer,
    });
    assert.equal(hex, Buffer.from(await openedPrivateKey(h(), eth.privateKeyId)).toString("hex"));
    assert.ok(!JSON.stringify(res.json).includes(hex));
    const got = await h().query("get_private_key", { privateKeyId: eth.privateKeyId });
    assert.equal(got.json.privateKey.exported, true);

    const sol = await newPrivateKey(h(), "CURVE_ED25519", ["ADDRESS_FORMAT_SOLANA"]);
    const solTarget = generateP256KeyPair();
    const solRes = completed(
      await h().submit(OP, TYPE, { privateKeyId: sol.privateKeyId, targetPublicKey: solTarget.publicKey }),
      "exportPrivateKeyResult",
    );
    const pair = await decryptExportBundle({
      exportBundle: solRes.exportBundle as string,
      embeddedKey: solTarget.privateKey,
      organizationId: orgId,
      returnMnemonic: false,
      keyFormat: "SOLANA",
      dangerouslyOverrideSignerPublicKey: signer,
    });
    assert.ok(pair.length > 80, "a base58 64-byte key pair");
    // A key exported may be deleted without deleteWithoutExport.
    completed(
      await h().submit("delete_private_keys", "ACTIVITY_TYPE_DELETE_PRIVATE_KEYS", { privateKeyIds: [eth.privateKeyId] }),
      "deletePrivateKeysResult",
    );
  });

  it("unknown key → 404; bad target → 400; another organization's key → 404; a policy on private_key.label governs", async () => {
    const key = await newPrivateKey(h(), "CURVE_SECP256K1", []);
    const target = generateP256KeyPair().publicKey;
    notFound(
      await h().submit(OP, TYPE, { privateKeyId: "00000000-0000-4000-8000-000000000000", targetPublicKey: target }),
      /no private key/,
    );
    invalidRequest(await h().submit(OP, TYPE, { privateKeyId: key.privateKeyId, targetPublicKey: "02ff" }), /targetPublicKey/, [
      "parameters.targetPublicKey",
    ]);
    const other = await h().newOrg("export-key-other");
    notFound(await h().submit(OP, TYPE, { privateKeyId: key.privateKeyId, targetPublicKey: target }, { as: other }), /no private key/);

    const [member] = await addUsersWithKeys(h(), 1, other);
    const open = await newPrivateKey(h(), "CURVE_SECP256K1", [], other);
    const shut = await newPrivateKey(h(), "CURVE_SECP256K1", [], other);
    const name = (await h().query("get_private_key", { privateKeyId: open.privateKeyId }, { as: other })).json.privateKey
      .privateKeyName as string;
    completed(
      await h().submit(
        "create_policy",
        "ACTIVITY_TYPE_CREATE_POLICY_V3",
        {
          policyName: "export one key",
          effect: "EFFECT_ALLOW",
          consensus: "",
          notes: "",
          condition: `activity.resource == 'PRIVATE_KEY' && activity.action == 'EXPORT' && private_key.label == '${name}'`,
        },
        { as: other },
      ),
      "createPolicyResult",
    );
    completed(
      await h().submit(OP, TYPE, { privateKeyId: open.privateKeyId, targetPublicKey: target }, { as: member! }),
      "exportPrivateKeyResult",
    );
    forbidden(await h().submit(OP, TYPE, { privateKeyId: shut.privateKeyId, targetPublicKey: target }, { as: member! }));
  });
});
