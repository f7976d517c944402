import { it } from "node:test";
import assert from "node:assert/strict";
import { invalidRequest, perEngine, type Json } from "../helpers/inproc.ts";
import { literalList, nestedAll } from "../helpers/policy-facts.ts";
import { compiledCacheSize } from "../../src/policy/index.ts";

const OP = "check_policy";

perEngine("check_policy", (h) => {
  it("a valid policy: no errors, each expression's worst-case iterations", async () => {
    const r = await h().query(OP, {
      effect: "EFFECT_ALLOW",
      condition: "activity.resource == 'USER'",
      consensus: `approvers.any(u, ${literalList(10)}.contains(1))`,
    });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual(r.json, { valid: true, errors: [], iterations: { condition: 0, consensus: 1100 } });
  });

  it("a syntax error: field, line, column and UTF-16 offset of where it is", async () => {
    // Line 2, after a non-BMP character: the column counts code points, the offset UTF-16 units.
    const condition = "activity.resource == '😀' &&\n  activity.type ==";
    const r = await h().query(OP, { condition });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.valid, false);
    const [e] = r.json.errors as Json[];
    assert.equal(r.json.errors.length, 1);
    assert.equal(e!.field, "condition");
    assert.equal(e!.line, 2);
    assert.equal(e!.offset, condition.length);
    assert.equal(e!.column, 19);
    assert.match(e!.message, /expected|end/i);
  });

  it("a type error in consensus: the position of the offending operand", async () => {
    const consensus = "approvers.count() >= 'two'";
    const r = await h().query(OP, { effect: "EFFECT_ALLOW", consensus });
    const [e] = r.json.errors as Json[];
    assert.equal(r.json.valid, false);
    assert.equal(e!.field, "consensus");
    assert.equal(e!.line, 1);
    assert.ok(e!.offset >= 0 && e!.offset < consensus.length, JSON.stringify(e));
    assert.equal(e!.column, e!.offset + 1);
    assert.match(e!.message, /int|string|compare/i);
  });

  it("the static cost bound as create_policy applies it (SIGIL_POLICY_MAX_ITERATIONS)", async () => {
    const r = await h().query(OP, { condition: nestedAll(100, 4) });
    const [e] = r.json.errors as Json[];
    assert.equal(r.json.valid, false);
    assert.match(e!.message, /up to 101010100 lambda iterations .*the bound is 100000/);
    // At the bound: accepted, as create_policy accepts it.
    const at = await h().query(OP, { condition: `${literalList(100)}.all(a, ${literalList(999)}.all(b, true))` });
    assert.deepEqual(at.json, { valid: true, errors: [], iterations: { condition: 100_000 } });
  });

  it("several errors at once, an unknown effect among them; an expression over 8192 characters is reported", async () => {
    const r = await h().query(OP, { effect: "EFFECT_MAYBE", condition: "true ".repeat(2000), consensus: "approvers.any(" });
    assert.deepEqual(
      (r.json.errors as Json[]).map((e) => e.field),
      ["effect", "condition", "consensus"],
    );
    assert.match(r.json.errors[1].message, /too long/);
  });

  it("drafts stay out of the shared compile cache: an editor's every pause is a new text", async () => {
    const before = compiledCacheSize();
    for (let i = 0; i < 20; i++) {
      const r = await h().query(OP, {
        condition: `activity.resource == 'DRAFT_${i}_${Date.now()}'`,
        consensus: `approvers.count() >= ${i + 1}`,
      });
      assert.equal(r.json.valid, true, JSON.stringify(r.json));
    }
    assert.equal(compiledCacheSize(), before);
  });

  it("refuses a malformed request (400)", async () => {
    invalidRequest(await h().query(OP, { condition: 5 }), undefined, ["condition"]);
    invalidRequest(await h().query(OP, { condition: "x".repeat(16_385) }), /16384/);
  });
});
