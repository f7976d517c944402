import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, invalidRequest, notFound, onSqlite } from "../helpers/inproc.ts";
import { createPolicyV3 } from "../../src/activities/policies/create_policy.ts";

onSqlite("get_policy", (h) => {
  it("answers the policy exactly as submitted; time only when set", async () => {
    const p = { policyName: "p", effect: "EFFECT_DENY", condition: "activity.action   == 'DELETE'", consensus: "", notes: "why" };
    const { policyId } = completed(await h().submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", p), createPolicyV3);
    const { policy } = (await h().query("get_policy", { policyId })).json;
    assert.deepEqual(
      { ...policy, createdAt: undefined, updatedAt: undefined },
      { policyId, ...p, createdAt: undefined, updatedAt: undefined },
    );
    assert.equal("time" in policy, false);
  });

  it("an unknown policy, or another organization's, is 404; a malformed id is 400", async () => {
    notFound(await h().query("get_policy", { policyId: "00000000-0000-4000-8000-000000000000" }), /no policy/);
    const { policyId } = completed(
      await h().submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", { policyName: "q", effect: "EFFECT_DENY", notes: "" }),
      createPolicyV3,
    );
    notFound(await h().query("get_policy", { policyId }, { as: await h().newOrg() }));
    invalidRequest(await h().query("get_policy", { policyId: "p" }), /policy id/, ["policyId"]);
  });
});
