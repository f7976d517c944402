import { it } from "node:test";
import assert from "node:assert/strict";
import { invalidRequest, notFound, perEngine } from "../helpers/inproc.ts";
import { newPrivateKey } from "../helpers/keys-and-wallets.ts";

perEngine("get_private_key", (h) => {
  it("returns the key as the SDK reads it (v1PrivateKey), never the key itself", async () => {
    const k = await newPrivateKey(h(), "CURVE_SECP256K1", ["ADDRESS_FORMAT_ETHEREUM", "ADDRESS_FORMAT_UNCOMPRESSED"]);
    const res = await h().query("get_private_key", { privateKeyId: k.privateKeyId });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const { privateKey } = res.json;
    assert.deepEqual(Object.keys(privateKey).sort(), [
      "addresses",
      "createdAt",
      "curve",
      "exported",
      "imported",
      "privateKeyId",
      "privateKeyName",
      "privateKeyTags",
      "publicKey",
      "updatedAt",
    ]);
    assert.equal(privateKey.curve, "CURVE_SECP256K1");
    assert.match(privateKey.publicKey, /^0[23][0-9a-f]{64}$/);
    assert.deepEqual(privateKey.addresses, k.addresses);
    assert.deepEqual(privateKey.privateKeyTags, []);
    assert.equal(privateKey.exported, false);
    assert.ok(!JSON.stringify(res.json).includes("sgl1."));
    const sdk = (await (await h().sdk()).getPrivateKey({ privateKeyId: k.privateKeyId })).privateKey;
    assert.equal(sdk.addresses.find((a) => a.format === "ADDRESS_FORMAT_ETHEREUM")?.address, k.addresses[0]!.address);
  });

  it("an unknown key, or another organization's, is 404; a bad id 400", async () => {
    const k = await newPrivateKey(h(), "CURVE_ED25519", []);
    notFound(await h().query("get_private_key", { privateKeyId: "00000000-0000-4000-8000-000000000000" }), /no private key/);
    notFound(await h().query("get_private_key", { privateKeyId: k.privateKeyId }, { as: await h().newOrg("Nosy") }), /no private key/);
    invalidRequest(await h().query("get_private_key", { privateKeyId: "nope" }), /private key id/);
  });
});
