import { it } from "node:test";
import assert from "node:assert/strict";
import {
  addUsersWithKeys,
  assertIdempotent,
  completed,
  conflict,
  invalidRequest,
  notFound,
  onSqlite,
  perEngine,
} from "../helpers/inproc.ts";
import { createUserTag } from "../../src/activities/users/create_user_tag.ts";
import { updateUserTag } from "../../src/activities/users/update_user_tag.ts";

const OP = "update_user_tag";
const TYPE = "ACTIVITY_TYPE_UPDATE_USER_TAG";
const MISSING = "00000000-0000-4000-8000-000000000000";

onSqlite("update_user_tag", (h) => {
  const tagged = async (userId: string) => (await h().query("get_user", { userId })).json.user.userTags as string[];
  const newTag = async (name: string, userIds: string[] = []) =>
    completed(await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: name, userIds }), createUserTag)
      .userTagId;

  it("renames a tag, adds it to users and removes it from others", async () => {
    const [a, b] = await addUsersWithKeys(h(), 2);
    const tag = await newTag("before", [a!.userId]);
    const r = completed(
      await h().submit(OP, TYPE, {
        userTagId: tag,
        newUserTagName: "after",
        addUserIds: [b!.userId, b!.userId],
        removeUserIds: [a!.userId],
      }),
      updateUserTag,
    );
    assert.equal(r.userTagId, tag);
    assert.ok(!(await tagged(a!.userId)).includes(tag));
    assert.ok((await tagged(b!.userId)).includes(tag));
    const tags = (await h().query("list_user_tags")).json.userTags as { tagId: string; tagName: string }[];
    assert.equal(tags.find((t) => t.tagId === tag)?.tagName, "after");
  });

  it("adding a user who already carries the tag, or removing one who does not, changes nothing", async () => {
    const [a] = await addUsersWithKeys(h(), 1);
    const tag = await newTag("steady", [a!.userId]);
    completed(await h().submit(OP, TYPE, { userTagId: tag, addUserIds: [a!.userId], removeUserIds: [MISSING] }), updateUserTag);
    assert.ok((await tagged(a!.userId)).includes(tag));
    const tags = (await h().query("list_user_tags")).json.userTags as { tagId: string; tagName: string }[];
    assert.equal(tags.find((t) => t.tagId === tag)?.tagName, "steady", "no new name: the name stays");
  });

  it("the same body twice is one activity", async () => {
    const tag = await newTag("idem-update");
    await assertIdempotent(h(), OP, TYPE, { userTagId: tag, newUserTagName: "idem-updated", addUserIds: [], removeUserIds: [] });
  });

  it("an unknown tag, or adding an unknown user, is 404 and changes nothing", async () => {
    notFound(await h().submit(OP, TYPE, { userTagId: MISSING, addUserIds: [], removeUserIds: [] }), /no user tag/);
    const tag = await newTag("kept");
    notFound(
      await h().submit(OP, TYPE, { userTagId: tag, newUserTagName: "renamed-not", addUserIds: [MISSING], removeUserIds: [] }),
      /addUserIds: no user/,
    );
    const tags = (await h().query("list_user_tags")).json.userTags as { tagId: string; tagName: string }[];
    assert.equal(tags.find((t) => t.tagId === tag)?.tagName, "kept");
  });

  it("a tag of another organization is 404", async () => {
    const other = await h().newOrg();
    const theirs = completed(
      await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "theirs", userIds: [] }, { as: other }),
      createUserTag,
    ).userTagId;
    notFound(await h().submit(OP, TYPE, { userTagId: theirs, newUserTagName: "mine", addUserIds: [], removeUserIds: [] }), /no user tag/);
  });

  for (const [what, params, field] of [
    ["a blank new name", { userTagId: MISSING, newUserTagName: " ", addUserIds: [], removeUserIds: [] }, "parameters.newUserTagName"],
    ["a missing removeUserIds", { userTagId: MISSING, addUserIds: [] }, "parameters.removeUserIds"],
    ["a malformed tag id", { userTagId: "tag", addUserIds: [], removeUserIds: [] }, "parameters.userTagId"],
    [
      "more than 100 users to add",
      { userTagId: MISSING, addUserIds: Array.from({ length: 101 }, () => MISSING), removeUserIds: [] },
      "parameters.addUserIds",
    ],
  ] as const) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().submit(OP, TYPE, params), undefined, [field]);
    });
  }
});

perEngine("update_user_tag concurrency", (h) => {
  it("a rename to a taken name is 409", async () => {
    await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "taken", userIds: [] });
    const tag = completed(
      await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "free", userIds: [] }),
      createUserTag,
    ).userTagId;
    conflict(await h().submit(OP, TYPE, { userTagId: tag, newUserTagName: "taken", addUserIds: [], removeUserIds: [] }), /already exists/);
  });

  it("8 concurrent updates adding the same users all complete, and each user carries the tag once", async () => {
    const users = await addUsersWithKeys(h(), 3);
    const tag = completed(
      await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "raced-add", userIds: [] }),
      createUserTag,
    ).userTagId;
    const ids = users.map((u) => u.userId);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        h().submit(OP, TYPE, { userTagId: tag, newUserTagName: `raced-add-${i}`, addUserIds: ids, removeUserIds: [] }),
      ),
    );
    for (const a of answers) completed(a, updateUserTag);
    const members = await h().service.store.db.selectFrom("user_tag_members").select("user_id").where("tag_id", "=", tag).execute();
    assert.deepEqual(members.map((m) => m.user_id).sort(), [...ids].sort());
  });
});
