import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, onSqlite, type Json } from "../helpers/inproc.ts";
import { createPolicyV3 } from "../../src/activities/policies/create_policy.ts";
import { literalList } from "../helpers/policy-facts.ts";

const OP = "get_active_policies";
const policy = (time: string | undefined): Json => ({
  policyName: `p-${Math.random().toString(36).slice(2)}`,
  effect: "EFFECT_ALLOW",
  condition: "activity.resource == 'WALLET'",
  consensus: "approvers.count() >= 1",
  notes: "",
  ...(time === undefined ? {} : { time }),
});

onSqlite("get_active_policies", (h) => {
  it("the organization's time expressions share one evaluation budget (docs/policy-language.md §11.1): past it, inactive with the reason", async () => {
    const org = await h().newOrg("Heavy timed");
    // ~40,000 steps each (6,000 iterations): under the budget of one evaluation, 400,000 together.
    const time = `${literalList(100)}.all(a, ${literalList(60)}.all(b, time.now > Timestamp('2020-01-01T00:00:00Z')))`;
    const ids: string[] = [];
    for (let i = 0; i < 10; i++)
      ids.push(
        completed(await h().submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", policy(time), { as: org }), createPolicyV3).policyId,
      );
    const res = await h().query(OP, {}, { as: org });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const statuses = res.json.statuses as Json[];
    assert.equal(statuses[0]!.active, true);
    const cut = statuses.filter((s) => s.error !== undefined);
    assert.ok(cut.length >= 1 && cut.length < 10, JSON.stringify(statuses));
    for (const s of cut) {
      assert.equal(s.active, false);
      assert.match(s.error, /evaluation budget of the whole pass \(\d+ steps\) exceeded/);
    }
  });

  it("reports each policy: untimed always active, a window that holds, one that does not, one that errors", async () => {
    const org = await h().newOrg("Timed");
    const create = async (time?: string) =>
      completed(await h().submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", policy(time), { as: org }), createPolicyV3).policyId;
    const untimed = await create();
    const open = await create("time.now > Timestamp('2020-01-01T00:00:00Z')");
    const closed = await create("time.now < Timestamp('2020-01-01T00:00:00Z')");
    // A stored expression that no longer compiles (written straight to the store): it cannot be evaluated.
    const broken = await create("time.now > Timestamp('2020-01-01T00:00:00Z')");
    await h().service.store.db.updateTable("policies").set({ time: "time.now >" }).where("id", "=", broken).execute();

    const before = Date.now();
    const res = await h().query(OP, {}, { as: org });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const at = Number(res.json.evaluatedAtMs);
    assert.ok(at >= before && at <= Date.now(), "evaluatedAtMs is the server's clock, as a string");
    assert.equal(typeof res.json.evaluatedAtMs, "string");
    const byId = new Map((res.json.statuses as Json[]).map((s) => [s.policyId, s]));
    assert.equal(byId.size, 4);
    assert.deepEqual(byId.get(untimed), { organizationId: org.organizationId, policyId: untimed, active: true });
    assert.deepEqual(byId.get(open), {
      organizationId: org.organizationId,
      policyId: open,
      active: true,
      timeExpr: "time.now > Timestamp('2020-01-01T00:00:00Z')",
    });
    assert.equal(byId.get(closed)!.active, false);
    assert.equal(byId.get(closed)!.error, undefined);
    assert.equal(byId.get(broken)!.active, false);
    assert.match(byId.get(broken)!.error, /\S/, "an expression that cannot be evaluated is inactive, with the reason");
  });

  it("an organization without policies answers an empty list", async () => {
    const org = await h().newOrg("Empty");
    const res = await h().query(OP, {}, { as: org });
    assert.deepEqual(res.json.statuses, []);
  });

  it("another organization's policies are not listed, and its id answers 401 to an outsider", async () => {
    const a = await h().newOrg("A");
    const b = await h().newOrg("B");
    completed(await h().submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", policy(undefined), { as: a }), createPolicyV3);
    assert.deepEqual((await h().query(OP, {}, { as: b })).json.statuses, []);
    const cross = await h().query(OP, { organizationId: a.organizationId }, { as: b });
    assert.equal(cross.status, 401, JSON.stringify(cross.json));
  });
});
