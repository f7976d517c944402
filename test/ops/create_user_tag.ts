import { it } from "node:test";
import assert from "node:assert/strict";
import { assertIdempotent, completed, conflict, invalidRequest, notFound, onSqlite, perEngine, UUID } from "../helpers/inproc.ts";
import { createUserTag } from "../../src/activities/users/create_user_tag.ts";

const OP = "create_user_tag";
const TYPE = "ACTIVITY_TYPE_CREATE_USER_TAG";
const MISSING = "00000000-0000-4000-8000-000000000000";

onSqlite("create_user_tag", (h) => {
  it("creates a tag and applies it to users (duplicates collapsed)", async () => {
    const res = await h().submit(OP, TYPE, { userTagName: "admins", userIds: [h().root.userId, h().root.userId] });
    const r = completed(res, createUserTag);
    assert.match(r.userTagId, UUID);
    assert.deepEqual(r.userIds, [h().root.userId]);
    const { user } = (await h().query("get_user", { userId: h().root.userId })).json;
    assert.ok(user.userTags.includes(r.userTagId));
    const tags = (await h().query("list_user_tags")).json.userTags;
    assert.ok(tags.some((t: { tagId: string; tagName: string }) => t.tagId === r.userTagId && t.tagName === "admins"));
  });

  it("the same body twice is one tag", async () => {
    await assertIdempotent(h(), OP, TYPE, { userTagName: "idem", userIds: [] });
  });

  it("an unknown user is 404 and no tag is created", async () => {
    notFound(await h().submit(OP, TYPE, { userTagName: "ghost", userIds: [MISSING] }), /no user/);
    const tags = (await h().query("list_user_tags")).json.userTags;
    assert.ok(!tags.some((t: { tagName: string }) => t.tagName === "ghost"));
  });

  for (const [what, params, field] of [
    ["a blank name", { userTagName: " ", userIds: [] }, "parameters.userTagName"],
    ["a missing userIds", { userTagName: "x" }, "parameters.userIds"],
    ["more than 100 users", { userTagName: "x", userIds: Array.from({ length: 101 }, () => MISSING) }, "parameters.userIds"],
  ] as const) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().submit(OP, TYPE, params), undefined, [field]);
    });
  }
});

perEngine("create_user_tag uniqueness", (h) => {
  it("a tag name is unique per organization (409); another organization may reuse it", async () => {
    completed(await h().submit(OP, TYPE, { userTagName: "ops", userIds: [] }), createUserTag);
    conflict(await h().submit(OP, TYPE, { userTagName: "ops", userIds: [] }), /already exists/);
    completed(await h().submit(OP, TYPE, { userTagName: "ops", userIds: [] }, { as: await h().newOrg() }), createUserTag);
  });

  it("the same body submitted 8 times concurrently is one activity and one tag", async () => {
    const timestampMs = String(Date.now());
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => h().submit(OP, TYPE, { userTagName: "raced", userIds: [] }, { timestampMs })),
    );
    assert.deepEqual(
      answers.map((r) => r.status),
      Array(8).fill(200),
    );
    assert.equal(new Set(answers.map((r) => r.json.activity.id)).size, 1);
    const tags = (await h().query("list_user_tags")).json.userTags.filter((t: { tagName: string }) => t.tagName === "raced");
    assert.equal(tags.length, 1);
  });
});
