import { it } from "node:test";
import assert from "node:assert/strict";
import { assertIdempotent, completed, invalidRequest, notFound, onSqlite } from "../helpers/inproc.ts";
import { createPolicyV3 } from "../../src/activities/policies/create_policy.ts";
import { deletePolicy } from "../../src/activities/policies/delete_policies.ts";

const OP = "delete_policy";
const TYPE = "ACTIVITY_TYPE_DELETE_POLICY";

onSqlite("delete_policy", (h) => {
  const create = async (policyName: string) =>
    completed(
      await h().submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", {
        policyName,
        effect: "EFFECT_DENY",
        condition: "false",
        notes: "",
      }),
      createPolicyV3,
    ).policyId as string;

  it("deletes a policy", async () => {
    const policyId = await create("gone");
    assert.deepEqual(completed(await h().submit(OP, TYPE, { policyId }), deletePolicy), { policyId });
    notFound(await h().query("get_policy", { policyId }));
  });

  it("the same body twice is one activity", async () => {
    await assertIdempotent(h(), OP, TYPE, { policyId: await create("idem") });
  });

  it("an unknown policy is 404; a malformed id is 400", async () => {
    notFound(await h().submit(OP, TYPE, { policyId: "00000000-0000-4000-8000-000000000000" }), /no policy/);
    invalidRequest(await h().submit(OP, TYPE, { policyId: "x" }), /policy id/, ["parameters.policyId"]);
  });

  it("another organization's policy is 404 there", async () => {
    const policyId = await create("theirs");
    notFound(await h().submit(OP, TYPE, { policyId }, { as: await h().newOrg() }));
    assert.equal((await h().query("get_policy", { policyId })).status, 200);
  });
});
