import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, invalidRequest, onSqlite, type Json } from "../helpers/inproc.ts";
import { createUserTag } from "../../src/activities/users/create_user_tag.ts";

onSqlite("list_activities", (h) => {
  const ids: string[] = [];
  const list = async (body: Json) => {
    const res = await h().query("list_activities", body, { as: org });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    return (res.json.activities as Json[]).map((a) => a.id as string);
  };
  let org: import("../helpers/inproc.ts").Creds;

  it("lists newest first, filters by type and status, pages with before/after", async () => {
    org = await h().newOrg();
    for (let i = 0; i < 3; i++) {
      const r = await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: `t${i}`, userIds: [] }, { as: org });
      completed(r, createUserTag);
      ids.push(r.json.activity.id);
    }
    const failed = await h().submit("delete_users", "ACTIVITY_TYPE_DELETE_USERS", { userIds: [org.userId] }, { as: org });
    assert.equal(failed.status, 400);
    const newest = [...ids].reverse();
    assert.deepEqual(await list({}), newest);
    assert.deepEqual(await list({ filterByType: ["ACTIVITY_TYPE_CREATE_USER_TAG"] }), newest);
    assert.deepEqual(await list({ filterByType: ["ACTIVITY_TYPE_CREATE_USERS_V4"] }), []);
    assert.deepEqual(await list({ filterByStatus: ["ACTIVITY_STATUS_COMPLETED"] }), newest);
    assert.deepEqual(await list({ filterByStatus: ["ACTIVITY_STATUS_CONSENSUS_NEEDED"] }), []);
    assert.deepEqual(await list({ paginationOptions: { limit: "2" } }), newest.slice(0, 2));
    assert.deepEqual(await list({ paginationOptions: { limit: "2", after: newest[1] } }), newest.slice(2));
    assert.deepEqual(await list({ paginationOptions: { before: newest[2] } }), newest.slice(0, 2));
  });

  const refused: [string, Json, string][] = [
    ["an unknown status", { filterByStatus: ["DONE"] }, "filterByStatus[0]"],
    ["a malformed type", { filterByType: ["create_users"] }, "filterByType[0]"],
    ["a limit of 0", { paginationOptions: { limit: "0" } }, "paginationOptions.limit"],
    ["a limit of 101", { paginationOptions: { limit: "101" } }, "paginationOptions.limit"],
    ["before and after together", { paginationOptions: { before: "a", after: "b" } }, "paginationOptions"],
    ["an unknown cursor", { paginationOptions: { after: "00000000-0000-4000-8000-000000000000" } }, "paginationOptions"],
  ];
  for (const [what, body, field] of refused) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().query("list_activities", body), undefined, [field]);
    });
  }
});
