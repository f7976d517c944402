import { it } from "node:test";
import assert from "node:assert/strict";
import { assertIdempotent, completed, invalidRequest, notFound, onSqlite } from "../helpers/inproc.ts";
import { createUserTag } from "../../src/activities/users/create_user_tag.ts";
import { deleteUserTags } from "../../src/activities/users/delete_user_tags.ts";

const OP = "delete_user_tags";
const TYPE = "ACTIVITY_TYPE_DELETE_USER_TAGS";
const MISSING = "00000000-0000-4000-8000-000000000000";

onSqlite("delete_user_tags", (h) => {
  const tag = async (name: string, userIds: string[] = []) =>
    completed(await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: name, userIds }), createUserTag)
      .userTagId as string;

  it("deletes tags and names the users that carried them", async () => {
    const [a, b] = [await tag("a", [h().root.userId]), await tag("b")];
    const r = completed(await h().submit(OP, TYPE, { userTagIds: [a, b] }), deleteUserTags);
    assert.deepEqual(r, { userTagIds: [a, b], userIds: [h().root.userId] });
    const { user } = (await h().query("get_user", { userId: h().root.userId })).json;
    assert.ok(!user.userTags.includes(a));
    const names = (await h().query("list_user_tags")).json.userTags.map((t: { tagName: string }) => t.tagName);
    assert.ok(!names.includes("a") && !names.includes("b"));
  });

  it("the same body twice is one activity", async () => {
    await assertIdempotent(h(), OP, TYPE, { userTagIds: [await tag("idem")] });
  });

  it("one unknown tag fails the whole activity (404) and deletes nothing", async () => {
    const kept = await tag("kept");
    notFound(await h().submit(OP, TYPE, { userTagIds: [kept, MISSING] }), /no user tag/);
    assert.ok((await h().query("list_user_tags")).json.userTags.some((t: { tagId: string }) => t.tagId === kept));
  });

  for (const [what, userTagIds] of [
    ["no ids", []],
    ["more than 100 ids", Array.from({ length: 101 }, () => MISSING)],
  ] as const) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().submit(OP, TYPE, { userTagIds }), /userTagIds must hold 1 to 100/, ["parameters.userTagIds"]);
    });
  }
});
