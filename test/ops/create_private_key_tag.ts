import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, conflict, notFound, perEngine } from "../helpers/inproc.ts";
import { newPrivateKey } from "../helpers/keys-and-wallets.ts";

const OP = "create_private_key_tag";
const TYPE = "ACTIVITY_TYPE_CREATE_PRIVATE_KEY_TAG";

perEngine("create_private_key_tag", (h) => {
  it("creates a tag on keys; get_private_key lists it; a taken name is 409; an unknown or foreign key 404", async () => {
    const k = await newPrivateKey(h(), "CURVE_SECP256K1", []);
    const r = completed(
      await h().submit(OP, TYPE, { privateKeyTagName: "treasury", privateKeyIds: [k.privateKeyId, k.privateKeyId] }),
      "createPrivateKeyTagResult",
    );
    assert.deepEqual(r.privateKeyIds, [k.privateKeyId]);
    assert.deepEqual((await h().query("get_private_key", { privateKeyId: k.privateKeyId })).json.privateKey.privateKeyTags, [
      r.privateKeyTagId,
    ]);
    conflict(await h().submit(OP, TYPE, { privateKeyTagName: "treasury", privateKeyIds: [] }), /already exists/);
    notFound(
      await h().submit(OP, TYPE, { privateKeyTagName: "other", privateKeyIds: ["00000000-0000-4000-8000-000000000000"] }),
      /privateKeyIds\[0\]/,
    );
    const foreign = await h().newOrg("Foreign");
    notFound(await h().submit(OP, TYPE, { privateKeyTagName: "mine", privateKeyIds: [k.privateKeyId] }, { as: foreign }), /no private key/);
  });
});
