import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, notFound, perEngine } from "../helpers/inproc.ts";
import { newPrivateKey } from "../helpers/keys-and-wallets.ts";

const OP = "delete_private_key_tags";
const TYPE = "ACTIVITY_TYPE_DELETE_PRIVATE_KEY_TAGS";

perEngine("delete_private_key_tags", (h) => {
  it("deletes tags and their memberships; the result names the keys that carried them; an unknown tag 404", async () => {
    const k = await newPrivateKey(h(), "CURVE_SECP256K1", []);
    const tag = completed(
      await h().submit("create_private_key_tag", "ACTIVITY_TYPE_CREATE_PRIVATE_KEY_TAG", {
        privateKeyTagName: `d-${Date.now()}`,
        privateKeyIds: [k.privateKeyId],
      }),
      "createPrivateKeyTagResult",
    );
    notFound(
      await h().submit(OP, TYPE, { privateKeyTagIds: [tag.privateKeyTagId, "00000000-0000-4000-8000-000000000000"] }),
      /no private key tag/,
    );
    const r = completed(await h().submit(OP, TYPE, { privateKeyTagIds: [tag.privateKeyTagId] }), "deletePrivateKeyTagsResult");
    assert.deepEqual(r, { privateKeyTagIds: [tag.privateKeyTagId], privateKeyIds: [k.privateKeyId] });
    assert.deepEqual((await h().query("get_private_key", { privateKeyId: k.privateKeyId })).json.privateKey.privateKeyTags, []);
  });
});
