import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, conflict, notFound, perEngine } from "../helpers/inproc.ts";
import { newPrivateKey } from "../helpers/keys-and-wallets.ts";

const OP = "update_private_key_tag";
const TYPE = "ACTIVITY_TYPE_UPDATE_PRIVATE_KEY_TAG";

perEngine("update_private_key_tag", (h) => {
  it("renames, adds and removes keys; a taken name 409; an unknown tag 404", async () => {
    const a = await newPrivateKey(h(), "CURVE_SECP256K1", []);
    const b = await newPrivateKey(h(), "CURVE_ED25519", []);
    const tag = completed(
      await h().submit("create_private_key_tag", "ACTIVITY_TYPE_CREATE_PRIVATE_KEY_TAG", {
        privateKeyTagName: "t1",
        privateKeyIds: [a.privateKeyId],
      }),
      "createPrivateKeyTagResult",
    );
    completed(
      await h().submit("create_private_key_tag", "ACTIVITY_TYPE_CREATE_PRIVATE_KEY_TAG", { privateKeyTagName: "taken", privateKeyIds: [] }),
      "createPrivateKeyTagResult",
    );
    const r = completed(
      await h().submit(OP, TYPE, {
        privateKeyTagId: tag.privateKeyTagId,
        newPrivateKeyTagName: "t2",
        addPrivateKeyIds: [b.privateKeyId, a.privateKeyId],
        removePrivateKeyIds: [a.privateKeyId],
      }),
      "updatePrivateKeyTagResult",
    );
    assert.equal(r.privateKeyTagId, tag.privateKeyTagId);
    const tags = (await h().query("list_private_key_tags", {})).json.privateKeyTags;
    assert.equal(tags.find((t: { tagId: string }) => t.tagId === tag.privateKeyTagId).tagName, "t2");
    assert.deepEqual((await h().query("get_private_key", { privateKeyId: b.privateKeyId })).json.privateKey.privateKeyTags, [
      tag.privateKeyTagId,
    ]);
    // Removal and addition of one key in one request: it ends up tagged (added after removal).
    assert.deepEqual((await h().query("get_private_key", { privateKeyId: a.privateKeyId })).json.privateKey.privateKeyTags, [
      tag.privateKeyTagId,
    ]);
    conflict(
      await h().submit(OP, TYPE, {
        privateKeyTagId: tag.privateKeyTagId,
        newPrivateKeyTagName: "taken",
        addPrivateKeyIds: [],
        removePrivateKeyIds: [],
      }),
      /already exists/,
    );
    notFound(
      await h().submit(OP, TYPE, {
        privateKeyTagId: "00000000-0000-4000-8000-000000000000",
        addPrivateKeyIds: [],
        removePrivateKeyIds: [],
      }),
      /no private key tag/,
    );
  });
});
