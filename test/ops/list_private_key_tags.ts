import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, perEngine } from "../helpers/inproc.ts";

perEngine("list_private_key_tags", (h) => {
  it("lists the organization's private key tags (TAG_TYPE_PRIVATE_KEY)", async () => {
    const org = await h().newOrg("Tags");
    const t = completed(
      await h().submit(
        "create_private_key_tag",
        "ACTIVITY_TYPE_CREATE_PRIVATE_KEY_TAG",
        { privateKeyTagName: "cold", privateKeyIds: [] },
        { as: org },
      ),
      "createPrivateKeyTagResult",
    );
    const res = await h().query("list_private_key_tags", {}, { as: org });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.equal(res.json.privateKeyTags.length, 1);
    assert.equal(res.json.privateKeyTags[0].tagId, t.privateKeyTagId);
    assert.equal(res.json.privateKeyTags[0].tagName, "cold");
    assert.equal(res.json.privateKeyTags[0].tagType, "TAG_TYPE_PRIVATE_KEY");
    assert.deepEqual(
      (await h().query("list_private_key_tags", {})).json.privateKeyTags.filter((x: { tagId: string }) => x.tagId === t.privateKeyTagId),
      [],
    );
  });
});
