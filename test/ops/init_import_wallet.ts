// init_import_wallet (docs/export-import.md §3): a signed import target the SDK's
// encryptWalletToBundle accepts; its private half sealed, one per user.
import { it } from "node:test";
import assert from "node:assert/strict";
import { encryptWalletToBundle } from "@turnkey/crypto";
import { notFound, perEngine } from "../helpers/inproc.ts";
import { bundleSigner, initImport } from "../helpers/keys-and-wallets.ts";

const OP = "init_import_wallet";
const TYPE = "ACTIVITY_TYPE_INIT_IMPORT_WALLET";

perEngine("init_import_wallet", (h) => {
  it("returns a bundle signed by BUNDLE_SIGNER naming the organization, user and target; a second init replaces the target", async () => {
    const signer = await bundleSigner(h());
    const { organizationId, userId } = h().root;
    const first = await initImport(h());
    const bundle = JSON.parse(first);
    assert.equal(bundle.enclaveQuorumPublic, signer);
    assert.equal(bundle.version, "v1.0.0");
    const data = JSON.parse(Buffer.from(bundle.data, "hex").toString("utf8"));
    assert.deepEqual({ organizationId: data.organizationId, userId: data.userId }, { organizationId, userId });
    assert.match(data.targetPublic, /^04[0-9a-f]{128}$/);
    // The SDK accepts it (signature, organization, user) and refuses it for another user or signer.
    const mnemonic = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about";
    const encrypted = await encryptWalletToBundle({
      mnemonic,
      importBundle: first,
      userId,
      organizationId,
      dangerouslyOverrideSignerPublicKey: signer,
    });
    assert.ok(JSON.parse(encrypted).ciphertext);
    await assert.rejects(
      encryptWalletToBundle({
        mnemonic,
        importBundle: first,
        userId: "someone",
        organizationId,
        dangerouslyOverrideSignerPublicKey: signer,
      }),
      /user id does not match/,
    );

    const rows = await h().service.store.db.selectFrom("import_targets").selectAll().where("user_id", "=", userId).execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.public_key, data.targetPublic);
    assert.match(rows[0]!.private_key_sealed, /^sgl1\./);

    const second = JSON.parse(await initImport(h()));
    const target2 = JSON.parse(Buffer.from(second.data, "hex").toString("utf8")).targetPublic;
    assert.notEqual(target2, data.targetPublic);
    const after = await h().service.store.db.selectFrom("import_targets").select("public_key").where("user_id", "=", userId).execute();
    assert.deepEqual(
      after.map((r) => r.public_key),
      [target2],
    );
  });

  it("an unknown user → 404, nothing recorded", async () => {
    const userId = "00000000-0000-4000-8000-000000000000";
    notFound(await h().submit(OP, TYPE, { userId }), /no user/);
    assert.equal((await h().service.store.db.selectFrom("import_targets").select("id").where("user_id", "=", userId).execute()).length, 0);
  });
});
