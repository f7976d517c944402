import { it } from "node:test";
import assert from "node:assert/strict";
import { assertIdempotent, completed, invalidRequest, notFound, onSqlite } from "../helpers/inproc.ts";
import { deletePoliciesActivity } from "../../src/activities/policies/delete_policies.ts";

const OP = "delete_policies";
const TYPE = "ACTIVITY_TYPE_DELETE_POLICIES";
const MISSING = "00000000-0000-4000-8000-000000000000";

onSqlite("delete_policies", (h) => {
  const create = async (n: number, prefix: string) =>
    completed(
      await h().submit("create_policies", "ACTIVITY_TYPE_CREATE_POLICIES", {
        policies: Array.from({ length: n }, (_, i) => ({
          policyName: `${prefix}${i}`,
          effect: "EFFECT_DENY",
          condition: "false",
          notes: "",
        })),
      }),
      "createPoliciesResult",
    ).policyIds as string[];

  it("deletes several policies; duplicate ids are collapsed", async () => {
    const ids = await create(2, "d");
    assert.deepEqual(completed(await h().submit(OP, TYPE, { policyIds: [...ids, ids[0]] }), deletePoliciesActivity), { policyIds: ids });
    for (const policyId of ids) notFound(await h().query("get_policy", { policyId }));
  });

  it("the same body twice is one activity", async () => {
    await assertIdempotent(h(), OP, TYPE, { policyIds: await create(1, "idem") });
  });

  it("one unknown id fails the whole activity (404) and deletes nothing", async () => {
    const [kept] = await create(1, "kept");
    notFound(await h().submit(OP, TYPE, { policyIds: [kept, MISSING] }), new RegExp(MISSING));
    assert.equal((await h().query("get_policy", { policyId: kept })).status, 200);
  });

  for (const [what, policyIds] of [
    ["no ids", []],
    ["more than 100 ids", Array.from({ length: 101 }, () => MISSING)],
  ] as const) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().submit(OP, TYPE, { policyIds }), /policyIds must hold 1 to 100/, ["parameters.policyIds"]);
    });
  }
});
