// § alone in this file: docs/policy-language.md
// docs/policy-language.md §6: the per-policy outcome (§6.3), the aggregation of §6.4 step by step,
// the §6.10 worked examples, the "Root-quorum tests to add" of §8, voter eligibility
// (§6.5, mayVote) and the 24-hour approval window (§6.6, liveApprovals).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type CredentialFacts, type ParamValue, type UserFacts } from "../../src/policy/index.ts";
import {
  compilePolicy,
  decide,
  evaluatePolicy,
  mayVote,
  policySet,
  type CompiledPolicy,
  type Decision,
  type Outcome,
} from "../../src/policy/engine.ts";
import { APPROVAL_WINDOW_MS, liveApprovals, type VoteLike } from "../../src/policy/approval-window.ts";
import { act, apiKey, ms, passkey, policy, ROOT_ONLY_TYPES, user } from "../helpers/policy-facts.ts";

const NOW = ms("2026-03-02T15:00:00Z");

// §6.10 setup: root quorum {R1, R2}, threshold 2; U1 and U2 tagged T_OPS, U3 untagged.
const R1 = user("r1-0000-4000-8000-000000000001");
const R2 = user("r2-0000-4000-8000-000000000002");
const R3 = user("r3-0000-4000-8000-000000000003");
const U1 = user("u1-0000-4000-8000-000000000001", ["T_OPS"]);
const U2 = user("u2-0000-4000-8000-000000000002", ["T_OPS"]);
const U3 = user("u3-0000-4000-8000-000000000003");

interface Org {
  policies: readonly CompiledPolicy[];
  roots?: readonly UserFacts[];
  threshold?: number;
}

interface Req {
  type: string;
  params?: Record<string, ParamValue>;
  by: readonly UserFacts[];
  creds?: readonly CredentialFacts[];
  rejection?: boolean;
  implicitlyAllowed?: boolean;
  nowMs?: number;
}

function decideIn(org: Org, r: Req): Decision {
  return decide(policySet(org.policies), {
    activity: act(r.type, r.params),
    rootOnly: ROOT_ONLY_TYPES.has(r.type),
    quorum: { userIds: new Set((org.roots ?? [R1, R2]).map((u) => u.id)), threshold: org.threshold ?? 2 },
    approvers: r.by,
    credentials: r.creds ?? r.by.map((u) => apiKey(u)),
    rejection: r.rejection ?? false,
    implicitlyAllowed: r.implicitlyAllowed ?? false,
    nowMs: r.nowMs ?? NOW,
  });
}

const outcomes = (d: Decision): Outcome[] => d.policies.map((p) => p.outcome);

// Building blocks, each with a known per-policy outcome on CREATE_USERS_V4 submitted by U3.
const allowAll = () => policy("ALLOW", "", "true", "", "allow-all");
const denyAll = () => policy("DENY", "", "true", "", "deny-all");
const needsTwo = () => policy("ALLOW", "approvers.count() >= 2", "true", "", "needs-two");
const notApplicable = () => policy("ALLOW", "", "activity.kind == 'SOMETHING_ELSE'", "", "not-applicable");
const timeInactive = () => policy("ALLOW", "", "true", "time.now < Timestamp('2000-01-01T00:00:00Z')", "time-inactive");
/** Would allow, but errors (no short-circuit): CREATE_USERS_V4 exposes no `user_ids`. */
const erroringAllow = () => policy("ALLOW", "", "true || activity.params.user_ids.count() == 1", "", "erroring-allow");
/** Would deny, but errors the same way. */
const erroringDeny = () => policy("DENY", "", "true || activity.params.user_ids.count() == 1", "", "erroring-deny");

const CU = { type: "CREATE_USERS_V4" } as const;

// ------------------------------------------------------------ §6.3

describe("§6.3 per-policy outcome", () => {
  const env = { activity: act("CREATE_USERS_V4"), approvers: [U3], credentials: [apiKey(U3)], nowMs: NOW };

  it("the building blocks have the outcomes the aggregation tests rely on", () => {
    assert.equal(evaluatePolicy(allowAll(), env).outcome, "OUTCOME_ALLOW");
    assert.equal(evaluatePolicy(denyAll(), env).outcome, "OUTCOME_DENY_EXPLICIT");
    assert.equal(evaluatePolicy(needsTwo(), env).outcome, "OUTCOME_REQUIRES_CONSENSUS");
    assert.equal(evaluatePolicy(notApplicable(), env).outcome, "OUTCOME_DENY_IMPLICIT");
    assert.equal(evaluatePolicy(timeInactive(), env).outcome, "OUTCOME_TIME_INACTIVE");
    assert.equal(evaluatePolicy(erroringAllow(), env).outcome, "OUTCOME_ERROR");
    assert.equal(evaluatePolicy(erroringDeny(), env).outcome, "OUTCOME_ERROR");
  });

  it("a policy with all three fields absent allows (ALLOW) or denies (DENY) everything", () => {
    assert.equal(evaluatePolicy(policy("ALLOW", "", ""), env).outcome, "OUTCOME_ALLOW");
    assert.equal(evaluatePolicy(policy("DENY", "", ""), env).outcome, "OUTCOME_DENY_EXPLICIT");
  });

  it("table rows a–e", () => {
    const cond = (b: boolean) => `activity.kind ${b ? "==" : "!="} 'CREATE_USERS'`;
    const cons = (b: boolean) => `approvers.count() ${b ? "==" : "!="} 1`;
    for (const effect of ["ALLOW", "DENY"] as const) {
      for (const consensus of [true, false]) {
        assert.equal(evaluatePolicy(policy(effect, cons(consensus), cond(false)), env).outcome, "OUTCOME_DENY_IMPLICIT", `a: ${effect}`);
      }
    }
    assert.equal(evaluatePolicy(policy("ALLOW", cons(true), cond(true)), env).outcome, "OUTCOME_ALLOW", "b");
    assert.equal(evaluatePolicy(policy("DENY", cons(true), cond(true)), env).outcome, "OUTCOME_DENY_EXPLICIT", "c");
    assert.equal(evaluatePolicy(policy("ALLOW", cons(false), cond(true)), env).outcome, "OUTCOME_REQUIRES_CONSENSUS", "d");
    assert.equal(evaluatePolicy(policy("DENY", cons(false), cond(true)), env).outcome, "OUTCOME_DENY_IMPLICIT", "e");
  });

  it("time is evaluated first: a false time skips a condition that would error", () => {
    const p = policy("ALLOW", "", "activity.params.nope == 'x'", "time.now < Timestamp('2000-01-01T00:00:00Z')");
    assert.deepEqual(evaluatePolicy(p, env), { policyId: p.id, outcome: "OUTCOME_TIME_INACTIVE" });
  });

  it("an error in time gives OUTCOME_ERROR (no time.now supplied)", () => {
    const p = policy("ALLOW", "", "true", "time.now >= Timestamp('2000-01-01T00:00:00Z')");
    const got = evaluatePolicy(p, { activity: env.activity, approvers: env.approvers, credentials: env.credentials });
    assert.equal(got.outcome, "OUTCOME_ERROR");
    assert.ok(got.error?.startsWith("time: "), got.error);
  });

  it("condition and consensus are both evaluated: a condition error wins over a false consensus", () => {
    const p = policy("ALLOW", "approvers.count() >= 5", "activity.params.user_ids.count() == 1");
    const got = evaluatePolicy(p, env);
    assert.equal(got.outcome, "OUTCOME_ERROR");
    assert.ok(got.error?.startsWith("condition: ") && got.error.includes("user_ids"), got.error);
  });

  it("a false condition does not hide a condition error (no short-circuit inside it)", () => {
    const got = evaluatePolicy(policy("ALLOW", "", "false && activity.params.nope == 'x'"), env);
    assert.equal(got.outcome, "OUTCOME_ERROR");
  });

  it("an error in consensus gives OUTCOME_ERROR even when the condition is false", () => {
    const p = policy("ALLOW", "approvers.count() >= 1", "activity.kind == 'NOPE'");
    const got = evaluatePolicy(p, { activity: env.activity, nowMs: NOW }); // no approvers supplied
    assert.equal(got.outcome, "OUTCOME_ERROR");
    assert.ok(got.error?.startsWith("consensus: "), got.error);
  });
});

// ------------------------------------------------------------ §6.4

describe("§6.4 aggregation, step by step", () => {
  it("1. an accepted rejection is REJECTED, before anything else", () => {
    for (const policies of [[allowAll()], [denyAll()], []]) {
      const d = decideIn({ policies }, { ...CU, by: [R1, R2], rejection: true });
      assert.equal(d.outcome, "OUTCOME_REJECTED");
      assert.deepEqual(d.policies, []);
    }
    assert.equal(decideIn({ policies: [] }, { type: "UPDATE_ROOT_QUORUM", by: [R1, R2], rejection: true }).outcome, "OUTCOME_REJECTED");
  });

  it("2. root-quorum-only types: met → ALLOW, pending → REQUIRES_CONSENSUS, none → DENY_IMPLICIT; policies not consulted", () => {
    for (const type of ROOT_ONLY_TYPES) {
      const naming = policy("ALLOW", "", `activity.type == 'ACTIVITY_TYPE_${type}'`);
      const org = { policies: [allowAll(), naming, denyAll()] };
      const none = decideIn(org, { type, by: [U1, U2, U3] });
      assert.equal(none.outcome, "OUTCOME_DENY_IMPLICIT", type);
      assert.deepEqual(none.policies, [], `${type}: policies are not consulted`);
      const pending = decideIn(org, { type, by: [U1, R1] });
      assert.equal(pending.outcome, "OUTCOME_REQUIRES_CONSENSUS", type);
      assert.deepEqual(pending.policies, []);
      const met = decideIn(org, { type, by: [R2, U1, R1] });
      assert.equal(met.outcome, "OUTCOME_ALLOW", type);
      assert.deepEqual(met.policies, []);
    }
  });

  it("3. root quorum met → ALLOW, bypassing an explicit deny (the deny is still recorded)", () => {
    const d = decideIn({ policies: [denyAll(), needsTwo()] }, { ...CU, by: [R1, R2] });
    assert.equal(d.outcome, "OUTCOME_ALLOW");
    assert.deepEqual(outcomes(d), ["OUTCOME_DENY_EXPLICIT", "OUTCOME_ALLOW"]);
    assert.equal(decideIn({ policies: [] }, { ...CU, by: [R1, R2] }).outcome, "OUTCOME_ALLOW");
    // 1-of-1 quorum: a lone root user is the full quorum.
    assert.equal(decideIn({ policies: [denyAll()], roots: [R1], threshold: 1 }, { ...CU, by: [R1] }).outcome, "OUTCOME_ALLOW");
  });

  it("4. explicit deny: DENY_EXPLICIT, or REQUIRES_CONSENSUS while the root quorum is pending", () => {
    assert.equal(decideIn({ policies: [denyAll()] }, { ...CU, by: [U3] }).outcome, "OUTCOME_DENY_EXPLICIT");
    assert.equal(decideIn({ policies: [denyAll()] }, { ...CU, by: [R1] }).outcome, "OUTCOME_REQUIRES_CONSENSUS");
    assert.equal(decideIn({ policies: [denyAll()] }, { ...CU, by: [U3, R2] }).outcome, "OUTCOME_REQUIRES_CONSENSUS");
    // Deny beats allow and pending consensus, in any policy order.
    assert.equal(decideIn({ policies: [allowAll(), denyAll()] }, { ...CU, by: [U3] }).outcome, "OUTCOME_DENY_EXPLICIT");
    assert.equal(decideIn({ policies: [denyAll(), needsTwo()] }, { ...CU, by: [U3] }).outcome, "OUTCOME_DENY_EXPLICIT");
    // With the root quorum pending, even a matching ALLOW policy does not decide: the deny holds it open.
    assert.equal(decideIn({ policies: [allowAll(), denyAll()] }, { ...CU, by: [R1] }).outcome, "OUTCOME_REQUIRES_CONSENSUS");
    const d = decideIn({ policies: [denyAll()] }, { ...CU, by: [U3] });
    assert.ok(d.reason.includes("deny-all"), d.reason);
  });

  it("5. any ALLOW policy allows", () => {
    assert.equal(decideIn({ policies: [allowAll()] }, { ...CU, by: [U3] }).outcome, "OUTCOME_ALLOW");
    const d = decideIn({ policies: [needsTwo(), notApplicable(), erroringDeny(), allowAll()] }, { ...CU, by: [U3] });
    assert.equal(d.outcome, "OUTCOME_ALLOW");
    assert.deepEqual(outcomes(d), ["OUTCOME_REQUIRES_CONSENSUS", "OUTCOME_DENY_IMPLICIT", "OUTCOME_ERROR", "OUTCOME_ALLOW"]);
    // A root user acting alone under a policy that allows it (root threshold 2).
    assert.equal(decideIn({ policies: [allowAll()] }, { ...CU, by: [R1] }).outcome, "OUTCOME_ALLOW");
  });

  it("6. a pending ALLOW policy gives REQUIRES_CONSENSUS", () => {
    assert.equal(decideIn({ policies: [needsTwo()] }, { ...CU, by: [U3] }).outcome, "OUTCOME_REQUIRES_CONSENSUS");
    assert.equal(decideIn({ policies: [needsTwo()] }, { ...CU, by: [U3, U1] }).outcome, "OUTCOME_ALLOW");
    assert.equal(decideIn({ policies: [notApplicable(), needsTwo()] }, { ...CU, by: [U3] }).outcome, "OUTCOME_REQUIRES_CONSENSUS");
  });

  it("7. an implicit permission allows only after explicit deny, allow and pending consensus", () => {
    const own = { type: "CREATE_API_KEYS_V2", params: { user_id: U3.id }, by: [U3], implicitlyAllowed: true };
    assert.equal(decideIn({ policies: [] }, own).outcome, "OUTCOME_ALLOW");
    assert.equal(decideIn({ policies: [denyAll()] }, own).outcome, "OUTCOME_DENY_EXPLICIT", "after deny");
    const allowed = decideIn({ policies: [allowAll()] }, own);
    assert.equal(allowed.outcome, "OUTCOME_ALLOW", "after allow");
    assert.ok(allowed.reason.includes("allow-all"), `the policy decides, not the implicit permission: ${allowed.reason}`);
    assert.equal(decideIn({ policies: [needsTwo()] }, own).outcome, "OUTCOME_REQUIRES_CONSENSUS", "after pending");
    // Policies that neither allow nor deny do not take the implicit permission away.
    const d = decideIn({ policies: [notApplicable(), timeInactive(), erroringAllow(), erroringDeny()] }, own);
    assert.equal(d.outcome, "OUTCOME_ALLOW");
    // The implicit permission comes before a pending root quorum.
    assert.equal(decideIn({ policies: [] }, { ...own, by: [R1] }).outcome, "OUTCOME_ALLOW");
  });

  it("8. root quorum pending with nothing else → REQUIRES_CONSENSUS", () => {
    assert.equal(decideIn({ policies: [] }, { ...CU, by: [R1] }).outcome, "OUTCOME_REQUIRES_CONSENSUS");
    const d = decideIn({ policies: [notApplicable(), timeInactive(), erroringAllow()] }, { ...CU, by: [U3, R2] });
    assert.equal(d.outcome, "OUTCOME_REQUIRES_CONSENSUS");
    // 2-of-3: two roots is met, one is pending.
    const org = { policies: [], roots: [R1, R2, R3], threshold: 2 };
    assert.equal(decideIn(org, { ...CU, by: [R3] }).outcome, "OUTCOME_REQUIRES_CONSENSUS");
    assert.equal(decideIn(org, { ...CU, by: [R3, R1] }).outcome, "OUTCOME_ALLOW");
  });

  it("9. otherwise DENY_IMPLICIT", () => {
    assert.equal(decideIn({ policies: [] }, { ...CU, by: [U3] }).outcome, "OUTCOME_DENY_IMPLICIT");
    const d = decideIn({ policies: [notApplicable(), timeInactive(), erroringAllow(), erroringDeny()] }, { ...CU, by: [U3] });
    assert.equal(d.outcome, "OUTCOME_DENY_IMPLICIT");
    assert.deepEqual(outcomes(d), ["OUTCOME_DENY_IMPLICIT", "OUTCOME_TIME_INACTIVE", "OUTCOME_ERROR", "OUTCOME_ERROR"]);
  });

  it("an erroring ALLOW policy never allows", () => {
    const d = decideIn({ policies: [erroringAllow()] }, { ...CU, by: [U3] });
    assert.deepEqual(outcomes(d), ["OUTCOME_ERROR"]);
    assert.equal(d.outcome, "OUTCOME_DENY_IMPLICIT");
    assert.ok(d.policies[0]!.error?.includes("user_ids"), d.policies[0]!.error);
    // Nor does it make a request wait for consensus.
    const pending = policy("ALLOW", "approvers.count() >= 2", "activity.params.user_ids.count() == 1");
    assert.equal(decideIn({ policies: [pending] }, { ...CU, by: [U3] }).outcome, "OUTCOME_DENY_IMPLICIT");
  });

  it("an erroring DENY policy never denies", () => {
    assert.equal(decideIn({ policies: [erroringDeny()] }, { ...CU, by: [U3] }).outcome, "OUTCOME_DENY_IMPLICIT");
    assert.equal(decideIn({ policies: [erroringDeny(), allowAll()] }, { ...CU, by: [U3] }).outcome, "OUTCOME_ALLOW");
    assert.equal(decideIn({ policies: [erroringDeny(), needsTwo()] }, { ...CU, by: [U3] }).outcome, "OUTCOME_REQUIRES_CONSENSUS");
    const own = { type: "CREATE_API_KEYS_V2", params: { user_id: U3.id }, by: [U3], implicitlyAllowed: true };
    assert.equal(decideIn({ policies: [erroringDeny()] }, own).outcome, "OUTCOME_ALLOW");
  });

  it("a time-gated DENY denies only while its time is true", () => {
    const freeze = (t: string) => policy("DENY", "", "true", t);
    const on = freeze("time.now >= Timestamp('2026-03-01T00:00:00Z')");
    const off = freeze("time.now < Timestamp('2026-03-01T00:00:00Z')");
    assert.equal(decideIn({ policies: [allowAll(), on] }, { ...CU, by: [U3] }).outcome, "OUTCOME_DENY_EXPLICIT");
    assert.equal(decideIn({ policies: [allowAll(), off] }, { ...CU, by: [U3] }).outcome, "OUTCOME_ALLOW");
  });
});

// ------------------------------------------------------------ §6.10

describe("§6.10 worked examples", () => {
  const A = () =>
    policy(
      "ALLOW",
      "approvers.filter(u, u.tags.contains('T_OPS')).count() >= 2",
      "activity.resource == 'POLICY' && activity.action == 'CREATE'",
      "",
      "A",
    );
  const B = () => policy("DENY", "approvers.any(u, u.tags.contains('T_OPS'))", "activity.action == 'DELETE'", "", "B");

  it("1. no policies: U3 submits CREATE_USERS_V4 → DENY_IMPLICIT", () => {
    const d = decideIn({ policies: [] }, { type: "CREATE_USERS_V4", by: [U3] });
    assert.equal(d.outcome, "OUTCOME_DENY_IMPLICIT");
    assert.deepEqual(d.policies, []);
  });

  it("2. policy A: U1 submits → REQUIRES_CONSENSUS; U2 approves → ALLOW; U3 instead → still REQUIRES_CONSENSUS", () => {
    const org = { policies: [A()] };
    const first = decideIn(org, { type: "CREATE_POLICY_V3", by: [U1] });
    assert.equal(first.outcome, "OUTCOME_REQUIRES_CONSENSUS");
    assert.deepEqual(outcomes(first), ["OUTCOME_REQUIRES_CONSENSUS"]);
    const u2 = decideIn(org, { type: "CREATE_POLICY_V3", by: [U1, U2] });
    assert.equal(u2.outcome, "OUTCOME_ALLOW");
    assert.deepEqual(outcomes(u2), ["OUTCOME_ALLOW"]);
    const u3 = decideIn(org, { type: "CREATE_POLICY_V3", by: [U1, U3] });
    assert.equal(u3.outcome, "OUTCOME_REQUIRES_CONSENSUS");
  });

  it("3. adding policy B: U1 submits DELETE_POLICIES → DENY_EXPLICIT", () => {
    const d = decideIn({ policies: [A(), B()] }, { type: "DELETE_POLICIES", by: [U1] });
    assert.equal(d.outcome, "OUTCOME_DENY_EXPLICIT");
    assert.deepEqual(outcomes(d), ["OUTCOME_DENY_IMPLICIT", "OUTCOME_DENY_EXPLICIT"]);
  });

  it("4. R1 submits DELETE_POLICIES → REQUIRES_CONSENSUS (root pending); R2 approves → ALLOW", () => {
    const org = { policies: [A(), B()] };
    const r1 = decideIn(org, { type: "DELETE_POLICIES", by: [R1] });
    assert.deepEqual(outcomes(r1), ["OUTCOME_DENY_IMPLICIT", "OUTCOME_DENY_IMPLICIT"], "B's consensus is false for R1");
    assert.equal(r1.outcome, "OUTCOME_REQUIRES_CONSENSUS");
    assert.equal(decideIn(org, { type: "DELETE_POLICIES", by: [R1, R2] }).outcome, "OUTCOME_ALLOW");
  });

  it("5. no policies: U3 creates an API key for itself → ALLOW (implicit); for U1 → DENY_IMPLICIT", () => {
    // Whether the permission applies (the key is for the requester) is the caller's input.
    const self = decideIn({ policies: [] }, { type: "CREATE_API_KEYS_V2", params: { user_id: U3.id }, by: [U3], implicitlyAllowed: true });
    assert.equal(self.outcome, "OUTCOME_ALLOW");
    const other = decideIn(
      { policies: [] },
      { type: "CREATE_API_KEYS_V2", params: { user_id: U1.id }, by: [U3], implicitlyAllowed: false },
    );
    assert.equal(other.outcome, "OUTCOME_DENY_IMPLICIT");
  });

  it("6. policy C (wallet/private_key) is accepted; with no private key ever bound it errors, never allows", () => {
    const C = compilePolicy({
      id: "C",
      effect: "EFFECT_ALLOW",
      condition: "wallet.id == 'W' || private_key.id == 'K'",
      consensus: "",
      time: "",
    });
    const wallets = [{ id: "W", imported: false, exported: false, label: "w" }];
    for (const activity of [act("CREATE_USERS_V4"), { ...act("CREATE_WALLET_ACCOUNTS"), wallets }]) {
      const d = decide(policySet([C]), {
        activity,
        rootOnly: false,
        quorum: { userIds: new Set([R1.id, R2.id]), threshold: 2 },
        approvers: [U3],
        credentials: [apiKey(U3)],
        rejection: false,
        implicitlyAllowed: false,
        nowMs: NOW,
      });
      assert.deepEqual(outcomes(d), ["OUTCOME_ERROR"], activity.type);
      assert.equal(d.outcome, "OUTCOME_DENY_IMPLICIT", activity.type);
      assert.match(d.policies[0]!.error!, /is not available/);
    }
  });

  it("6'. every signing keyword of §4.1 is accepted in condition, and is OUTCOME_ERROR where absent (never an allow or a deny)", () => {
    const uses = [
      "wallet.id == 'W'",
      "wallets.count() == 1",
      "private_key.id == 'K'",
      "wallet_account.address == 'a'",
      "eth.tx.to == 'x'",
      "eth.eip_712.domain == 'x'",
      "eth.eip_7702_authorization.chain_id == '1'",
      "eth.tx.contract_call_args['wad'] > 1000",
      "solana.tx.program == 'x'",
      "solana.tx.transfers.any(t, t.to == 'x')",
      "tron.tx.to == 'x'",
      "bitcoin.tx.fee == 1",
      "tempo.tx.to == 'x'",
      "secret.id == 's'",
      "activity.action == 'SIGN' && wallet.id == 'W'",
      "true || !(wallet_account.address != 'a')",
    ];
    for (const condition of uses) {
      for (const effect of ["EFFECT_ALLOW", "EFFECT_DENY"] as const) {
        const p = compilePolicy({ id: "x", effect, condition, consensus: "", time: "" });
        const d = decideIn({ policies: [p] }, { type: "CREATE_USERS_V4", by: [U3] });
        assert.deepEqual(outcomes(d), ["OUTCOME_ERROR"], condition);
        assert.equal(d.outcome, "OUTCOME_DENY_IMPLICIT", condition);
      }
    }
  });

  it("6''. `wallet` and `wallets` read the wallets the activity names", () => {
    const W = { id: "W", imported: false, exported: true, label: "cold" };
    const V = { id: "V", imported: true, exported: false, label: "hot" };
    const run = (condition: string, wallets: (typeof W)[], effect: "EFFECT_ALLOW" | "EFFECT_DENY" = "EFFECT_DENY") =>
      decide(policySet([compilePolicy({ id: "p", effect, condition, consensus: "", time: "" }), allowAll()]), {
        activity: { ...act("CREATE_WALLET_ACCOUNTS"), wallets },
        rootOnly: false,
        quorum: { userIds: new Set([R1.id, R2.id]), threshold: 2 },
        approvers: [U3],
        credentials: [apiKey(U3)],
        rejection: false,
        implicitlyAllowed: false,
        nowMs: NOW,
      });
    assert.equal(run("wallet.label == 'cold'", [W]).outcome, "OUTCOME_DENY_EXPLICIT");
    assert.equal(run("wallet.label == 'cold'", [V]).outcome, "OUTCOME_ALLOW");
    assert.equal(run("wallet.exported && !wallet.imported && wallet.id == 'W'", [W]).outcome, "OUTCOME_DENY_EXPLICIT");
    // Several wallets: a policy reading `wallet` is judged per wallet, the strictest pass counts.
    assert.deepEqual(outcomes(run("wallet.label == 'cold'", [V, W])), ["OUTCOME_DENY_EXPLICIT", "OUTCOME_ALLOW"]);
    assert.equal(run("wallet.label == 'cold'", [W, V]).outcome, "OUTCOME_DENY_EXPLICIT", "whatever the order");
    assert.equal(run("wallet.label == 'lukewarm'", [V, W]).outcome, "OUTCOME_ALLOW");
    // An ALLOW reading `wallet` must hold for every wallet named.
    const allowOnly = (condition: string, wallets: (typeof W)[]) =>
      decide(policySet([compilePolicy({ id: "a", effect: "EFFECT_ALLOW", condition, consensus: "", time: "" })]), {
        activity: { ...act("CREATE_WALLET_ACCOUNTS"), wallets },
        rootOnly: false,
        quorum: { userIds: new Set([R1.id, R2.id]), threshold: 2 },
        approvers: [U3],
        credentials: [apiKey(U3)],
        rejection: false,
        implicitlyAllowed: false,
        nowMs: NOW,
      });
    assert.equal(allowOnly("wallet.label == 'hot'", [V]).outcome, "OUTCOME_ALLOW");
    assert.deepEqual(outcomes(allowOnly("wallet.label == 'hot'", [V, W])), ["OUTCOME_DENY_IMPLICIT"]);
    assert.equal(allowOnly("wallet.label in ['hot', 'cold']", [V, W]).outcome, "OUTCOME_ALLOW");
    // An error on any pass is the policy's error (a deny on another pass still wins).
    assert.deepEqual(outcomes(allowOnly("wallet.label == 'hot' && activity.params.x == 'y'", [V, W])), ["OUTCOME_ERROR"]);
    assert.equal(run("wallets.any(w, w.label == 'cold')", [V, W]).outcome, "OUTCOME_DENY_EXPLICIT");
    assert.equal(run("wallets.all(w, w.label == 'cold')", [V, W]).outcome, "OUTCOME_ALLOW");
    assert.equal(run("wallets.count() == 2", [V, W]).outcome, "OUTCOME_DENY_EXPLICIT");
  });
});

// ------------------------------------------------------------ §8 root-quorum tests

describe("§8 root-quorum tests (engine level)", () => {
  it("2-of-2: R1 submits CREATE_POLICY_V3 → REQUIRES_CONSENSUS; R2 approves → ALLOW", () => {
    const org = { policies: [], roots: [R1, R2], threshold: 2 };
    assert.equal(decideIn(org, { type: "CREATE_POLICY_V3", by: [R1] }).outcome, "OUTCOME_REQUIRES_CONSENSUS");
    assert.equal(decideIn(org, { type: "CREATE_POLICY_V3", by: [R1, R2] }).outcome, "OUTCOME_ALLOW");
  });

  it("example #6 loaded, R1 tagged: DELETE_POLICIES by R1 → REQUIRES_CONSENSUS; R2 approves → ALLOW", () => {
    const TAG = "c6b7e0d2-8d0f-4c55-a2c1-7f1e4a9b0a01";
    const r1Tagged = user(R1.id, [TAG]);
    const row6 = policy("DENY", `approvers.any(user, user.tags.contains('${TAG}'))`, "activity.action == 'DELETE'", "", "row-6");
    const org = { policies: [row6], roots: [R1, R2], threshold: 2 };
    const first = decideIn(org, { type: "DELETE_POLICIES", by: [r1Tagged] });
    assert.deepEqual(outcomes(first), ["OUTCOME_DENY_EXPLICIT"]);
    assert.equal(first.outcome, "OUTCOME_REQUIRES_CONSENSUS", "root pending overrides the explicit deny");
    const second = decideIn(org, { type: "DELETE_POLICIES", by: [r1Tagged, R2] });
    assert.equal(second.outcome, "OUTCOME_ALLOW");
    assert.deepEqual(outcomes(second), ["OUTCOME_DENY_EXPLICIT"]);
  });

  it("a non-root user submits UPDATE_ROOT_QUORUM, even with an ALLOW policy naming it → DENY_IMPLICIT", () => {
    const naming = policy("ALLOW", "", "activity.type == 'ACTIVITY_TYPE_UPDATE_ROOT_QUORUM'", "", "naming");
    const facts = act("UPDATE_ROOT_QUORUM");
    // On its own the policy would allow: only the root-only rule stops it.
    assert.equal(
      evaluatePolicy(naming, { activity: facts, approvers: [U3], credentials: [apiKey(U3)], nowMs: NOW }).outcome,
      "OUTCOME_ALLOW",
    );
    const d = decideIn({ policies: [naming, allowAll()], roots: [R1, R2], threshold: 2 }, { type: "UPDATE_ROOT_QUORUM", by: [U3] });
    assert.equal(d.outcome, "OUTCOME_DENY_IMPLICIT");
    assert.deepEqual(d.policies, []);
    // A 1-of-1 quorum's non-root user fares no better.
    assert.equal(
      decideIn({ policies: [naming], roots: [R1], threshold: 1 }, { type: "UPDATE_ROOT_QUORUM", by: [U1, U2] }).outcome,
      "OUTCOME_DENY_IMPLICIT",
    );
  });

  it("2-of-3 plus a policy naming R1 for CREATE_USERS: R1 alone is allowed there, and pending elsewhere", () => {
    const p = policy("ALLOW", `approvers.any(u, u.id == '${R1.id}')`, "activity.kind == 'CREATE_USERS'", "", "r1-users");
    const org = { policies: [p], roots: [R1, R2, R3], threshold: 2 };
    const users = decideIn(org, { type: "CREATE_USERS_V4", by: [R1] });
    assert.equal(users.outcome, "OUTCOME_ALLOW");
    assert.deepEqual(outcomes(users), ["OUTCOME_ALLOW"]);
    const pol = decideIn(org, { type: "CREATE_POLICY_V3", by: [R1] });
    assert.equal(pol.outcome, "OUTCOME_REQUIRES_CONSENSUS");
    assert.deepEqual(outcomes(pol), ["OUTCOME_DENY_IMPLICIT"]);
    assert.equal(decideIn(org, { type: "CREATE_POLICY_V3", by: [R1, R3] }).outcome, "OUTCOME_ALLOW");
  });
});

// ------------------------------------------------------------ §6.5 mayVote

describe("§6.5 mayVote", () => {
  const quorum = { userIds: new Set([R1.id, R2.id]), threshold: 2 };
  const V = user("v0-0000-4000-8000-0000000000aa", ["T_VOTERS"]);
  const ctx = (over: { type?: string; initiatorId?: string; nowMs?: number } = {}) => {
    const type = over.type ?? "CREATE_POLICY_V3";
    return {
      quorum,
      initiatorId: over.initiatorId ?? U1.id,
      activity: act(type),
      rootOnly: ROOT_ONLY_TYPES.has(type),
      nowMs: over.nowMs ?? NOW,
    };
  };
  const may = (policies: readonly CompiledPolicy[], voter: UserFacts, c = ctx()) => mayVote(policySet(policies), voter, c);
  const policyCreate = "activity.resource == 'POLICY' && activity.action == 'CREATE'";

  it("a root quorum member may vote, with no policies at all", () => {
    assert.equal(may([], R2), true);
    assert.equal(may([], R1), true);
  });

  it("the initiator may vote", () => {
    assert.equal(may([], U1), true);
    assert.equal(may([], U3, ctx({ initiatorId: U3.id })), true);
  });

  it("a user named by id literal in an applicable policy's consensus", () => {
    const p = policy("ALLOW", `approvers.any(u, u.id == '${V.id}')`, policyCreate);
    assert.equal(may([p], V), true);
    assert.equal(may([p], U3), false);
    // Also through credentials.user_id.
    const q = policy("ALLOW", `credentials.any(c, c.user_id == '${U3.id}')`, policyCreate);
    assert.equal(may([q], U3), true);
  });

  it("a user named by tag literal", () => {
    const p = policy("ALLOW", "approvers.filter(u, u.tags.contains('T_OPS')).count() >= 2", policyCreate);
    assert.equal(may([p], U2), true);
    assert.equal(may([p], user("tagged-late", ["other", "T_OPS"])), true);
    assert.equal(may([p], U3), false);
    assert.equal(may([p], V), false);
  });

  it("a count-only consensus includes everyone", () => {
    assert.equal(may([policy("ALLOW", "approvers.count() >= 2", policyCreate)], U3), true);
    assert.equal(may([policy("ALLOW", "credentials.count() >= 2", "")], U3), true);
  });

  it("a user not included by any applicable policy may not vote", () => {
    assert.equal(may([], U3), false);
    assert.equal(may([policy("ALLOW", `approvers.any(u, u.id == '${V.id}')`, policyCreate)], U3), false);
    // Naming someone turns off the "everyone" reading for that policy.
    assert.equal(may([policy("ALLOW", `approvers.count() >= 2 && approvers.any(u, u.id == '${V.id}')`, policyCreate)], U3), false);
    // A policy without consensus names nobody.
    assert.equal(may([policy("ALLOW", "", policyCreate)], U3), false);
  });

  it("only applicable policies include: a false or erroring condition does not", () => {
    const named = `approvers.any(u, u.id == '${V.id}')`;
    assert.equal(may([policy("ALLOW", named, "activity.kind == 'DELETE_USERS'")], V), false);
    assert.equal(may([policy("ALLOW", named, "activity.params.user_ids.count() == 1")], V), false);
    assert.equal(may([policy("ALLOW", named, "activity.kind == 'DELETE_USERS'"), policy("ALLOW", named, policyCreate)], V), true);
  });

  it("a time-inactive policy does not include", () => {
    const p = policy("ALLOW", `approvers.any(u, u.id == '${V.id}')`, policyCreate, "time.now >= Timestamp('2027-01-01T00:00:00Z')");
    assert.equal(may([p], V), false);
    assert.equal(may([p], V, ctx({ nowMs: ms("2027-01-01T00:00:00Z") })), true);
    const countOnly = policy("ALLOW", "approvers.count() >= 2", "", "CronSpan('0 2 * * *', '1h', 'UTC')");
    assert.equal(may([countOnly], U3), false, "15:00 UTC is outside 02:00–03:00");
    assert.equal(may([countOnly], U3, ctx({ nowMs: ms("2026-03-02T02:15:00Z") })), true);
  });

  it("a root-only activity excludes non-roots, whatever the policies say", () => {
    const naming = policy("ALLOW", `approvers.any(u, u.id == '${V.id}')`, "activity.type == 'ACTIVITY_TYPE_UPDATE_ROOT_QUORUM'");
    const everyone = policy("ALLOW", "approvers.count() >= 1", "");
    const c = ctx({ type: "UPDATE_ROOT_QUORUM", initiatorId: R1.id });
    assert.equal(c.rootOnly, true);
    assert.equal(may([naming, everyone], V, c), false);
    assert.equal(may([naming, everyone], U3, c), false);
    assert.equal(may([naming, everyone], R2, c), true);
    assert.equal(may([naming, everyone], R1, c), true);
  });
});

// §6.5(c): a consensus that "references approvers/credentials without any id or tag literal"
// includes everyone. mayVote treats ANY string literal as a name, so a consensus whose only
// literals are an e-mail address (§8 row 49) or a credential type (§8 row 13) includes nobody:
// the user those rows are written for cannot approve an activity someone else submitted.
describe("§6.5(c) mayVote: literals that are neither ids nor tags", () => {
  const quorum = { userIds: new Set([R1.id, R2.id]), threshold: 2 };

  it("§8 row 49: the ops@example.com user may approve another user's CREATE_TVC_APP", () => {
    const p = policy(
      "ALLOW",
      "approvers.any(u, u.email == 'ops@example.com')",
      "activity.kind == 'CREATE_TVC_APP' || activity.kind == 'CREATE_TVC_DEPLOYMENT'",
    );
    const ops = user("ops-0000-4000-8000-000000000001", [], "ops@example.com");
    const ctx = { quorum, initiatorId: U3.id, activity: act("CREATE_TVC_APP"), rootOnly: false, nowMs: NOW };
    assert.equal(mayVote(policySet([p]), ops, ctx), true);
  });

  it("§8 row 13: a passkey holder may approve another user's SIGN_TRANSACTION_V2", () => {
    const p = policy(
      "ALLOW",
      "credentials.any(credential, credential.type == 'CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR')",
      "activity.type == 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2'",
    );
    const ctx = { quorum, initiatorId: U3.id, activity: act("SIGN_TRANSACTION_V2"), rootOnly: false, nowMs: NOW };
    // The approval the policy is waiting for: U2 with a passkey.
    assert.equal(
      evaluatePolicy(p, { activity: ctx.activity, approvers: [U3, U2], credentials: [apiKey(U3), passkey(U2)], nowMs: NOW }).outcome,
      "OUTCOME_ALLOW",
    );
    assert.equal(mayVote(policySet([p]), U2, ctx), true);
  });
});

// ------------------------------------------------------------ §6.6 liveApprovals

describe("§6.6 liveApprovals", () => {
  const H = 60 * 60 * 1000;
  const T0 = ms("2026-03-02T15:00:00Z");
  interface Vote extends VoteLike {
    id: string;
  }
  let n = 0;
  const approve = (u: UserFacts, at: number): Vote => ({
    id: `v${++n}`,
    user_id: u.id,
    selection: "VOTE_SELECTION_APPROVED",
    created_at: at,
  });
  const reject = (u: UserFacts, at: number): Vote => ({
    id: `v${++n}`,
    user_id: u.id,
    selection: "VOTE_SELECTION_REJECTED",
    created_at: at,
  });
  const ids = (vs: readonly Vote[]) => vs.map((v) => v.id);

  it("the window is 24 hours", () => {
    assert.equal(APPROVAL_WINDOW_MS, 24 * H);
  });

  it("no votes, no approvals", () => {
    assert.deepEqual(liveApprovals([], T0), []);
  });

  it("the window opens at the first approval; all of its approvals expire together at exactly 24 h", () => {
    const a = approve(U1, T0),
      b = approve(U2, T0 + 23 * H);
    assert.deepEqual(ids(liveApprovals([a], T0)), [a.id]);
    assert.deepEqual(ids(liveApprovals([a, b], T0 + 23 * H)), [a.id, b.id]);
    assert.deepEqual(ids(liveApprovals([a, b], T0 + 24 * H - 1)), [a.id, b.id]);
    assert.deepEqual(liveApprovals([a, b], T0 + 24 * H), [], "b is only 1 h old but expires with its window");
    assert.deepEqual(liveApprovals([a, b], T0 + 48 * H), []);
  });

  it("an approval after the window closed opens a new window", () => {
    const a = approve(U1, T0),
      b = approve(U2, T0 + 25 * H);
    assert.deepEqual(ids(liveApprovals([a, b], T0 + 25 * H)), [b.id]);
    assert.deepEqual(ids(liveApprovals([a, b], T0 + 49 * H - 1)), [b.id]);
    assert.deepEqual(liveApprovals([a, b], T0 + 49 * H), []);
    // Exactly at the boundary the new approval starts the new window.
    const c = approve(U3, T0 + 24 * H);
    assert.deepEqual(ids(liveApprovals([a, c], T0 + 24 * H)), [c.id]);
    // The same user approving again in the new window counts again.
    const a2 = approve(U1, T0 + 30 * H);
    assert.deepEqual(ids(liveApprovals([a, b, a2], T0 + 30 * H)), [b.id, a2.id]);
  });

  it("one entry per user, in order of first approval", () => {
    const a = approve(U1, T0),
      b = approve(U2, T0 + H),
      a2 = approve(U1, T0 + 2 * H),
      c = approve(U3, T0 + 3 * H);
    assert.deepEqual(ids(liveApprovals([a, b, a2, c], T0 + 4 * H)), [a.id, b.id, c.id]);
  });

  it("rejections are ignored: they neither count nor open a window", () => {
    const r = reject(U3, T0),
      a = approve(U1, T0 + 2 * H),
      b = approve(U2, T0 + 3 * H);
    assert.deepEqual(ids(liveApprovals([r, a, b], T0 + 3 * H)), [a.id, b.id]);
    // The window started at a (T0 + 2 h), not at the rejection.
    assert.deepEqual(ids(liveApprovals([r, a, b], T0 + 25 * H)), [a.id, b.id]);
    assert.deepEqual(liveApprovals([r, a, b], T0 + 26 * H), []);
    assert.deepEqual(liveApprovals([reject(U1, T0)], T0), []);
  });

  it("expired approvals drop out of root counting too", () => {
    const org = { policies: [], roots: [R1, R2], threshold: 2 };
    const r1 = approve(R1, T0);
    const byUser = new Map([R1, R2].map((u) => [u.id, u]));
    const approvers = (votes: readonly Vote[], now: number) => liveApprovals(votes, now).map((v) => byUser.get(v.user_id)!);
    const inTime = approve(R2, T0 + 23 * H);
    assert.equal(decideIn(org, { ...CU, by: approvers([r1, inTime], T0 + 23 * H), nowMs: T0 + 23 * H }).outcome, "OUTCOME_ALLOW");
    const late = approve(R2, T0 + 24 * H);
    const live = approvers([r1, late], T0 + 24 * H);
    assert.deepEqual(
      live.map((u) => u.id),
      [R2.id],
    );
    assert.equal(decideIn(org, { ...CU, by: live, nowMs: T0 + 24 * H }).outcome, "OUTCOME_REQUIRES_CONSENSUS");
  });
});
