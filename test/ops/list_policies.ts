import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, onSqlite } from "../helpers/inproc.ts";
import { createPolicyV3 } from "../../src/activities/policies/create_policy.ts";

onSqlite("list_policies", (h) => {
  it("lists the organization's policies oldest first, and only its own", async () => {
    const org = await h().newOrg();
    assert.deepEqual((await h().query("list_policies", {}, { as: org })).json, { policies: [] });
    const created: string[] = [];
    for (const name of ["z", "a", "m"]) {
      created.push(
        completed(
          await h().submit(
            "create_policy",
            "ACTIVITY_TYPE_CREATE_POLICY_V3",
            { policyName: name, effect: "EFFECT_ALLOW", condition: "false", notes: "" },
            { as: org },
          ),
          createPolicyV3,
        ).policyId,
      );
    }
    const listed = (await h().query("list_policies", {}, { as: org })).json.policies;
    assert.deepEqual(
      listed.map((p: { policyId: string; policyName: string }) => [p.policyId, p.policyName]),
      [
        [created[0], "z"],
        [created[1], "a"],
        [created[2], "m"],
      ],
    );
    const rootIds = (await h().query("list_policies")).json.policies.map((p: { policyId: string }) => p.policyId);
    assert.ok(!created.some((id) => rootIds.includes(id)));
  });
});
