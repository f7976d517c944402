// § alone in this file: docs/policy-language.md
// §11: the evaluation budget (per evaluation and per pass), the refusal of an activity whose
// policies could not all be evaluated, and the static cost bound on submitted expressions.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  compileExpression,
  compileSubmitted,
  evaluationLimits,
  meterOf,
  PassBudget,
  PolicyCompileError,
  PolicyRuntimeError,
  setEvaluationLimits,
  type ActivityFacts,
  type EvalEnv,
} from "../../src/policy/index.ts";
import { decide, evaluatePolicy, mayVote, policySet, type CompiledPolicy, type DecisionInput } from "../../src/policy/engine.ts";
import { DEFAULT_LIMITS } from "../../src/policy/budget.ts";
import { act, apiKey, literalList, ms, nestedAll, policy, user } from "../helpers/policy-facts.ts";

const NOW = ms("2026-03-02T15:00:00Z");
const ROOT = user("r1-0000-4000-8000-000000000001");
const ALICE = user("a1-0000-4000-8000-000000000001");

const list = literalList;
const nested = (n: number, depth: number): string => nestedAll(n, depth);
/** The defect as reported: four levels over 100 items (1.3 KB), ~5 s of CPU before the budget. */
const FOUR_LEVELS = nested(100, 4);

function input(policies: readonly CompiledPolicy[], over: Partial<DecisionInput> = {}): [ReturnType<typeof policySet>, DecisionInput] {
  return [
    policySet(policies),
    {
      activity: act("CREATE_USERS_V4"),
      rootOnly: false,
      quorum: { userIds: new Set([ROOT.id]), threshold: 1 },
      approvers: [ALICE],
      credentials: [apiKey(ALICE)],
      rejection: false,
      implicitlyAllowed: false,
      nowMs: NOW,
      ...over,
    },
  ];
}

function runtimeError(fn: () => unknown): PolicyRuntimeError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof PolicyRuntimeError, String(err));
    return err;
  }
  assert.fail("expected a PolicyRuntimeError");
}

describe("§11.1 the evaluation budget", () => {
  it("stops an evaluation past its steps with BudgetExceeded, naming the budget", () => {
    const e = compileExpression("condition", FOUR_LEVELS)!;
    const started = process.hrtime.bigint();
    const err = runtimeError(() => e.evaluate({}, meterOf(50_000)));
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
    assert.equal(err.kind, "BudgetExceeded");
    assert.equal(err.message, "evaluation budget of 50000 steps exceeded");
    // 10^8 iterations unbounded (seconds); cut after 50,000 steps. Generous for a loaded machine.
    assert.ok(elapsedMs < 500, `took ${elapsedMs} ms`);
  });

  it("without a meter an evaluation gets SIGIL_POLICY_MAX_STEPS of its own", () => {
    const e = compileExpression("condition", FOUR_LEVELS)!;
    const err = runtimeError(() => e.evaluate({}));
    assert.equal(err.message, `evaluation budget of ${evaluationLimits().steps} steps exceeded`);
  });

  it("charges each lambda iteration by the nodes of its predicate, and membership by the elements scanned", () => {
    const cheap = compileExpression("condition", `${list(100)}.all(a, true)`)!;
    const m1 = meterOf(10_000);
    assert.equal(cheap.evaluate({}, m1), true);
    const fat = compileExpression("condition", `${list(100)}.all(a, a == 1 || a == 2 || a == 3)`)!;
    const m2 = meterOf(10_000);
    assert.equal(fat.evaluate({}, m2), false);
    assert.ok(10_000 - m2.left > 3 * (10_000 - m1.left), `fat ${10_000 - m2.left}, cheap ${10_000 - m1.left}`);
    const scan = compileExpression("condition", `1000 in ${list(1000)}`)!;
    const m3 = meterOf(10_000);
    scan.evaluate({}, m3);
    assert.ok(10_000 - m3.left >= 1000, `membership of 1000 elements cost ${10_000 - m3.left}`);
  });

  it("data-sized lists are charged as they are: a list of activity.params too long for the budget is an error", () => {
    const e = compileExpression("condition", "activity.params.user_ids.all(u, activity.params.user_ids.all(v, u != v || true))")!;
    const env = (n: number): EvalEnv => ({ activity: act("DELETE_USERS", { user_ids: Array.from({ length: n }, (_, i) => `u${i}`) }) });
    assert.equal(e.evaluate(env(10), meterOf(100_000)), true);
    assert.equal(runtimeError(() => e.evaluate(env(2000), meterOf(100_000))).kind, "BudgetExceeded");
  });

  it("a long string indexed in a lambda is charged by its length", () => {
    const e = compileExpression("condition", `${list(500)}.all(a, '${"😀".repeat(1000)}'[999] == 'x')`)!;
    assert.equal(runtimeError(() => e.evaluate({}, meterOf(100_000))).kind, "BudgetExceeded");
    const plain = compileExpression("condition", `${list(10)}.all(a, '${"😀".repeat(1000)}'[999] == '😀')`)!;
    assert.equal(plain.evaluate({}, meterOf(100_000)), true);
  });

  it("a pass shares one total: evaluations each under their own budget cannot add up", () => {
    const e = compileExpression("condition", nested(100, 2))!; // ~30,000 steps
    const pass = new PassBudget(50_000, 100_000);
    const results = Array.from({ length: 5 }, () => {
      try {
        return pass.run((m) => e.evaluate({}, m));
      } catch (err) {
        return (err as Error).message;
      }
    });
    assert.deepEqual(results.slice(0, 3), [true, true, true]);
    assert.equal(results[3], "evaluation budget of the whole pass (100000 steps) exceeded");
    assert.equal(results[4], "evaluation budget of the whole pass (100000 steps) exceeded");
  });
});

describe("§11.2 an activity whose policies cannot all be evaluated is refused", () => {
  const nasty = (effect: "ALLOW" | "DENY", id: string) => policy(effect, "", FOUR_LEVELS, "", id);
  const allowAll = policy("ALLOW", "", "true", "", "allow-all");

  it("an ALLOW over budget is OUTCOME_ERROR with the reason, and allows nothing", () => {
    const started = process.hrtime.bigint();
    const d = decide(...input([nasty("ALLOW", "nasty")]));
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
    assert.equal(d.outcome, "OUTCOME_DENY_IMPLICIT");
    assert.equal(d.policies[0]!.outcome, "OUTCOME_ERROR");
    assert.equal(d.policies[0]!.error, `condition: evaluation budget of ${DEFAULT_LIMITS.steps} steps exceeded`);
    assert.match(d.reason, /policy nasty could not be evaluated \(condition: evaluation budget of \d+ steps exceeded\)/);
    assert.ok(elapsedMs < 1000, `took ${elapsedMs} ms`);
  });

  it("a DENY over budget does not fail open: another policy's ALLOW does not carry the activity", () => {
    const d = decide(...input([allowAll, nasty("DENY", "guard")]));
    assert.deepEqual(
      d.policies.map((p) => p.outcome),
      ["OUTCOME_ALLOW", "OUTCOME_ERROR"],
    );
    assert.equal(d.outcome, "OUTCOME_DENY_IMPLICIT");
  });

  it("signing data that makes a DENY run out of budget refuses the activity (the data is the attacker's)", () => {
    const guard = policy(
      "DENY",
      "",
      "eth.tx.authorization_list.any(a, eth.tx.authorization_list.any(b, a.address == b.address && a.nonce != b.nonce))",
      "",
      "guard",
    );
    const signing = (n: number): ActivityFacts => ({
      ...act("SIGN_TRANSACTION_V2"),
      signing: {
        eth: { tx: { authorization_list: Array.from({ length: n }, (_, i) => ({ address: `0x${i}`, chain_id: 1n, nonce: BigInt(i) })) } },
      },
    });
    assert.equal(decide(...input([allowAll, guard], { activity: signing(3) })).outcome, "OUTCOME_ALLOW");
    const d = decide(...input([allowAll, guard], { activity: signing(3000) }));
    assert.equal(d.policies[1]!.outcome, "OUTCOME_ERROR");
    assert.equal(d.outcome, "OUTCOME_DENY_IMPLICIT");
  });

  it("the root quorum still decides: met, it allows; pending, the activity waits for it", () => {
    assert.equal(decide(...input([nasty("ALLOW", "n")], { approvers: [ROOT], credentials: [apiKey(ROOT)] })).outcome, "OUTCOME_ALLOW");
    const R2 = user("r2-0000-4000-8000-000000000002");
    const pending = decide(
      ...input([nasty("ALLOW", "n")], {
        quorum: { userIds: new Set([ROOT.id, R2.id]), threshold: 2 },
        approvers: [ROOT],
        credentials: [apiKey(ROOT)],
      }),
    );
    assert.equal(pending.outcome, "OUTCOME_REQUIRES_CONSENSUS");
  });

  it("an implicit permission does not outweigh a policy cut short", () => {
    assert.equal(decide(...input([nasty("DENY", "n")], { implicitlyAllowed: true })).outcome, "OUTCOME_DENY_IMPLICIT");
  });

  it("the 100 policies of an organization share the pass budget: later ones error once it is spent", () => {
    // Each ~30,000 steps: under SIGIL_POLICY_MAX_STEPS alone, 3,000,000 together.
    const heavy = Array.from({ length: 100 }, (_, i) => policy("ALLOW", "", `${nested(100, 2)} && activity.type == 'X${i}'`, "", `p${i}`));
    const started = process.hrtime.bigint();
    const d = decide(...input(heavy));
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
    const errors = d.policies.filter((p) => p.outcome === "OUTCOME_ERROR");
    assert.ok(errors.length > 50, `${errors.length} errors`);
    assert.equal(errors[0]!.error, `condition: evaluation budget of the whole pass (${DEFAULT_LIMITS.passSteps} steps) exceeded`);
    assert.equal(d.outcome, "OUTCOME_DENY_IMPLICIT");
    assert.ok(elapsedMs < 1000, `took ${elapsedMs} ms`);
  });

  it("evaluatePolicy: the three fields of a policy share one meter", () => {
    const p = policy("ALLOW", nested(100, 2).replace("true", "approvers.count() >= 1"), nested(100, 2), "");
    const o = evaluatePolicy(
      p,
      { activity: act("CREATE_USERS_V4"), approvers: [ALICE], credentials: [apiKey(ALICE)], nowMs: NOW },
      meterOf(40_000),
    );
    assert.equal(o.outcome, "OUTCOME_ERROR");
    assert.match(o.error!, /^consensus: evaluation budget of 40000 steps exceeded$/);
  });

  it("voter eligibility counts a policy cut short as not applicable", () => {
    const inConsensus = policy("ALLOW", `approvers.any(u, u.id == '${ALICE.id}')`, FOUR_LEVELS, "");
    assert.equal(
      mayVote(policySet([inConsensus]), ALICE, {
        quorum: { userIds: new Set([ROOT.id]), threshold: 1 },
        initiatorId: ROOT.id,
        activity: act("CREATE_USERS_V4"),
        rootOnly: false,
        nowMs: NOW,
      }),
      false,
    );
  });
});

describe("§11.3 the static cost bound on submitted expressions", () => {
  const refused = (source: string, field: "condition" | "consensus" | "time" = "condition"): PolicyCompileError => {
    try {
      compileSubmitted(field, source);
    } catch (err) {
      assert.ok(err instanceof PolicyCompileError, String(err));
      return err;
    }
    assert.fail(`accepted: ${source.slice(0, 80)}`);
  };
  const accepted = (source: string, field: "condition" | "consensus" = "condition") => assert.ok(compileSubmitted(field, source));

  it("refuses the reported policy, naming the bound and the knob", () => {
    const err = refused(FOUR_LEVELS);
    assert.match(
      err.problem,
      /may take up to 101010100 lambda iterations and list comparisons; the bound is 100000 \(SIGIL_POLICY_MAX_ITERATIONS/,
    );
    assert.equal(err.field, "condition");
  });

  it("counts the product of list lengths along nested lambdas, summed", () => {
    assert.equal(compileExpression("condition", nested(100, 2))!.iterations, 100 + 100 * 100);
    assert.equal(compileExpression("condition", nested(10, 3))!.iterations, 10 + 100 + 1000);
    accepted(nested(100, 2));
    refused(nested(100, 3));
    accepted(nested(46, 3)); // 46 + 2116 + 97336
    refused(nested(47, 3));
  });

  it("counts membership tests like iterations, and filters keep their list's bound", () => {
    assert.equal(compileExpression("condition", `${list(100)}.all(a, a in ${list(1000)})`)!.iterations, 100 + 100 * 1000);
    refused(`${list(100)}.all(a, a in ${list(1000)})`);
    assert.equal(compileExpression("condition", `${list(50)}.filter(a, true).all(b, true)`)!.iterations, 100);
  });

  it("bounds lists the expression does not write by their documented maximum", () => {
    // approvers and tags: 100 each; upstream's tag quorum fits.
    assert.equal(compileExpression("consensus", "approvers.filter(u, u.tags.contains('T')).count() >= 2")!.iterations, 100 + 100 * 100);
    accepted("approvers.filter(u, u.tags.contains('T')).count() >= 2", "consensus");
    // A single lambda over signing data fits (upstream's EIP-712 example); nesting two over Solana data does not.
    accepted("eth.eip_712.message['permitted'].all(p, p['amount'] < 100)");
    assert.equal(compileExpression("condition", "eth.eip_712.message['permitted'].all(p, p['amount'] < 100)")!.iterations, 65_536);
    refused("solana.tx.instructions.all(i, i.accounts.all(a, a.signer == false))");
    accepted("bitcoin.tx.outputs.all(o, bitcoin.tx.inputs.all(i, true))");
  });

  it("stored expressions still compile whatever their cost: the budget governs them", () => {
    assert.ok(compileExpression("condition", FOUR_LEVELS));
  });

  it("follows SIGIL_POLICY_MAX_ITERATIONS", () => {
    const before = evaluationLimits();
    try {
      setEvaluationLimits({ ...before, iterations: 10 });
      refused(`${list(11)}.all(a, true)`);
      accepted(`${list(10)}.all(a, true)`);
    } finally {
      setEvaluationLimits(before);
    }
  });
});
