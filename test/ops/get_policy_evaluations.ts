import { it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, completed, failsWith, invalidRequest, notFound, onSqlite, type Json } from "../helpers/inproc.ts";

onSqlite("get_policy_evaluations", (h) => {
  it("a denied activity has one record: each policy's outcome, then the final outcome without policyId", async () => {
    const org = await h().newOrg();
    const [u] = await addUsersWithKeys(h(), 1, org);
    const { policyId } = completed(
      await h().submit(
        "create_policy",
        "ACTIVITY_TYPE_CREATE_POLICY_V3",
        { policyName: "no tags", effect: "EFFECT_DENY", condition: "activity.resource == 'USER'", notes: "" },
        { as: org },
      ),
      "createPolicyResult",
    );
    const denied = failsWith(
      await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "t", userIds: [] }, { as: u }),
      403,
      7,
      "REQUEST_NOT_AUTHORIZED",
    );
    const permission = (denied.details as Json[]).find((d) => d["@type"] === "type.googleapis.com/errors.v1.PolicyEnginePermissionError");
    assert.ok(permission, JSON.stringify(denied));
    const records = (await h().query("get_policy_evaluations", { activityId: permission.activityId }, { as: org })).json.policyEvaluations;
    assert.equal(records.length, 1);
    assert.equal(records[0].activityId, permission.activityId);
    const outcomes = records[0].policyEvaluations as [Json, Json];
    assert.equal(outcomes.length, 2);
    assert.equal(outcomes[0].policyId, policyId);
    assert.match(outcomes[0].outcome, /DENY/);
    assert.equal(outcomes[1].policyId, undefined);
    assert.match(outcomes[1].outcome, /DENY/);
  });

  it("an unknown activity, or another organization's, is 404; a malformed id is 400", async () => {
    notFound(await h().query("get_policy_evaluations", { activityId: "00000000-0000-4000-8000-000000000000" }), /no activity/);
    const mine = (await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "x", userIds: [] })).json.activity.id;
    notFound(await h().query("get_policy_evaluations", { activityId: mine }, { as: await h().newOrg() }));
    invalidRequest(await h().query("get_policy_evaluations", { activityId: "a" }), /activity id/, ["activityId"]);
  });
});
