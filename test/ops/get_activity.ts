import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, failsWith, invalidRequest, notFound, onSqlite, UUID } from "../helpers/inproc.ts";
import { createUserTag } from "../../src/activities/users/create_user_tag.ts";

onSqlite("get_activity", (h) => {
  it("answers the activity as submit answered it, with its votes and timestamps", async () => {
    const submitted = await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "t", userIds: [] });
    completed(submitted, createUserTag);
    const res = await h().query("get_activity", { activityId: submitted.json.activity.id });
    assert.equal(res.status, 200);
    const a = res.json.activity;
    assert.deepEqual(a, submitted.json.activity);
    assert.equal(a.organizationId, h().root.organizationId);
    assert.equal(a.type, "ACTIVITY_TYPE_CREATE_USER_TAG");
    assert.deepEqual(a.intent, { createUserTagIntent: { userTagName: "t", userIds: [] } });
    assert.match(a.createdAt, /^\d{13}$/);
    assert.equal(a.votes.length, 1);
    assert.equal(a.votes[0].userId, h().root.userId);
    assert.equal(a.votes[0].selection, "VOTE_SELECTION_APPROVED");
    assert.match(a.votes[0].id, UUID);
    assert.equal(a.canApprove, false);
  });

  it("an unknown activity, or another organization's, is 404; a malformed id is 400", async () => {
    const mine = (await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "u", userIds: [] })).json.activity.id;
    notFound(await h().query("get_activity", { activityId: "00000000-0000-4000-8000-000000000000" }), /no activity/);
    notFound(await h().query("get_activity", { activityId: mine }, { as: await h().newOrg() }));
    invalidRequest(await h().query("get_activity", { activityId: "x" }), /activity id/, ["activityId"]);
    invalidRequest(await h().query("get_activity", {}), /must be set/, ["activityId"]);
  });

  it("a sibling organization's credential is not found there (401)", async () => {
    const other = await h().newOrg();
    failsWith(
      await h().query(
        "get_activity",
        { activityId: "00000000-0000-4000-8000-000000000000" },
        { as: other, organizationId: h().root.organizationId },
      ),
      401,
      16,
      "PUBLIC_KEY_NOT_FOUND",
    );
  });
});
