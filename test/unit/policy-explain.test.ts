// The explainer (src/policy/explain.ts, docs/policy-dry-run.md §3): which part of a policy field
// was false, with its span, against hand-built facts.
import { it } from "node:test";
import assert from "node:assert/strict";
import { explainField, explainPolicy } from "../../src/policy/explain.ts";
import { meterOf } from "../../src/policy/index.ts";
import type { EvalEnv } from "../../src/policy/facts.ts";

const env = (type = "ACTIVITY_TYPE_CREATE_USERS_V4", over: Partial<EvalEnv> = {}): EvalEnv => ({
  activity: { type, kind: "CREATE_USERS", resource: "USER", action: "CREATE", params: { amount: 3n, names: ["a", "b"] } },
  approvers: [{ id: "u1", tags: ["t1"], email: "a@x.example", alias: "alice" }],
  credentials: [{ id: "c1", user_id: "u1", type: "CREDENTIAL_TYPE_API_KEY_P256", credential_id: "", public_key: "02ab" }],
  nowMs: Date.UTC(2026, 0, 1),
  ...over,
});
const slice = (src: string, s: { start: number; end: number }) => src.slice(s.start, s.end);

it("a && chain: the first false conjunct, with both values in words and its span", () => {
  const src = "activity.resource == 'USER' && activity.type == 'ACTIVITY_TYPE_CREATE_POLICY_V3' && activity.action == 'DELETE'";
  const e = explainField("condition", src, env())!;
  assert.equal(e.field, "condition");
  assert.equal(e.spans.length, 1);
  assert.equal(slice(src, e.spans[0]!), "activity.type == 'ACTIVITY_TYPE_CREATE_POLICY_V3'");
  assert.equal(e.words, "activity.type was ACTIVITY_TYPE_CREATE_USERS_V4, not ACTIVITY_TYPE_CREATE_POLICY_V3");
});

it("a true expression has no explanation", () => {
  assert.equal(explainField("condition", "activity.resource == 'USER'", env()), null);
  assert.equal(explainField("condition", "   ", env()), null);
});

it("a || chain: every operand, recursively into nested &&", () => {
  const src = "activity.action == 'DELETE' || (activity.resource == 'USER' && activity.params.amount > 5)";
  const e = explainField("condition", src, env())!;
  assert.deepEqual(
    e.spans.map((s) => slice(src, s)),
    ["activity.action == 'DELETE'", "activity.params.amount > 5"],
  );
  assert.match(e.words, /activity\.action was CREATE, not DELETE; activity\.params\.amount was 3, not > 5/);
});

it("a literal on the left: the fact side is named, the operator flipped", () => {
  const src = "5 < activity.params.amount";
  assert.equal(explainField("condition", src, env())!.words, "activity.params.amount was 3, not > 5");
});

it("positions are UTF-16 offsets (a non-BMP literal before the false part)", () => {
  const src = "'😀' != '' && activity.action == 'DELETE'";
  const e = explainField("condition", src, env())!;
  assert.equal(e.spans[0]!.start, src.indexOf("activity.action"));
  assert.equal(slice(src, e.spans[0]!), "activity.action == 'DELETE'");
});

it("a lambda is reported whole, with the element that failed", () => {
  const src = "approvers.count() >= 1 && approvers.all(u, u.tags.contains('admin'))";
  const e = explainField("consensus", src, env())!;
  assert.equal(slice(src, e.spans[0]!), "approvers.all(u, u.tags.contains('admin'))");
  assert.match(e.words, /element 1 of 1 \(user u1\).*u\.tags was \[t1\], without admin/);
  const any = explainField("consensus", "approvers.any(u, u.id == 'u9')", env())!;
  assert.match(any.words, /none of the 1 elements of approvers/);
});

it("in, !, and a bool field as wholes", () => {
  assert.match(
    explainField("condition", "activity.action in ['DELETE', 'UPDATE']", env())!.words,
    /activity\.action was CREATE, not one of \[DELETE, UPDATE\]/,
  );
  assert.match(explainField("condition", "!(activity.resource == 'USER')", env())!.words, /activity\.resource == 'USER' was true/);
});

it("a runtime error names the innermost failing part", () => {
  const src = "activity.resource == 'USER' && activity.params.missing == 'x'";
  const e = explainPolicy({ effect: "EFFECT_ALLOW", condition: src, consensus: "" }, "OUTCOME_ERROR", env())!;
  assert.equal(slice(src, e.spans[0]!), "activity.params.missing");
  assert.match(e.words, /failed: activity\.params has no field 'missing'/);
});

it("explainPolicy: condition first, then consensus; nothing for a match", () => {
  const p = { effect: "EFFECT_ALLOW", condition: "activity.resource == 'USER'", consensus: "approvers.count() >= 2" };
  const e = explainPolicy(p, "OUTCOME_REQUIRES_CONSENSUS", env())!;
  assert.equal(e.field, "consensus");
  assert.equal(e.words, "approvers.count() was 1, not >= 2");
  assert.equal(explainPolicy(p, "OUTCOME_ALLOW", env()), undefined);
  const off = explainPolicy({ ...p, condition: "activity.resource == 'WALLET'" }, "OUTCOME_DENY_IMPLICIT", env())!;
  assert.equal(off.field, "condition");
});

it("bounded by the step budget: a budget too small says so instead of explaining", () => {
  const fine = explainField("condition", "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, a == 0))", env());
  assert.ok(fine);
  const e = explainField("condition", "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, a == 0))", env(), meterOf(20))!;
  assert.match(e.words, /not explained: evaluation budget of 20 steps exceeded/);
});
