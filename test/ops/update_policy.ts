import { it } from "node:test";
import assert from "node:assert/strict";
import { assertIdempotent, completed, invalidRequest, notFound, onSqlite, perEngine, type Json } from "../helpers/inproc.ts";
import { updatePolicyV2 } from "../../src/activities/policies/update_policy.ts";
import { nestedAll } from "../helpers/policy-facts.ts";

const OP = "update_policy";
const TYPE = "ACTIVITY_TYPE_UPDATE_POLICY_V2";
const MISSING = "00000000-0000-4000-8000-000000000000";

const setup =
  (h: () => import("../helpers/inproc.ts").Harness) =>
  async (name: string, over: Json = {}) =>
    completed(
      await h().submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", {
        policyName: name,
        effect: "EFFECT_ALLOW",
        condition: "activity.resource == 'USER'",
        consensus: "approvers.count() >= 1",
        notes: "n",
        ...over,
      }),
      "createPolicyResult",
    ).policyId as string;

onSqlite("update_policy", (h) => {
  const create = setup(h);
  const get = async (policyId: string) => (await h().query("get_policy", { policyId })).json.policy;

  it("changes the given fields and keeps the absent ones", async () => {
    const policyId = await create("before");
    const res = await h().submit(OP, TYPE, {
      policyId,
      policyName: "after",
      policyEffect: "EFFECT_DENY",
      policyCondition: "activity.action == 'DELETE'",
    });
    assert.deepEqual(completed(res, updatePolicyV2), { policyId });
    const p = await get(policyId);
    assert.equal(p.policyName, "after");
    assert.equal(p.effect, "EFFECT_DENY");
    assert.equal(p.condition, "activity.action == 'DELETE'");
    assert.equal(p.consensus, "approvers.count() >= 1");
    assert.equal(p.notes, "n");
  });

  it('"" clears an expression', async () => {
    const policyId = await create("clear");
    completed(await h().submit(OP, TYPE, { policyId, policyConsensus: "" }), updatePolicyV2);
    assert.equal((await get(policyId)).consensus, "");
  });

  it("a condition past the static cost bound leaves the policy as it was", async () => {
    const policyId = await create("bounded");
    invalidRequest(await h().submit(OP, TYPE, { policyId, policyCondition: nestedAll(100, 3) }), /the bound is 100000/, [
      "parameters.policyCondition",
    ]);
    assert.equal((await get(policyId)).condition, "activity.resource == 'USER'");
  });

  it("the same body twice is one activity", async () => {
    await assertIdempotent(h(), OP, TYPE, { policyId: await create("idem"), policyNotes: "again" });
  });

  it("an unknown policy is 404", async () => {
    notFound(await h().submit(OP, TYPE, { policyId: MISSING, policyNotes: "x" }), /no policy/);
  });

  const refused: [string, Json, RegExp, string][] = [
    [
      "a condition that does not type-check",
      { policyCondition: "activity.type > 1" },
      /invalid policy condition/,
      "parameters.policyCondition",
    ],
    ["a consensus that does not parse", { policyConsensus: "approvers.any(" }, /invalid policy consensus/, "parameters.policyConsensus"],
    ["a bad time expression", { time: "Timestamp('x')" }, /invalid policy time/, "parameters.time"],
    [
      "a condition past the static cost bound (docs/policy-language.md §11.3)",
      { policyCondition: nestedAll(100, 4) },
      /invalid policy condition: .*the bound is 100000 \(SIGIL_POLICY_MAX_ITERATIONS/,
      "parameters.policyCondition",
    ],
    ["an unknown effect", { policyEffect: "ALLOW" }, /EFFECT_ALLOW or EFFECT_DENY/, "parameters.policyEffect"],
    ["a malformed policy id", { policyId: "p1" }, /policy id/, "parameters.policyId"],
  ];
  for (const [what, params, message, field] of refused) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().submit(OP, TYPE, { policyId: MISSING, ...params }), message, [field]);
    });
  }
});

perEngine("update_policy uniqueness", (h) => {
  it("renaming onto another policy's name is refused (400) and changes nothing", async () => {
    const create = setup(h);
    await create("taken");
    const policyId = await create("mine");
    invalidRequest(await h().submit(OP, TYPE, { policyId, policyName: "taken" }), /policy label must be unique/);
    assert.equal((await h().query("get_policy", { policyId })).json.policy.policyName, "mine");
  });
});
