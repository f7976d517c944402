import { it } from "node:test";
import assert from "node:assert/strict";
import { assertIdempotent, completed, exhausted, invalidRequest, onSqlite, perEngine, type Json } from "../helpers/inproc.ts";
import { createPolicies } from "../../src/activities/policies/create_policy.ts";

const OP = "create_policies";
const TYPE = "ACTIVITY_TYPE_CREATE_POLICIES";
const policy = (policyName: string, over: Json = {}): Json => ({
  policyName,
  effect: "EFFECT_DENY",
  condition: "activity.action == 'DELETE'",
  notes: "",
  ...over,
});
const names = async (h: () => import("../helpers/inproc.ts").Harness, as?: import("../helpers/inproc.ts").Creds) =>
  ((await h().query("list_policies", {}, { as })).json.policies as { policyName: string }[]).map((p) => p.policyName);

onSqlite("create_policies", (h) => {
  it("creates policies and answers their ids in input order", async () => {
    const { policyIds } = completed(await h().submit(OP, TYPE, { policies: [policy("b"), policy("a"), policy("c")] }), createPolicies);
    assert.equal(policyIds.length, 3);
    const got = await Promise.all(
      policyIds.map(async (policyId: string) => (await h().query("get_policy", { policyId })).json.policy.policyName),
    );
    assert.deepEqual(got, ["b", "a", "c"]);
  });

  it("the same body twice is one activity", async () => {
    await assertIdempotent(h(), OP, TYPE, { policies: [policy("idem")] });
  });

  it("one bad expression refuses all of them (400, naming the item) and creates none", async () => {
    invalidRequest(
      await h().submit(OP, TYPE, { policies: [policy("ok-1"), policy("bad", { consensus: "1 +" })] }),
      /invalid policy consensus/,
      ["parameters.policies[1].consensus"],
    );
    assert.ok(!(await names(h)).includes("ok-1"));
  });

  it("a name given twice refuses all of them (400)", async () => {
    invalidRequest(await h().submit(OP, TYPE, { policies: [policy("twice"), policy("twice")] }), /given twice/);
    assert.ok(!(await names(h)).includes("twice"));
  });

  for (const [what, policies] of [
    ["no policies", []],
    ["more than 100 policies", Array.from({ length: 101 }, (_, i) => policy(`p${i}`))],
  ] as const) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().submit(OP, TYPE, { policies }), /policies must hold 1 to 100/, ["parameters.policies"]);
    });
  }
});

perEngine("create_policies limits", (h) => {
  it("the 100-policy cap counts the whole batch: 60 + 41 is refused (429) and adds nothing", async () => {
    const org = await h().newOrg();
    completed(await h().submit(OP, TYPE, { policies: Array.from({ length: 60 }, (_, i) => policy(`a${i}`)) }, { as: org }), createPolicies);
    exhausted(await h().submit(OP, TYPE, { policies: Array.from({ length: 41 }, (_, i) => policy(`b${i}`)) }, { as: org }), /at most 100/);
    assert.equal((await names(h, org)).length, 60);
    completed(await h().submit(OP, TYPE, { policies: Array.from({ length: 40 }, (_, i) => policy(`c${i}`)) }, { as: org }), createPolicies);
  });
});
