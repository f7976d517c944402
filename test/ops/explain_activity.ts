import { it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, completed, failsWith, invalidRequest, notFound, perEngine, type Json } from "../helpers/inproc.ts";

const OP = "explain_activity";
const TAG = "ACTIVITY_TYPE_CREATE_USER_TAG";

perEngine("explain_activity", (h) => {
  it("a refused activity: the policy's false conjunct, in words, with its UTF-16 span in today's text", async () => {
    const org = await h().newOrg();
    const [member] = await addUsersWithKeys(h(), 1, org);
    // A non-BMP character before the false part: spans are UTF-16 offsets.
    const condition = "activity.resource == 'USER' && '🔑' != '' && activity.action == 'DELETE'";
    const { policyId } = completed(
      await h().submit(
        "create_policy",
        "ACTIVITY_TYPE_CREATE_POLICY_V3",
        { policyName: "deletes only", effect: "EFFECT_ALLOW", condition, consensus: "approvers.count() >= 1", notes: "" },
        { as: org },
      ),
      "createPolicyResult",
    );
    const denied = failsWith(
      await h().submit("create_user_tag", TAG, { userTagName: "t", userIds: [] }, { as: member! }),
      403,
      7,
      "REQUEST_NOT_AUTHORIZED",
    );
    const activityId = (denied.details as Json[]).find((d) => d.activityId)!.activityId as string;

    const r = await h().query(OP, { activityId }, { as: org });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.activityId, activityId);
    assert.equal(r.json.type, TAG);
    assert.equal(r.json.status, "ACTIVITY_STATUS_FAILED");
    assert.equal(r.json.policiesShown, true);
    assert.equal(r.json.evaluations.length, 1);
    const [e] = r.json.evaluations as Json[];
    assert.equal(e!.outcome, "OUTCOME_DENY_IMPLICIT");
    assert.equal(e!.decidingPolicyId, null);
    const [p] = e!.policies as Json[];
    assert.equal(p!.policyId, policyId);
    assert.equal(p!.policyName, "deletes only");
    assert.equal(p!.outcome, "OUTCOME_DENY_IMPLICIT");
    assert.equal(p!.condition, condition);
    assert.equal(p!.changedSinceEvaluation, false);
    assert.equal(p!.explanation.field, "condition");
    assert.equal(p!.explanation.words, "activity.action was CREATE, not DELETE");
    const start = condition.indexOf("activity.action");
    assert.deepEqual(p!.explanation.spans, [{ start, end: condition.length }]);
    assert.equal(condition.slice(start, condition.length), "activity.action == 'DELETE'");
  });

  it("consensus not met: the consensus part, with the approvers as recorded; a policy edited since says so", async () => {
    const org = await h().newOrg();
    const [member] = await addUsersWithKeys(h(), 1, org);
    const { policyId } = completed(
      await h().submit(
        "create_policy",
        "ACTIVITY_TYPE_CREATE_POLICY_V3",
        {
          policyName: "two",
          effect: "EFFECT_ALLOW",
          condition: `activity.type == '${TAG}'`,
          consensus: "approvers.count() >= 2",
          notes: "",
        },
        { as: org },
      ),
      "createPolicyResult",
    );
    const res = await h().submit("create_user_tag", TAG, { userTagName: "t", userIds: [] }, { as: member! });
    assert.equal(res.json.activity.status, "ACTIVITY_STATUS_CONSENSUS_NEEDED", JSON.stringify(res.json));
    const activityId = res.json.activity.id as string;
    const r = await h().query(OP, { activityId }, { as: member! });
    const [p] = r.json.evaluations[0].policies as Json[];
    assert.equal(r.json.evaluations[0].outcome, "OUTCOME_REQUIRES_CONSENSUS");
    assert.equal(r.json.evaluations[0].decidingPolicyId, policyId);
    assert.equal(p!.explanation.field, "consensus");
    assert.equal(p!.explanation.words, "approvers.count() was 1, not >= 2");
    assert.deepEqual(p!.explanation.spans, [{ start: 0, end: "approvers.count() >= 2".length }]);
    completed(
      await h().submit(
        "update_policy",
        "ACTIVITY_TYPE_UPDATE_POLICY_V2",
        {
          policyId,
          policyName: "two",
          policyEffect: "EFFECT_ALLOW",
          policyCondition: `activity.type == '${TAG}'`,
          policyConsensus: "approvers.count() >= 3",
          policyNotes: "",
        },
        { as: org },
      ),
      "updatePolicyResultV2",
    );
    const again = (await h().query(OP, { activityId }, { as: org })).json.evaluations[0].policies[0];
    assert.equal(again.changedSinceEvaluation, true);
    assert.equal(again.consensus, "approvers.count() >= 3");
    assert.equal(again.explanation.words, "approvers.count() was 1, not >= 3");
  });

  it("an allowed activity: the deciding policy, no explanation for it", async () => {
    const org = await h().newOrg();
    const [member] = await addUsersWithKeys(h(), 1, org);
    const { policyId } = completed(
      await h().submit(
        "create_policy",
        "ACTIVITY_TYPE_CREATE_POLICY_V3",
        {
          policyName: "tags",
          effect: "EFFECT_ALLOW",
          condition: `activity.type == '${TAG}'`,
          consensus: "approvers.count() >= 1",
          notes: "",
        },
        { as: org },
      ),
      "createPolicyResult",
    );
    const activityId =
      completed(await h().submit("create_user_tag", TAG, { userTagName: "t", userIds: [] }, { as: member! }), "createUserTagResult") &&
      (await h().query("list_activities", { filterByType: [TAG] }, { as: org })).json.activities[0].id;
    const [e] = (await h().query(OP, { activityId }, { as: org })).json.evaluations as Json[];
    assert.equal(e!.outcome, "OUTCOME_ALLOW");
    assert.equal(e!.decidingPolicyId, policyId);
    assert.equal(e!.policies[0].explanation, undefined);
  });

  it("an unknown activity, or another organization's, is 404; a malformed id is 400", async () => {
    notFound(await h().query(OP, { activityId: "00000000-0000-4000-8000-000000000000" }), /no activity/);
    const mine = (await h().submit("create_user_tag", TAG, { userTagName: "x", userIds: [] })).json.activity.id;
    notFound(await h().query(OP, { activityId: mine }, { as: await h().newOrg() }));
    invalidRequest(await h().query(OP, { activityId: "a" }), /activity id/, ["activityId"]);
  });
});
