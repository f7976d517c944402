import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, invalidRequest, onSqlite, perEngine, stampedFrom, type Json } from "../helpers/inproc.ts";
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

// A page carries at most PAGE_BYTES of stored activity (docs/api.md §3.1): a vote keeps its
// request body, and a body may hold a megabyte.
perEngine("list_activities, large activities", (h) => {
  it("a page ends before the activity that would pass the byte budget, pages on with after and before, and reads every activity once", async () => {
    const org = await h().newOrg();
    const ids: string[] = [];
    // Bodies of 700 KB: two fit in a page of 2 MiB, three do not. The schema drops `pad`; the vote keeps it.
    const pad = "x".repeat(700_000);
    for (let i = 0; i < 5; i++) {
      const r = await stampedFrom(h(), "127.0.0.1", org, "/public/v1/submit/create_user_tag", {
        parameters: { userTagName: `big${i}`, userIds: [] },
        organizationId: org.organizationId,
        timestampMs: String(Date.now() + i),
        type: "ACTIVITY_TYPE_CREATE_USER_TAG",
        pad,
      });
      completed(r, createUserTag);
      assert.ok(String(r.json.activity.votes[0].message).length > 700_000, "the vote keeps the whole body");
      ids.push(r.json.activity.id as string);
    }
    const newest = [...ids].reverse();
    const list = async (paginationOptions: Json) => {
      const res = await h().query("list_activities", { paginationOptions }, { as: org });
      assert.equal(res.status, 200, JSON.stringify(res.json).slice(0, 300));
      return (res.json.activities as Json[]).map((a) => a.id as string);
    };
    const first = await list({ limit: "100" });
    assert.deepEqual(first, newest.slice(0, 2));
    const second = await list({ limit: "100", after: first[1] });
    assert.deepEqual(second, newest.slice(2, 4));
    assert.deepEqual(await list({ limit: "100", after: second[1] }), newest.slice(4));
    // Backwards from the oldest: the two nearest it.
    assert.deepEqual(await list({ limit: "100", before: newest[4] }), newest.slice(2, 4));
    // A limit below the budget still holds: one asked, one given.
    assert.deepEqual(await list({ limit: "1" }), newest.slice(0, 1));
  });
});
