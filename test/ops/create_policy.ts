import { it } from "node:test";
import assert from "node:assert/strict";
import { assertIdempotent, completed, exhausted, invalidRequest, onSqlite, perEngine, UUID, type Json } from "../helpers/inproc.ts";
import { createPolicies, createPolicyV3 } from "../../src/activities/policies/create_policy.ts";
import { literalList, nestedAll } from "../helpers/policy-facts.ts";

const OP = "create_policy";
const TYPE = "ACTIVITY_TYPE_CREATE_POLICY_V3";
const policy = (over: Json = {}): Json => ({
  policyName: `p-${Math.random().toString(36).slice(2)}`,
  effect: "EFFECT_ALLOW",
  condition: "activity.resource == 'USER'",
  consensus: "approvers.count() >= 1",
  notes: "",
  ...over,
});

onSqlite("create_policy", (h) => {
  it("creates a policy; get_policy answers its expressions exactly as submitted", async () => {
    const p = policy({
      condition: "activity.type ==   'ACTIVITY_TYPE_CREATE_USERS_V4'",
      time: "time.now > Timestamp('2020-01-01T00:00:00Z')",
      notes: "n",
    });
    const { policyId } = completed(await h().submit(OP, TYPE, p), createPolicyV3);
    assert.match(policyId, UUID);
    const got = (await h().query("get_policy", { policyId })).json.policy;
    assert.equal(got.policyName, p.policyName);
    assert.equal(got.effect, "EFFECT_ALLOW");
    assert.equal(got.condition, p.condition);
    assert.equal(got.consensus, p.consensus);
    assert.equal(got.notes, "n");
  });

  it("accepts a policy at the static cost bound (docs/policy-language.md §11.3)", async () => {
    // 100 + 100 × 999 = 100,000 iterations.
    completed(
      await h().submit(OP, TYPE, policy({ condition: `${literalList(100)}.all(a, ${literalList(999)}.all(b, true))` })),
      createPolicyV3,
    );
  });

  it("the same body twice is one policy", async () => {
    await assertIdempotent(h(), OP, TYPE, policy());
  });

  const refused: [string, Json, RegExp, string][] = [
    [
      "a condition that does not type-check",
      policy({ condition: "activity.type == 1" }),
      /invalid policy condition: condition:1:\d+:/,
      "parameters.condition",
    ],
    [
      "a consensus that does not parse",
      policy({ consensus: "approvers.any(" }),
      /invalid policy consensus: consensus:1:\d+:/,
      "parameters.consensus",
    ],
    ["a time expression that does not parse", policy({ time: "time.now >" }), /invalid policy time/, "parameters.time"],
    [
      "a condition keyword (wallet) in consensus",
      policy({ consensus: "wallet.id == 'x'" }),
      /invalid policy consensus: .*condition keyword/,
      "parameters.consensus",
    ],
    ["an unknown effect", policy({ effect: "EFFECT_MAYBE" }), /EFFECT_ALLOW or EFFECT_DENY/, "parameters.effect"],
    ["a blank name", policy({ policyName: " " }), /policyName/, "parameters.policyName"],
    ["missing notes", { ...policy(), notes: undefined }, /must be set/, "parameters.notes"],
    ["notes over 4096 characters", policy({ notes: "x".repeat(4097) }), /notes must be at most 4096/, "parameters.notes"],
    ["an expression over 8192 characters", policy({ condition: "true ".repeat(2000) }), /at most 8192/, "parameters.condition"],
    // docs/policy-language.md §11.3: the reported 1.3 KB policy of 10^8 iterations, and a consensus past the bound.
    [
      "a condition past the static cost bound",
      policy({ condition: nestedAll(100, 4) }),
      /invalid policy condition: condition:1:\d+: the expression may take up to 101010100 lambda iterations .*the bound is 100000 \(SIGIL_POLICY_MAX_ITERATIONS/,
      "parameters.condition",
    ],
    [
      "a consensus past the static cost bound",
      policy({ consensus: `approvers.all(u, ${literalList(1000)}.all(x, true))` }),
      /invalid policy consensus: .*up to 100100 .*the bound is 100000/,
      "parameters.consensus",
    ],
  ];
  for (const [what, params, message, field] of refused) {
    it(`refuses ${what} (400, naming the field)`, async () => {
      invalidRequest(await h().submit(OP, TYPE, params), message, [field]);
    });
  }
});

perEngine("create_policy limits", (h) => {
  it("a policy name is unique per organization (400)", async () => {
    completed(await h().submit(OP, TYPE, policy({ policyName: "same" })), createPolicyV3);
    invalidRequest(await h().submit(OP, TYPE, policy({ policyName: "same" })), /policy label must be unique/);
  });

  it("an organization holds at most 100 policies (429)", async () => {
    const org = await h().newOrg();
    completed(
      await h().submit(
        "create_policies",
        "ACTIVITY_TYPE_CREATE_POLICIES",
        { policies: Array.from({ length: 100 }, () => policy()) },
        { as: org },
      ),
      createPolicies,
    );
    exhausted(await h().submit(OP, TYPE, policy(), { as: org }), /at most 100/);
  });
});
