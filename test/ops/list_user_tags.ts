import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, onSqlite } from "../helpers/inproc.ts";
import { createUserTag } from "../../src/activities/users/create_user_tag.ts";

onSqlite("list_user_tags", (h) => {
  it("lists the organization's tags oldest first, as TAG_TYPE_USER", async () => {
    const org = await h().newOrg();
    assert.deepEqual((await h().query("list_user_tags", {}, { as: org })).json, { userTags: [] });
    const ids: string[] = [];
    for (const name of ["b", "a"]) {
      ids.push(
        completed(
          await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: name, userIds: [] }, { as: org }),
          createUserTag,
        ).userTagId,
      );
    }
    const tags = (await h().query("list_user_tags", {}, { as: org })).json.userTags;
    assert.deepEqual(
      tags.map((t: { tagId: string; tagName: string; tagType: string }) => [t.tagId, t.tagName, t.tagType]),
      [
        [ids[0], "b", "TAG_TYPE_USER"],
        [ids[1], "a", "TAG_TYPE_USER"],
      ],
    );
    assert.deepEqual(
      (await h().query("list_user_tags")).json.userTags.filter((t: { tagId: string }) => ids.includes(t.tagId)),
      [],
    );
  });
});
