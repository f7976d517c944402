// init_import_private_key (docs/export-import.md §3): a signed import target the SDK's
// encryptPrivateKeyToBundle accepts; separate from the user's wallet import target.
import { it } from "node:test";
import assert from "node:assert/strict";
import { encryptPrivateKeyToBundle } from "@turnkey/crypto";
import { notFound, perEngine } from "../helpers/inproc.ts";
import { bundleSigner, initImport, initKeyImport } from "../helpers/keys-and-wallets.ts";

const OP = "init_import_private_key";
const TYPE = "ACTIVITY_TYPE_INIT_IMPORT_PRIVATE_KEY";

perEngine("init_import_private_key", (h) => {
  it("returns a bundle the SDK accepts; the user's wallet target is a different one", async () => {
    const { organizationId, userId } = h().root;
    const signer = await bundleSigner(h());
    const keyBundle = await initKeyImport(h());
    const walletBundle = await initImport(h());
    const targetOf = (b: string) => JSON.parse(Buffer.from(JSON.parse(b).data, "hex").toString("utf8")).targetPublic as string;
    assert.notEqual(targetOf(keyBundle), targetOf(walletBundle));
    const rows = await h()
      .service.store.db.selectFrom("import_targets")
      .select(["kind", "public_key"])
      .where("user_id", "=", userId)
      .orderBy("kind")
      .execute();
    assert.deepEqual(rows, [
      { kind: "PRIVATE_KEY", public_key: targetOf(keyBundle) },
      { kind: "WALLET", public_key: targetOf(walletBundle) },
    ]);
    const encrypted = await encryptPrivateKeyToBundle({
      privateKey: "11".repeat(32),
      keyFormat: "HEXADECIMAL",
      importBundle: keyBundle,
      userId,
      organizationId,
      dangerouslyOverrideSignerPublicKey: signer,
    });
    assert.ok(JSON.parse(encrypted).encappedPublic);
  });

  it("an unknown user → 404", async () => {
    notFound(await h().submit(OP, TYPE, { userId: "00000000-0000-4000-8000-000000000000" }), /no user/);
  });
});
