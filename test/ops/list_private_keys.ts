import { it } from "node:test";
import assert from "node:assert/strict";
import { perEngine } from "../helpers/inproc.ts";
import { newPrivateKey } from "../helpers/keys-and-wallets.ts";

perEngine("list_private_keys", (h) => {
  it("lists the organization's keys oldest first, and no other organization's", async () => {
    const org = await h().newOrg("Keys");
    const a = await newPrivateKey(h(), "CURVE_SECP256K1", ["ADDRESS_FORMAT_ETHEREUM"], org);
    const b = await newPrivateKey(h(), "CURVE_ED25519", ["ADDRESS_FORMAT_SOLANA"], org);
    await newPrivateKey(h(), "CURVE_SECP256K1", []);
    const res = await h().query("list_private_keys", {}, { as: org });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.deepEqual(
      res.json.privateKeys.map((k: { privateKeyId: string }) => k.privateKeyId),
      [a.privateKeyId, b.privateKeyId],
    );
    assert.deepEqual(res.json.privateKeys[1].addresses, b.addresses);
    const sdk = await (await h().sdk(org)).getPrivateKeys({});
    assert.equal(sdk.privateKeys.length, 2);
  });
});
