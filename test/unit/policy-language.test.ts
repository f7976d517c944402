// The policy language against docs/policy-language.md; "section n" below names that note's §n.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  activityKind,
  compileExpression,
  MAX_DEPTH,
  MAX_SOURCE_LENGTH,
  PolicyCompileError,
  PolicyRuntimeError,
  type ActivityFacts,
  type EvalEnv,
  type Field,
  type ParamValue,
  type PolicyRuntimeErrorKind,
  type UserFacts,
} from "../../src/policy/index.ts";

// ---------------------------------------------------------------- helpers

function compile(field: Field, source: string) {
  const c = compileExpression(field, source);
  assert.ok(c, `expected ${JSON.stringify(source)} to compile`);
  return c;
}

function evaluate(field: Field, source: string, env: EvalEnv): boolean {
  return compile(field, source).evaluate(env);
}

/** Asserts a compile error with the exact `field:line:column: ` prefix and a problem containing `problem`. */
function rejects(field: Field, source: string, where: string, problem: string): PolicyCompileError {
  try {
    compileExpression(field, source);
  } catch (err) {
    assert.ok(err instanceof PolicyCompileError, `expected PolicyCompileError, got ${String(err)}`);
    assert.equal(err.field, field);
    assert.ok(err.message.startsWith(`${field}:${where}: `), `wrong position: ${err.message}`);
    assert.equal(err.message, `${field}:${err.line}:${err.column}: ${err.problem}`);
    assert.ok(err.problem.includes(problem), `problem ${JSON.stringify(err.problem)} lacks ${JSON.stringify(problem)}`);
    return err;
  }
  assert.fail(`expected ${field} ${JSON.stringify(source)} to be rejected`);
}

function runtimeError(field: Field, source: string, env: EvalEnv, kind: PolicyRuntimeErrorKind, text?: string): void {
  const c = compile(field, source);
  assert.throws(
    () => c.evaluate(env),
    (err: unknown) => {
      assert.ok(err instanceof PolicyRuntimeError, `expected PolicyRuntimeError, got ${String(err)}`);
      assert.equal(err.kind, kind, err.message);
      if (text) assert.ok(err.message.includes(text), err.message);
      return true;
    },
  );
}

function activity(type: string, resource: string, action: string, params: Record<string, ParamValue> = {}): ActivityFacts {
  return { type, kind: activityKind(type), resource, action, params };
}
const user = (id: string, tags: string[] = [], email = "", alias = ""): UserFacts => ({ id, tags, email, alias });

const CREATE_USERS = activity("ACTIVITY_TYPE_CREATE_USERS_V4", "USER", "CREATE");
const DELETE_POLICIES = activity("ACTIVITY_TYPE_DELETE_POLICIES", "POLICY", "DELETE");
const deleteUsers = (ids: string[]) => activity("ACTIVITY_TYPE_DELETE_USERS", "USER", "DELETE", { user_ids: ids });

const SIGNING_KEYWORDS = ["wallet", "wallets", "private_key", "wallet_account", "eth", "solana", "tron", "bitcoin", "tempo", "secret"];
const walletFacts = (id: string, label: string, exported = false, imported = false) => ({ id, label, exported, imported });

/** Section 8 placeholders such as <USER_ID> become concrete ids. */
const bind = (s: string): string => s.replace(/<([A-Z_]+)>/g, (_, name: string) => `id-${name.toLowerCase().replace(/_/g, "-")}`);

// ---------------------------------------------------------------- section 9: must reject

describe("section 9: expressions rejected at creation", () => {
  const rows: [string, Field, string, string, string][] = [
    ["R1", "consensus", `approvers.any(user, user.id == "abc")`, "1:32", "single quotes"],
    ["R2", "condition", `activity.type = 'ACTIVITY_TYPE_CREATE_POLICY_V3'`, "1:15", "equality is written '=='"],
    ["R3", "condition", `activity.resource == 'POLICY' and activity.action == 'CREATE'`, "1:31", "logical and is written '&&'"],
    ["R4", "condition", `activity.action == 'CREATE' &&`, "1:31", "expected an expression, found end of input"],
    ["R5", "condition", `(activity.action == 'CREATE'`, "1:29", "expected ')'"],
    ["R6", "consensus", `approvers.count()`, "1:1", "the consensus expression must be bool, found int"],
    ["R7", "consensus", `approvers.count() >= '2'`, "1:22", "expected int, found string"],
    ["R8", "consensus", `approvers.any(user, user.id)`, "1:21", "the any predicate must be bool, found string"],
    ["R9", "consensus", `approvers.any(user.id == 'x')`, "1:19", "expected ',' after the any variable 'user'"],
    ["R10", "consensus", `approvers.any('u', u.id == 'x')`, "1:15", "must be a variable name"],
    ["R11", "consensus", `approvers.any(u, u.name == 'x')`, "1:20", "User has no field 'name'"],
    ["R12", "consensus", `approvers.size() >= 2`, "1:11", "unknown method 'size'"],
    ["R13", "consensus", `user.id == 'abc'`, "1:1", "unknown identifier 'user'"],
    [
      "R14",
      "consensus",
      `activity.kind == 'CREATE_POLICY'`,
      "1:1",
      "'activity' is a condition keyword and is not available in the consensus field",
    ],
    [
      "R15",
      "condition",
      `approvers.any(u, u.id == 'x')`,
      "1:1",
      "'approvers' is a consensus keyword and is not available in the condition field",
    ],
    ["R16", "condition", `1 in ['a', 'b']`, "1:1", "expected string, found int"],
    [
      "R17",
      "condition",
      `activity.kind in ['CREATE_POLICY', 1]`,
      "1:36",
      "list elements must all have one type: expected string, found int",
    ],
    ["R18", "condition", `activity.type < 'ACTIVITY_TYPE_Z'`, "1:15", "'<' is not defined for string"],
    ["R19", "consensus", `approvers.count() + 1 >= 2`, "1:19", "no arithmetic operators"],
    ["R20", "condition", `activity.params.user_ids.count() == 1 == true`, "1:39", "comparison operators cannot be chained"],
    ["R21", "consensus", `approvers.any(user, user.id == <USER_ID>)`, "1:32", "expected an expression, found '<'"],
    [
      "R22",
      "condition",
      `115792089237316195423570985008687907853269984665640564039457584007913129639936 > 0`,
      "1:1",
      "integer literal out of range",
    ],
    ["R23", "consensus", `!approvers.count()`, "1:2", "the operand of '!' must be bool, found int"],
    ["R24", "condition", `activity.kind[0..]`, "1:18", "open-ended slices are not supported"],
    ["R25", "time", `Timestamp('2025-01-01T00:00:00-05:00') < time.now`, "1:11", "non-zero UTC offset -05:00"],
    ["R26", "time", `time.now < Timestamp('2025-01-01T00:00:00')`, "1:22", "missing UTC offset"],
    ["R27", "time", `time.now > 1735689600`, "1:12", "expected timestamp, found int"],
    ["R28", "time", `CronSpan('*/15 * * * *', '1h', 'UTC')`, "1:10", "step values (/) are not supported"],
    ["R29", "time", `CronSpan('0 9 * * MON-FRI', '8h', 'America/New_York')`, "1:10", "names and the L/W specifiers are not supported"],
    ["R30", "time", `CronSpan('@daily', '1h', 'UTC')`, "1:10", "macros such as @daily are not supported"],
    ["R31", "time", `CronSpan('0 0 9 * * 1-5', '8h', 'UTC')`, "1:10", "expected 5 fields"],
    ["R32", "time", `CronSpan('0 9 * * 7', '1h', 'UTC')`, "1:10", "day-of-week: value 7 is out of range 0-6"],
    ["R33", "time", `CronSpan('0 9 * * 1-5', '1.5h', 'UTC')`, "1:25", "fractional durations are not supported"],
    ["R34", "time", `CronSpan('0 9 * * 1-5', '30s', 'UTC')`, "1:25", "unsupported unit or character 's'"],
    ["R35", "time", `CronSpan('0 9 * * 1-5', '8d', 'UTC')`, "1:25", "at most 7 days"],
    ["R36", "time", `CronSpan('0 9 * * 1-5', '0m', 'UTC')`, "1:25", "greater than zero"],
    ["R37", "time", `CronSpan('0 9 * * 1-5', '8h', 'Mars/Olympus_Mons')`, "1:31", "unknown time zone 'Mars/Olympus_Mons'"],
    ["R38", "time", `CronSpan('0 9 * * 1-5', '8h')`, "1:1", "CronSpan expects 3 arguments, found 2"],
    ["R39", "condition", `CronSpan('0 9 * * 1-5', '8h', 'UTC')`, "1:1", "CronSpan is only available in the time field"],
    [
      "R40",
      "time",
      `activity.kind == 'CREATE_POLICY' && CronSpan('0 9 * * 1-5', '8h', 'UTC')`,
      "1:1",
      "'activity' is a condition keyword and is not available in the time field",
    ],
    ["R41", "condition", `[1,2,3][0..2] == [1,2]`, "1:15", "'==' is not defined for list<int>"],
    ["R42", "time", `Timestamp('2025-13-01T00:00:00Z') < time.now`, "1:11", "month 13 does not exist"],
    ["R43", "consensus", `approvers.any(u, u.tags.contains())`, "1:34", "contains expects 1 argument, found 0"],
  ];
  for (const [id, field, source, where, problem] of rows) {
    it(`${id}: ${field} ${source}`, () => {
      rejects(field, source, where, problem);
    });
  }
});

// ---------------------------------------------------------------- section 9: runtime errors

describe("section 9: accepted, but an error at evaluation", () => {
  it("activity.params.user_ids on an activity other than DELETE_USERS is MissingField", () => {
    runtimeError(
      "condition",
      "activity.params.user_ids.count() == 1",
      { activity: CREATE_USERS },
      "MissingField",
      "activity.params has no field 'user_ids' for ACTIVITY_TYPE_CREATE_USERS_V4",
    );
  });
  it("activity.params.policy_ids on DELETE_POLICIES is MissingField", () => {
    runtimeError(
      "condition",
      "activity.params.policy_ids.count() == 1",
      { activity: DELETE_POLICIES },
      "MissingField",
      "activity.params has no field 'policy_ids' for ACTIVITY_TYPE_DELETE_POLICIES",
    );
  });
  it("wallet.id where the activity names no wallet is AbsentKeyword (no short-circuit past it)", () => {
    runtimeError(
      "condition",
      "activity.action == 'SIGN' && wallet.id == 'W'",
      { activity: CREATE_USERS },
      "AbsentKeyword",
      "'wallet' is not available",
    );
  });
  it("false && <error> is an error, not false (no short-circuit)", () => {
    runtimeError("condition", "false && activity.params.nope == 'x'", { activity: CREATE_USERS }, "MissingField", "'nope'");
  });
  it("true || <error> is an error, not true", () => {
    runtimeError("condition", "true || activity.params.nope == 'x'", { activity: CREATE_USERS }, "MissingField");
  });
  it("an index past the end of a list is IndexOutOfRange", () => {
    runtimeError(
      "condition",
      "activity.params.user_ids[5] == 'x'",
      { activity: deleteUsers(["u1"]) },
      "IndexOutOfRange",
      "index 5 is out of range for 'activity.params.user_ids' (length 1)",
    );
  });
  it("a slice beyond the end of a string is IndexOutOfRange", () => {
    runtimeError(
      "condition",
      "activity.kind[0..99] == 'x'",
      { activity: CREATE_USERS },
      "IndexOutOfRange",
      "slice [0..99] is out of range for 'activity.kind' (length 12)",
    );
  });
  it("negative indexes and reversed slices are IndexOutOfRange", () => {
    runtimeError("condition", "'abc'[-1] == 'a'", {}, "IndexOutOfRange");
    runtimeError("condition", "'abc'[2..1] == ''", {}, "IndexOutOfRange");
    runtimeError("condition", "[1,2][1..3].count() == 1", {}, "IndexOutOfRange");
  });
  it("lambdas evaluate every element: an error on a later element still fails", () => {
    runtimeError(
      "condition",
      "activity.params.user_ids.any(u, u == 'a1234' || u[3] == 'x')",
      { activity: deleteUsers(["a1234", "b"]) },
      "IndexOutOfRange",
    );
    runtimeError("condition", "['a', 'b'].any(u, u == 'a' || u[1] == 'x')", {}, "IndexOutOfRange");
    runtimeError("condition", "['a', 'bc'].all(u, u[1] == 'x')", {}, "IndexOutOfRange");
    runtimeError("condition", "['a', 'bc'].filter(u, u[1] == 'c').count() == 1", {}, "IndexOutOfRange");
  });
  it("dynamic values of the wrong type are TypeMismatch", () => {
    const env = {
      activity: activity("ACTIVITY_TYPE_DELETE_API_KEYS", "CREDENTIAL", "DELETE", { user_id: "u", api_key_ids: ["k"], n: 3n, flag: true }),
    };
    runtimeError(
      "condition",
      "activity.params.api_key_ids == 'x'",
      env,
      "TypeMismatch",
      "'activity.params.api_key_ids' is list, expected string",
    );
    runtimeError("condition", "activity.params.user_id == 1", env, "TypeMismatch", "is string, expected int");
    runtimeError("condition", "activity.params.user_id.count() == 1", env, "TypeMismatch", "expected list");
    runtimeError("condition", "activity.params.n > activity.params.user_id", env, "TypeMismatch");
    runtimeError("condition", "activity.params.user_id == activity.params.n", env, "TypeMismatch", "cannot compare string with int");
    runtimeError("condition", "activity.params.api_key_ids == activity.params.api_key_ids", env, "TypeMismatch", "not defined for lists");
    runtimeError("condition", "activity.params.user_id", env, "TypeMismatch", "expected bool");
    runtimeError("condition", "activity.params.user_id.x == 'y'", env, "TypeMismatch");
    runtimeError("condition", "1 in activity.params.api_key_ids", env, "TypeMismatch");
    runtimeError("condition", "activity.params.flag.any(x, true)", env, "TypeMismatch");
  });
  it("params look-ups ignore inherited properties", () => {
    runtimeError("condition", "activity.params.constructor == 'x'", { activity: CREATE_USERS }, "MissingField");
    runtimeError("condition", "activity.params.toString == 'x'", { activity: CREATE_USERS }, "MissingField");
  });
  it("a keyword whose object was not supplied is AbsentKeyword", () => {
    runtimeError("condition", "activity.kind == 'X'", {}, "AbsentKeyword", "'activity'");
    runtimeError("consensus", "approvers.count() >= 1", {}, "AbsentKeyword", "'approvers'");
    runtimeError("consensus", "credentials.count() >= 1", {}, "AbsentKeyword", "'credentials'");
    runtimeError("time", "time.now > Timestamp('2026-01-01T00:00:00Z')", {}, "AbsentKeyword", "time.now");
    runtimeError("time", "CronSpan('0 9 * * *', '1h', 'UTC')", {}, "AbsentKeyword");
  });
  it("a time.now outside 1970–9999 is InvalidInput", () => {
    runtimeError("time", "CronSpan('0 9 * * *', '1h', 'UTC')", { nowMs: Number.NaN }, "InvalidInput");
    runtimeError("time", "time.now > Timestamp('2026-01-01T00:00:00Z')", { nowMs: 1e20 }, "InvalidInput");
    runtimeError("time", "time.now > Timestamp('2026-01-01T00:00:00Z')", { nowMs: -1 }, "InvalidInput");
  });
});

// ---------------------------------------------------------------- section 9: evaluates normally

describe("section 9: accepted and evaluated normally", () => {
  const cases: [Field, string, EvalEnv, boolean][] = [
    ["condition", "true", {}, true],
    ["condition", "!(activity.action == 'DELETE')", { activity: CREATE_USERS }, true],
    ["condition", "!(activity.action == 'DELETE')", { activity: DELETE_POLICIES }, false],
    ["condition", "activity.params.user_ids.count == 1", { activity: deleteUsers(["u1"]) }, true],
    ["condition", "activity.params.user_ids.count == 1", { activity: deleteUsers(["u1", "u2"]) }, false],
    ["condition", "'abc'[0] == 'a'", {}, true],
    ["condition", "'abc'[0..2] == 'ab'", {}, true],
    ["condition", "[1,2,3][0..2].count() == 2", {}, true],
    ["condition", "2 in [1,2,3][0..2]", {}, true],
    ["condition", "3 in [1,2,3][0..2]", {}, false],
    ["condition", "1 in [1, 2, 3]", {}, true],
    ["condition", "[1,1,1].all(x, x == 1)", {}, true],
    ["condition", "[1,2,1].all(x, x == 1)", {}, false],
    ["condition", "[1,2,3].filter(x, x == 1).count() == 1", {}, true],
    ["condition", "170141183460469231731687303715884105728 > 1", {}, true],
    ["consensus", "approvers.any(u, u.tags.any(t, t == 'x'))", { approvers: [user("a"), user("b", ["y", "x"])] }, true],
    ["consensus", "approvers.any(u, u.tags.any(t, t == 'x'))", { approvers: [user("a", ["y"])] }, false],
    ["consensus", "approvers.count() >= 2\n && approvers.any(u, u.id == 'x')", { approvers: [user("x"), user("y")] }, true],
    ["consensus", "approvers.count() >= 2\n && approvers.any(u, u.id == 'x')", { approvers: [user("x")] }, false],
  ];
  for (const [field, source, env, expected] of cases) {
    it(`${JSON.stringify(source)} → ${expected}`, () => {
      assert.equal(evaluate(field, source, env), expected);
    });
  }
});

// ---------------------------------------------------------------- section 8 examples

describe("section 8: example policies", () => {
  // [#, consensus, condition, time] exactly as in the table; null = absent.
  const examples: [number, string | null, string | null, string | null][] = [
    [1, "approvers.any(user, user.id == '<USER_ID>')", "activity.resource == 'WALLET' && activity.action == 'CREATE'", null],
    [2, "approvers.any(user, user.tags.contains('<USER_TAG_ID>'))", "activity.resource == 'USER' && activity.action == 'CREATE'", null],
    [
      3,
      "approvers.filter(user, user.tags.contains('<USER_TAG_ID>')).count() >= 2",
      "activity.resource == 'POLICY' && activity.action == 'CREATE'",
      null,
    ],
    [
      4,
      "approvers.filter(user, user.tags.contains('<TAG_A>') || user.tags.contains('<TAG_B>')).count() >= 2",
      "activity.resource == 'POLICY' && activity.action == 'CREATE'",
      null,
    ],
    [
      5,
      "approvers.any(user, user.tags.contains('<SECURITY_TAG_ID>') || user.tags.contains('<OPS_TAG_ID>')) && (approvers.filter(user, user.tags.contains('<SECURITY_TAG_ID>')).count() >= 1 && approvers.filter(user, user.tags.contains('<OPS_TAG_ID>')).count() >= 2)",
      "activity.resource == 'POLICY' && (activity.action == 'CREATE' || activity.action == 'UPDATE' || activity.action == 'DELETE')",
      null,
    ],
    [6, "approvers.any(user, user.tags.contains('<USER_TAG_ID>'))", "activity.action == 'DELETE'", null],
    [7, "approvers.any(user, user.id == '<YOUR_API_USER_ID>')", "activity.resource == 'ORGANIZATION' && activity.action == 'CREATE'", null],
    [8, "approvers.any(user, user.id == '<YOUR_API_USER_ID>')", "activity.resource == 'AUTH' && activity.action == 'CREATE'", null],
    [
      9,
      "approvers.any(user, user.id == '<YOUR_API_USER_ID>')",
      "activity.resource in ['AUTH', 'OTP'] && activity.action in ['CREATE','VERIFY']",
      null,
    ],
    [10, "approvers.any(user, user.id == '<YOUR_API_USER_ID>')", "activity.type == 'ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2'", null],
    [11, "approvers.any(user, user.id == '<YOUR_API_USER_ID>')", "activity.kind == 'CREATE_READ_WRITE_SESSION'", null],
    [12, "approvers.any(user, user.id == '<YOUR_API_USER_ID>')", "activity.kind == 'SIGN_TRANSACTION'", null],
    [
      13,
      "credentials.any(credential, credential.type == 'CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR')",
      "activity.type == 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2'",
      null,
    ],
    [
      14,
      "credentials.any(credential, credential.public_key == '<YOUR_CREDENTIAL_PUBLIC_KEY>')",
      "activity.type == 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2'",
      null,
    ],
    [
      15,
      "approvers.any(user, user.id == '<USER_ID>')",
      "activity.type == 'ACTIVITY_TYPE_DELETE_USERS' && activity.params.user_ids.count() == 1 && '<USER_ID>' in activity.params.user_ids",
      null,
    ],
    [
      16,
      "approvers.any(user, user.id == '<YOUR_API_USER_ID>')",
      "(activity.resource == 'AUTH' && activity.action == 'CREATE') || (activity.resource == 'ORGANIZATION' && activity.action == 'CREATE')",
      null,
    ],
    [
      17,
      "approvers.any(user, user.id == '<YOUR_API_USER_ID>')",
      "(activity.resource == 'AUTH' && activity.action == 'CREATE') || (activity.resource == 'OTP' && activity.action == 'CREATE') || (activity.resource == 'OTP' && activity.action == 'VERIFY') || (activity.resource == 'ORGANIZATION' && activity.action == 'CREATE')",
      null,
    ],
    [
      18,
      "approvers.any(user, user.id == '<YOUR_API_USER_ID>')",
      "activity.kind in ['INIT_OTP', 'VERIFY_OTP', 'OTP_LOGIN', 'CREATE_SUB_ORGANIZATION']",
      null,
    ],
    [19, "approvers.any(user, user.id == '<YOUR_API_USER_ID>')", "activity.type == 'ACTIVITY_TYPE_INIT_OTP_V2'", null],
    [20, "approvers.count() >= 2", "activity.type == 'ACTIVITY_TYPE_CREATE_POLICY_V3'", null],
    [21, "approvers.count() >= 2", "activity.resource == 'MFA_POLICY' && activity.action == 'DELETE'", null],
    [22, null, "activity.resource == 'MFA_POLICY' && activity.action == 'CREATE'", null],
    [23, "approvers.any(user, user.id == '<AGENT_ID>') && approvers.any(user, user.id == '<HUMAN_ID>')", "activity.action == 'SIGN'", null],
    [
      24,
      "approvers.any(user, user.id == '<AGENT_ID>')",
      "activity.type == 'ACTIVITY_TYPE_DELETE_USERS' && activity.params.user_ids.count() == 1 && '<AGENT_ID>' in activity.params.user_ids",
      null,
    ],
    [25, "approvers.any(u, u.tags.contains('browser-agent')) && approvers.any(u, u.tags.contains('payment-agent'))", null, null],
    [26, "approvers.filter(u, u.tags.contains('recovery-operator')).count() >= 2", null, null],
    [27, "approvers.filter(user, user.tags.contains('<OPS_TEAM_TAG_ID>')).count() > 1", null, null],
    [28, "approvers.count() == 1", null, null],
    [29, "approvers.any(user, user.id == '4b894565-fa11-42fc-b813-5bf4ea3d53f9')", null, null],
    [
      30,
      "approvers.any(user, user.id == '<USER_ID>')",
      "activity.kind == 'SIGN_TRANSACTION'",
      "time.now >= Timestamp('2026-03-01T00:00:00Z') && time.now < Timestamp('2026-04-01T00:00:00Z')",
    ],
    [
      31,
      "approvers.any(user, user.id == '<USER_ID>')",
      "activity.kind == 'SIGN_TRANSACTION'",
      "CronSpan('0 9 * * 1-5', '8h', 'America/New_York')",
    ],
    [
      32,
      "approvers.any(user, user.id == '<USER_ID>')",
      "activity.kind == 'SIGN_TRANSACTION'",
      "CronSpan('0 22 * * *', '8h', 'America/New_York')",
    ],
    [
      33,
      "approvers.any(user, user.id == '<USER_ID>')",
      "activity.kind == 'SIGN_TRANSACTION'",
      "CronSpan('0 9 * * 1-5', '8h', 'America/New_York') && time.now < Timestamp('2026-01-01T00:00:00Z')",
    ],
    [
      34,
      "approvers.any(user, user.tags.contains('<OPS_TAG_ID>'))",
      "activity.kind == 'CREATE_POLICY'",
      "CronSpan('0 9 * * 1-5', '8h', 'America/New_York')",
    ],
    [35, null, "activity.resource == 'POLICY'", "!CronSpan('0 9 * * 1-5', '8h', 'America/New_York')"],
    [36, null, "activity.kind == 'DELETE_USERS'", "CronSpan('0 2 * * *', '1h', 'UTC')"],
    [37, "approvers.any(user, user.id == '<USER_ID>')", "activity.action == 'SIGN' && wallet.id == '<WALLET_ID>'", null],
    [38, "approvers.any(user, user.id == '<USER_ID>')", "wallet.id == '<WALLET_ID>' || private_key.id == '<PRIVATE_KEY_ID>'", null],
    [39, "approvers.any(user, user.id == '<YOUR_API_USER_ID>')", "activity.type == 'ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT'", null],
    [40, "approvers.any(user, user.id == '<YOUR_API_USER_ID>')", "activity.type == 'ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT'", null],
    [
      41,
      "approvers.any(user, user.id == '<YOUR_API_USER_ID>')",
      "activity.type == 'ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT' && activity.params.endpoint_id == '<ENDPOINT_ID>'",
      null,
    ],
    [
      42,
      "approvers.any(user, user.id == '<ADMIN_ID>')",
      "activity.kind == 'DELETE_API_KEYS' && activity.params.user_id == '<SERVICE_USER_ID>' && activity.params.api_key_ids.count() <= 2",
      null,
    ],
    [
      43,
      "approvers.any(user, user.id == '<ADMIN_ID>')",
      "activity.kind == 'CREATE_API_KEYS' && activity.params.user_id == '<SERVICE_USER_ID>'",
      null,
    ],
    [
      44,
      "approvers.any(user, user.id == '<ADMIN_ID>')",
      "activity.kind == 'DELETE_POLICIES' && activity.params.policy_ids.count() == 1",
      null,
    ],
    [45, null, "activity.resource == 'AUTH' && activity.params.session_profile_id == '11111111-1111-1111-1111-111111111111'", null],
    [46, null, "activity.action == 'DELETE' && activity.resource != 'POLICY'", null],
    [47, null, "true", null],
    [48, "approvers.any(user, user.id == '<USER_ID>')", "activity.action != 'EXPORT'", null],
    [
      49,
      "approvers.any(u, u.email == 'ops@example.com')",
      "activity.kind == 'CREATE_TVC_APP' || activity.kind == 'CREATE_TVC_DEPLOYMENT'",
      null,
    ],
    [
      50,
      "credentials.any(c, c.type == 'CREDENTIAL_TYPE_API_KEY_P256' && c.user_id == '<SERVICE_USER_ID>')",
      "activity.kind in ['SET_IP_ALLOWLIST', 'REMOVE_IP_ALLOWLIST']",
      null,
    ],
  ];

  for (const [n, consensus, condition, time] of examples) {
    it(`#${n} compiles in every field`, () => {
      if (consensus !== null) compile("consensus", bind(consensus));
      if (time !== null) compile("time", bind(time));
      if (condition !== null) compile("condition", bind(condition));
    });
  }

  const cond = (n: number) => bind(examples[n - 1]![2]!);
  const cons = (n: number) => bind(examples[n - 1]![1]!);

  it("#15 self-deletion: only [USER_ID] matches; other types error", () => {
    assert.equal(evaluate("condition", cond(15), { activity: deleteUsers(["id-user-id"]) }), true);
    assert.equal(evaluate("condition", cond(15), { activity: deleteUsers(["id-user-id", "other"]) }), false);
    assert.equal(evaluate("condition", cond(15), { activity: deleteUsers(["other"]) }), false);
    runtimeError("condition", cond(15), { activity: CREATE_USERS }, "MissingField");
  });

  it("#3 and #5 count tagged approvers", () => {
    const tagged = (id: string, ...tags: string[]) => user(id, tags.map(bind));
    assert.equal(evaluate("consensus", cons(3), { approvers: [tagged("a", "<USER_TAG_ID>")] }), false);
    assert.equal(evaluate("consensus", cons(3), { approvers: [tagged("a", "<USER_TAG_ID>"), tagged("b", "<USER_TAG_ID>")] }), true);
    const both = tagged("s", "<SECURITY_TAG_ID>", "<OPS_TAG_ID>");
    assert.equal(evaluate("consensus", cons(5), { approvers: [both, tagged("o", "<OPS_TAG_ID>")] }), true);
    assert.equal(evaluate("consensus", cons(5), { approvers: [both] }), false);
  });

  it("#9 and #18 membership on resource, action and kind", () => {
    const initOtp = activity("ACTIVITY_TYPE_INIT_OTP_V3", "OTP", "CREATE");
    assert.equal(evaluate("condition", cond(9), { activity: initOtp }), true);
    assert.equal(evaluate("condition", cond(18), { activity: initOtp }), true);
    assert.equal(evaluate("condition", cond(18), { activity: activity("ACTIVITY_TYPE_OAUTH_LOGIN", "AUTH", "CREATE") }), false);
  });

  it("#13 and #50 read credentials", () => {
    const cred = (type: string, user_id = "u") => ({ id: "c", user_id, type, credential_id: "", public_key: "02ab" });
    assert.equal(
      evaluate("consensus", cons(13), {
        credentials: [cred("CREDENTIAL_TYPE_API_KEY_P256"), cred("CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR")],
      }),
      true,
    );
    assert.equal(evaluate("consensus", cons(13), { credentials: [cred("CREDENTIAL_TYPE_API_KEY_P256")] }), false);
    assert.equal(evaluate("consensus", cons(50), { credentials: [cred("CREDENTIAL_TYPE_API_KEY_P256", "id-service-user-id")] }), true);
    assert.equal(evaluate("condition", cond(50), { activity: activity("ACTIVITY_TYPE_SET_IP_ALLOWLIST", "CONFIG", "UPDATE") }), true);
  });

  it("#28 is true with one approver and false with two", () => {
    assert.equal(evaluate("consensus", cons(28), { approvers: [user("a")] }), true);
    assert.equal(evaluate("consensus", cons(28), { approvers: [user("a"), user("b")] }), false);
  });

  it("#41–#45 read exposed params and error on the others", () => {
    const endpoint = (type: string, id: string) => activity(type, "WEBHOOK_ENDPOINT", "DELETE", { endpoint_id: id });
    assert.equal(evaluate("condition", cond(41), { activity: endpoint("ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT", "id-endpoint-id") }), true);
    assert.equal(evaluate("condition", cond(41), { activity: endpoint("ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT", "other") }), false);
    assert.equal(evaluate("condition", cond(41), { activity: endpoint("ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT", "id-endpoint-id") }), false);
    runtimeError(
      "condition",
      cond(41),
      { activity: activity("ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT", "WEBHOOK_ENDPOINT", "CREATE") },
      "MissingField",
    );

    const delKeys = (ids: string[]) =>
      activity("ACTIVITY_TYPE_DELETE_API_KEYS", "CREDENTIAL", "DELETE", { user_id: "id-service-user-id", api_key_ids: ids });
    assert.equal(evaluate("condition", cond(42), { activity: delKeys(["k1", "k2"]) }), true);
    assert.equal(evaluate("condition", cond(42), { activity: delKeys(["k1", "k2", "k3"]) }), false);
    runtimeError("condition", cond(42), { activity: CREATE_USERS }, "MissingField");

    const createKeys = activity("ACTIVITY_TYPE_CREATE_API_KEYS_V2", "CREDENTIAL", "CREATE", { user_id: "id-service-user-id" });
    assert.equal(evaluate("condition", cond(43), { activity: createKeys }), true);
    assert.equal(evaluate("condition", cond(43), { activity: delKeys(["k"]) }), false);

    runtimeError("condition", cond(44), { activity: DELETE_POLICIES }, "MissingField");

    const login = (profile: string) => activity("ACTIVITY_TYPE_STAMP_LOGIN", "AUTH", "CREATE", { session_profile_id: profile });
    assert.equal(evaluate("condition", cond(45), { activity: login("11111111-1111-1111-1111-111111111111") }), true);
    assert.equal(evaluate("condition", cond(45), { activity: login("") }), false);
    runtimeError("condition", cond(45), { activity: activity("ACTIVITY_TYPE_CREATE_OAUTH2_CREDENTIAL", "AUTH", "CREATE") }, "MissingField");
  });

  it("#30 and #35 time fields", () => {
    const march = bind(examples[29]![3]!);
    assert.equal(evaluate("time", march, { nowMs: Date.parse("2026-03-15T12:00:00Z") }), true);
    assert.equal(evaluate("time", march, { nowMs: Date.parse("2026-04-15T12:00:00Z") }), false);
    const freeze = examples[34]![3]!;
    assert.equal(evaluate("time", freeze, { nowMs: Date.parse("2026-03-02T15:00:00Z") }), false); // Monday 10:00 EST
    assert.equal(evaluate("time", freeze, { nowMs: Date.parse("2026-03-02T23:00:00Z") }), true); // Monday 18:00 EST
  });

  it("#49 reads User.email", () => {
    assert.equal(evaluate("consensus", cons(49), { approvers: [user("a", [], "ops@example.com")] }), true);
    assert.equal(evaluate("consensus", cons(49), { approvers: [user("a", [], "OPS@example.com")] }), false);
  });
});

// ---------------------------------------------------------------- signing keywords and environments

describe("keywords and environments", () => {
  it("the signing keywords are condition keywords: refused in consensus and time", () => {
    for (const kw of SIGNING_KEYWORDS) {
      for (const field of ["consensus", "time"] as const) {
        rejects(field, `${kw}.x == 'y'`, "1:1", `'${kw}' is a condition keyword and is not available in the ${field} field`);
      }
    }
    rejects("consensus", "approvers.any(u, secret.static_properties['kind'] == u.id)", "1:18", "'secret' is a condition keyword");
  });

  it("in condition they type-check as docs/policy-language.md §4.1 and §4.3 describe them", () => {
    for (const source of [
      "wallet.id == 'W' && !wallet.exported && !wallet.imported && wallet.label == 'x'",
      "wallets.count() > 0 && wallets.any(w, w.label == 'cold')",
      "private_key.id == 'K' && private_key.tags.contains('t') && private_key.label == 'l'",
      "wallet_account.address == '0xabc'",
      "activity.kind == 'X' || eth.tx.chain_id == 1",
      "eth.tx.contract_call_args['wad'] > 1000",
      "eth.eip_712.domain.chain_id == 8453",
      "solana.tx.transfers.all(t, t.to in ['a', 'b'])",
      "tron.tx.data[0..8] == 'a9059cbb'",
      "bitcoin.tx.outputs.count() == 1 && tempo.tx.to == 'x'",
      "secret.static_properties['kind'] == 'api'",
    ])
      compile("condition", source);
    // The bound structs are closed: unknown fields and wrong types are creation-time errors.
    rejects("condition", "wallet.name == 'x'", "1:8", "Wallet has no field 'name'");
    rejects("condition", "wallet.exported == 'yes'", "1:20", "expected bool, found string");
    rejects("condition", "wallet_account.id == 'x'", "1:16", "WalletAccount has no field 'id'");
  });

  it("signing objects are always absent here: AbsentKeyword, whatever the activity", () => {
    const env = { activity: { ...CREATE_USERS, wallets: [walletFacts("W", "cold")] } };
    for (const [source, kw] of [
      ["private_key.id == 'K'", "private_key"],
      ["wallet_account.address == 'a'", "wallet_account"],
      ["eth.tx.to == 'x'", "eth"],
      ["eth.tx.contract_call_args['wad'] > 1000", "eth"],
      ["solana.tx.transfers.any(t, t.to == 'x')", "solana"],
      ["tron.tx.to == 'x'", "tron"],
      ["bitcoin.tx.fee == 1", "bitcoin"],
      ["tempo.tx.to == 'x'", "tempo"],
      ["secret.static_properties['kind'] == 'x'", "secret"],
    ] as const) {
      runtimeError("condition", source, env, "AbsentKeyword", `'${kw}' is not available`);
      runtimeError("condition", `true || ${source}`, env, "AbsentKeyword");
    }
  });

  it("wallet is the one wallet an activity names; wallets all of them", () => {
    const named = (...ws: ReturnType<typeof walletFacts>[]) => ({ activity: { ...CREATE_USERS, wallets: ws } });
    const cold = walletFacts("W1", "cold", true),
      hot = walletFacts("W2", "hot", false, true);
    assert.equal(
      evaluate("condition", "wallet.label == 'cold' && wallet.exported && !wallet.imported && wallet.id == 'W1'", named(cold)),
      true,
    );
    assert.equal(evaluate("condition", "wallet.label == 'cold'", named(hot)), false);
    assert.equal(evaluate("condition", "wallet.imported", named(hot)), true);
    runtimeError("condition", "wallet.label == 'cold'", named(cold, hot), "AbsentKeyword", "names 2 wallets");
    runtimeError("condition", "wallet.label == 'cold'", named(), "AbsentKeyword", "'wallet' is not available");
    runtimeError("condition", "wallet.label == 'cold'", { activity: CREATE_USERS }, "AbsentKeyword");
    runtimeError("condition", "wallets.count() == 0", { activity: CREATE_USERS }, "AbsentKeyword", "'wallets' is not available");
    assert.equal(
      evaluate("condition", "wallets.count() == 2 && wallets.any(w, w.label == 'hot') && !wallets.all(w, w.exported)", named(cold, hot)),
      true,
    );
    assert.equal(evaluate("condition", "wallets[1].label == 'hot'", named(cold, hot)), true);
  });

  it("lambda variables may not be named like a keyword", () => {
    rejects("consensus", "approvers.any(approvers, true)", "1:15", "'approvers' is a keyword and cannot be used as a lambda variable name");
    rejects("consensus", "approvers.any(activity, true)", "1:15", "'activity' is a keyword");
    rejects("condition", "['a'].any(time, true)", "1:11", "'time' is a keyword");
    rejects("condition", "['a'].any(wallet, true)", "1:11", "'wallet' is a keyword");
  });

  it("lambda variables are scoped to their lambda, and inner bindings shadow outer ones", () => {
    rejects("consensus", "approvers.any(u, true) && u.id == 'x'", "1:27", "unknown identifier 'u'");
    assert.equal(evaluate("condition", "[['a', 'b'], ['c']].any(x, x.any(x, x == 'c'))", {}), true);
    assert.equal(evaluate("condition", "['a', 'b'].all(x, ['z'].any(y, y != x))", {}), true);
  });

  it("time is a time keyword and the functions belong to time", () => {
    rejects(
      "condition",
      "time.now > Timestamp('2026-01-01T00:00:00Z')",
      "1:1",
      "'time' is a time keyword and is not available in the condition field",
    );
    rejects(
      "consensus",
      "Timestamp('2026-01-01T00:00:00Z') == Timestamp('2026-01-01T00:00:00Z')",
      "1:1",
      "Timestamp is only available in the time field",
    );
    rejects("time", "timestamp('2026-01-01T00:00:00Z') < time.now", "1:1", "unknown function 'timestamp'");
    rejects("condition", "size(activity.kind) == 1", "1:1", "unknown function 'size'");
    rejects("time", "Timestamp == 1", "1:1", "Timestamp is a function");
    rejects("time", "Timestamp() < time.now", "1:1", "Timestamp expects 1 argument, found 0");
    rejects("time", "time.now == Timestamp(time.now)", "1:23", "must be string literals");
    rejects("time", "CronSpan('0 9 * * *', '1h', 'U' )", "1:29", "unknown time zone");
    rejects("time", "time.later > time.now", "1:6", "time has no field 'later'");
  });

  it("closed structs reject unknown fields; methods need the right receivers", () => {
    rejects("condition", "activity.foo == 'x'", "1:10", "activity has no field 'foo'");
    rejects("consensus", "credentials.any(c, c.name == 'x')", "1:22", "Credential has no field 'name'");
    rejects("consensus", "approvers.any(u, u.id.count() == 1)", "1:23", "count is only defined on lists, found string");
    rejects("consensus", "approvers.any(u, u.id.contains('a'))", "1:23", "contains is only defined on lists, found string");
    rejects("condition", "activity.kind.any(x, true)", "1:15", "any is only defined on lists, found string");
    rejects("condition", "activity.params.count() == 1", "1:17", "count is only defined on lists, found activity.params");
    rejects("condition", "activity.kind.length == 1", "1:15", "string has no field 'length'");
    rejects("consensus", "approvers.map(u, u.id)", "1:11", "unknown method 'map'");
    rejects("consensus", "approvers.any == true", "1:15", "expected '(' after 'any'");
    rejects("consensus", "approvers.count(1) == 1", "1:17", "count takes no arguments");
    rejects("consensus", "approvers.any(u, u.tags.contains('a', 'b'))", "1:37", "contains expects 1 argument");
    rejects("consensus", "approvers[0] == approvers[1]", "1:14", "'==' is not defined for User");
    rejects("consensus", "approvers[0].id == 'x' && approvers['a'].id == 'y'", "1:37", "an index must be int, found string");
    rejects("consensus", "approvers[0][0] == 'x'", "1:1", "cannot index or slice User");
  });

  it("operator typing follows docs/policy-language.md §3.2 exactly", () => {
    rejects("condition", "true == 1", "1:9", "expected bool, found int");
    rejects("condition", "'a' == true", "1:8", "expected string, found bool");
    rejects("condition", "true < false", "1:6", "'<' is not defined for bool");
    rejects("condition", "1 < 'a'", "1:5", "expected int, found string");
    rejects("condition", "activity.kind && true", "1:1", "the operands of '&&' must be bool, found string");
    rejects("condition", "true || 1", "1:9", "the operands of '||' must be bool, found int");
    rejects("condition", "'a' in 'abc'", "1:8", "'in' needs a list, found string");
    rejects("condition", "[1] in [[1]]", "1:1", "'in' cannot compare list<int> values");
    rejects("condition", "[[1], ['a']].count() == 2", "1:7", "list elements must all have one type");
    rejects("time", "time.now in [1]", "1:1", "expected int, found timestamp");
    rejects("time", "time.now == 1", "1:13", "expected timestamp, found int");
    rejects("time", "time == time", "1:6", "'==' is not defined for time");
    assert.equal(evaluate("condition", "true == true && false != true", {}), true);
    assert.equal(
      evaluate("condition", "1 == 170141183460469231731687303715884105728 || 2 < 170141183460469231731687303715884105728", {}),
      true,
    );
    assert.equal(evaluate("condition", "[1, 170141183460469231731687303715884105728].count() == 2", {}), true);
    assert.equal(evaluate("condition", "'x' in [] || [].count() == 0", {}), true);
    assert.equal(evaluate("condition", "[].all(x, x == 1) && ![].any(x, x == 1) && [[], [1]][1][0] == 1", {}), true);
    assert.equal(evaluate("condition", "-170141183460469231731687303715884105728 < -1 && -0 == 0", {}), true);
    assert.equal(evaluate("condition", "115792089237316195423570985008687907853269984665640564039457584007913129639935 > 0", {}), true);
    rejects("condition", "-170141183460469231731687303715884105729 < 0", "1:1", "integer literal out of range");
    rejects("condition", "-activity.kind == 'x'", "1:1", "'-' is only allowed directly before an integer literal");
    assert.equal(evaluate("condition", "007 == 7", {}), true);
  });

  it("dynamic params mix with static types where the runtime value fits", () => {
    const env = {
      activity: activity("ACTIVITY_TYPE_INIT_OTP_AUTH_V3", "AUTH", "CREATE", { otp_length: 6n, ids: ["a", "b"], flag: true, empty: "" }),
    };
    assert.equal(evaluate("condition", "activity.params.otp_length == 6 && activity.params.otp_length >= 4", env), true);
    assert.equal(evaluate("condition", "activity.params.flag && !(activity.params.empty != '')", env), true);
    assert.equal(evaluate("condition", "activity.params.ids.contains('b') && activity.params.ids[0] == 'a'", env), true);
    assert.equal(evaluate("condition", "activity.params.ids[0..1].count() == 1 && activity.params.ids.all(i, i in ['a', 'b'])", env), true);
    assert.equal(evaluate("condition", "activity.params.ids.filter(i, i != 'a').count() == 1", env), true);
    assert.equal(evaluate("condition", "activity.kind in [activity.params.empty, 'INIT_OTP_AUTH']", env), true);
    assert.equal(evaluate("condition", "activity.params.otp_length in [1, 6]", env), true);
    assert.equal(evaluate("condition", "activity.params.empty == activity.params.empty", env), true);
  });
});

// ---------------------------------------------------------------- lexical details

describe("lexical rules", () => {
  it("strings: \\' and \\\\ escapes, everything else literal", () => {
    assert.equal(evaluate("condition", String.raw`'it\'s' == "it's"`.replace(`"it's"`, String.raw`'it\'s'`), {}), true);
    const c = compile(
      "condition",
      String.raw`['it\'s', 'a\\b', 'line
break', '"', '#'].count() == 5`,
    );
    assert.deepEqual([...c.stringLiterals], ["it's", "a\\b", "line\nbreak", '"', "#"]);
    rejects("condition", String.raw`'a\nb' == 'x'`, "1:3", "invalid escape '\\n'");
    rejects("condition", "'a\\", "1:3", "invalid escape end of input");
    rejects("condition", "activity.kind == 'abc", "1:18", "unterminated string literal");
  });

  it("comments, braces and stray characters are lexical errors", () => {
    rejects("condition", "true # comment", "1:6", "no comments");
    rejects("condition", "true // comment", "1:6", "no comments");
    rejects("condition", "{ id: 'x' }", "1:1", "struct literals are not supported");
    rejects("condition", "true & false", "1:6", "logical and is written '&&'");
    rejects("condition", "true | false", "1:6", "logical or is written '||'");
    rejects("condition", "activity.kind == `x`", "1:18", "unexpected character '`'");
    rejects("condition", "true ? 1 : 2", "1:6", "unexpected character '?'");
    rejects("condition", "true\u00a0&& true", "1:5", "unexpected character U+00A0");
    rejects("condition", "1.5 > 1", "1:3", "expected a field or method name after '.', found integer 5");
    rejects("condition", "0x10 == 16", "1:2", "unexpected identifier 'x10'");
  });

  it("'..' lexes before '.'; slices need both bounds; lists take no trailing comma", () => {
    assert.equal(evaluate("condition", "[1,2,3][0..2].count() == 2 && 'abc'[1..3] == 'bc'", {}), true);
    rejects("condition", "'abc'[..2] == 'ab'", "1:7", "open-ended slices");
    rejects("condition", "[1, 2,] == [1]", "1:6", "trailing comma in list");
    rejects("condition", "[1 2].count() == 2", "1:4", "expected ']' to close the list, found integer 2");
  });

  it("string index and slice count code points", () => {
    assert.equal(evaluate("condition", "'😀é'[0] == '😀' && '😀é'[1] == 'é' && '😀é'[0..2] == '😀é' && 'a😀b'[2] == 'b'", {}), true);
    runtimeError("condition", "'😀'[1] == 'x'", {}, "IndexOutOfRange", "(length 1)");
  });

  it("reports line and column on multi-line input (columns count code points)", () => {
    rejects("condition", "activity.kind == 'X' &&\n  activity.foo == 'y'", "2:12", "activity has no field 'foo'");
    rejects("condition", "activity.kind == 'X'\r\n  && activity.kind == 1", "2:23", "expected string, found int");
    rejects("condition", "activity.kind == 'a\nb' &&\n\t1 == 'x'", "3:7", "expected int, found string");
    rejects("condition", "'é😀' == 1", "1:9", "expected string, found int");
    rejects("consensus", "approvers.any(u,\n  u.id == 'x'\n  && u.nick == 'y')", "3:8", "User has no field 'nick'");
    rejects("condition", "(\n(\ntrue\n)", "4:2", "expected ')' to close '(', found end of input");
  });
});

// ---------------------------------------------------------------- Timestamp and durations

describe("Timestamp literals", () => {
  const ok = [
    "2026-03-01T00:00:00Z",
    "2026-03-01T00:00:00z",
    "2026-03-01t00:00:00Z",
    "2026-03-01T00:00:00+00:00",
    "2026-03-01T00:00:00-00:00",
    "2026-03-01T00:00:00.5Z",
    "2026-03-01T00:00:00.123456789Z",
    "2024-02-29T23:59:59Z",
    "2000-02-29T00:00:00Z",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59.999999999Z",
  ];
  for (const ts of ok) {
    it(`accepts ${ts}`, () => {
      compile("time", `time.now < Timestamp('${ts}')`);
    });
  }
  const bad: [string, string][] = [
    ["2026-03-01T00:00:00.1234567890Z", "at most 9 fractional digits"],
    ["2023-02-29T00:00:00Z", "day 29 does not exist"],
    ["1900-02-29T00:00:00Z", "day 29 does not exist"],
    ["2026-04-31T00:00:00Z", "day 31 does not exist"],
    ["2026-00-10T00:00:00Z", "month 00 does not exist"],
    ["2026-03-00T00:00:00Z", "day 00 does not exist"],
    ["2026-03-01T24:00:00Z", "hour 24"],
    ["2026-03-01T00:60:00Z", "minute 60"],
    ["2026-12-31T23:59:60Z", "leap seconds are not supported"],
    ["2026-03-01T00:00:61Z", "second 61"],
    ["2026-03-01 00:00:00Z", "expected an RFC 3339 date-time"],
    ["2026-03-01T00:00Z", "expected an RFC 3339 date-time"],
    ["2026-03-01", "expected an RFC 3339 date-time"],
    ["2026-03-01T00:00:00+01:00", "non-zero UTC offset +01:00"],
    ["2026-03-01T00:00:00+0000", "invalid UTC offset"],
    ["2026-03-01T00:00:00.Z", "invalid UTC offset"],
    ["2026-03-01T00:00:00", "missing UTC offset"],
    ["", "expected an RFC 3339 date-time"],
  ];
  for (const [ts, problem] of bad) {
    it(`rejects '${ts}' (${problem})`, () => {
      rejects("time", `time.now < Timestamp('${ts}')`, "1:22", problem);
    });
  }
  it("compares exactly, to the nanosecond", () => {
    assert.equal(evaluate("time", "Timestamp('2026-03-01T00:00:00.000000001Z') > Timestamp('2026-03-01T00:00:00Z')", {}), true);
    assert.equal(evaluate("time", "Timestamp('2026-03-01T00:00:00+00:00') == Timestamp('2026-03-01T00:00:00.000z')", {}), true);
    const now = { nowMs: Date.parse("2026-03-01T00:00:00.001Z") };
    assert.equal(evaluate("time", "time.now == Timestamp('2026-03-01T00:00:00.001Z')", now), true);
    assert.equal(evaluate("time", "time.now in [Timestamp('2026-03-01T00:00:00.001Z')]", now), true);
    assert.equal(evaluate("time", "time.now <= Timestamp('2026-03-01T00:00:00.000999999Z')", now), false);
    assert.equal(evaluate("time", "[time.now, Timestamp('2026-03-01T00:00:00Z')][1] < time.now", now), true);
    assert.equal(evaluate("time", "Timestamp('0001-01-01T00:00:00Z') < Timestamp('1969-12-31T23:59:59Z')", {}), true);
  });
});

describe("CronSpan arguments", () => {
  const span = (cron: string, duration: string, zone: string) => `CronSpan('${cron}', '${duration}', '${zone}')`;
  it("accepts durations up to exactly 7 days, units in order d, h, m", () => {
    for (const d of ["7d", "10080m", "168h", "1d12h", "6d23h60m", "90m", "36h", "1m", "01h"]) compile("time", span("0 9 * * *", d, "UTC"));
  });
  it("rejects durations that are too long, zero, out of order, repeated or malformed", () => {
    const cases: [string, string][] = [
      ["7d1m", "at most 7 days"],
      ["10081m", "at most 7 days"],
      ["99999999999999999999999d", "at most 7 days"],
      ["0h0m", "greater than zero"],
      ["0d", "greater than zero"],
      ["12h1d", "in the order d, h, m"],
      ["1h1h", "each at most once"],
      ["h", "expected [<n>d][<n>h][<n>m]"],
      ["", "empty duration"],
      ["-1h", "unsupported unit or character '-'"],
      ["1H", "unsupported unit or character 'H'"],
      ["1h 30m", "unsupported unit or character ' '"],
      ["1,5h", "fractional"],
    ];
    for (const [d, problem] of cases) rejects("time", span("0 9 * * *", d, "UTC"), "1:23", problem);
  });
  it("accepts the cron subset: *, numbers, ranges, lists of numbers and ranges", () => {
    for (const c of ["* * * * *", "0 9 * * 1-5", "0,15,30,45 9-17 1-7,15 1-12 0,6", "59 23 31 12 6", " 0 9 * * * ", "00 09 * * 1"]) {
      compile("time", span(c, "1h", "UTC"));
    }
  });
  it("rejects everything outside the subset", () => {
    const cases: [string, string][] = [
      ["0 9 * * 5-1", "range 5-1 is reversed"],
      ["0 9 1,,2 * *", "invalid value ''"],
      ["0 9 *,1 * *", "'*' cannot be combined"],
      ["0 9 * * ?", "'?' and '#' are not supported"],
      ["0 9 * * 1#2", "'?' and '#' are not supported"],
      ["0 9 L * *", "names and the L/W specifiers"],
      ["0 9 15W * *", "names and the L/W specifiers"],
      ["0 9 * JAN *", "month: 'JAN'"],
      ["60 * * * *", "minute: value 60 is out of range 0-59"],
      ["0 24 * * *", "hour: value 24 is out of range 0-23"],
      ["0 9 0 * *", "day-of-month: value 0 is out of range 1-31"],
      ["0 9 * 13 *", "month: value 13 is out of range 1-12"],
      ["0 9 * * 1-7", "day-of-week: value 7"],
      ["0 9-17/2 * * *", "step values"],
      ["0 9 * *", "expected 5 fields (minute hour day-of-month month day-of-week), found 4"],
      ["", "empty cron expression"],
      ["@hourly", "macros"],
    ];
    for (const [c, problem] of cases) rejects("time", span(c, "1h", "UTC"), "1:10", problem);
  });
  it("validates the zone with Intl", () => {
    for (const z of ["UTC", "Europe/Berlin", "America/New_York", "Etc/GMT+5", "Asia/Kolkata"]) compile("time", span("0 9 * * *", "1h", z));
    for (const z of ["Mars/Olympus_Mons", "", "+05:00", "America/New York", "EST5EDT/x"]) {
      rejects("time", span("0 9 * * *", "1h", z), "1:29", "unknown time zone");
    }
  });
});

// ---------------------------------------------------------------- limits, caching, facts

describe("compileExpression", () => {
  it("returns null for an absent (empty or whitespace-only) field", () => {
    for (const s of ["", " ", "\n\t \r\n"]) assert.equal(compileExpression("condition", s), null);
  });

  it("caches by (field, source)", () => {
    const a = compileExpression("consensus", "approvers.count() >= 2");
    assert.equal(compileExpression("consensus", "approvers.count() >= 2"), a);
    assert.notEqual(compileExpression("consensus", "approvers.count() >= 2 "), a);
  });

  it("rejects over-long sources and deep nesting without overflowing the stack", () => {
    rejects("condition", `activity.kind == '${"x".repeat(MAX_SOURCE_LENGTH)}'`, "1:1", "expression is too long");
    rejects("condition", `${"(".repeat(100)}true${")".repeat(100)}`, `1:${MAX_DEPTH + 1}`, "nested too deeply");
    rejects("condition", `${"!".repeat(5000)}true`, "1:64", "nested too deeply");
    rejects("condition", `${"[".repeat(5000)}`, "1:65", "nested too deeply");
    rejects("condition", `activity${".kind".repeat(1000)} == 'x'`, "1:324", "nested too deeply");
    rejects("condition", `activity${".kind".repeat(3)} == 'x'`, "1:15", "string has no field 'kind'");
    rejects("condition", `'a'${"[0]".repeat(1000)} == 'a'`, "1:191", "nested too deeply");
    compile("condition", `${"(".repeat(MAX_DEPTH - 1)}true${")".repeat(MAX_DEPTH - 1)}`);
    const long = Array.from({ length: 250 }, (_, i) => `activity.kind == 'K${i}'`).join(" || ");
    assert.ok(long.length < MAX_SOURCE_LENGTH);
    assert.equal(evaluate("condition", long, { activity: activity("ACTIVITY_TYPE_K249", "USER", "CREATE") }), true);
    const wide = Array.from({ length: 700 }, () => "true").join(" && ");
    assert.equal(evaluate("condition", wide, {}), true);
  });

  it("reports static facts: roots, User fields read and string literals", () => {
    const c = compile("consensus", "approvers.any(u, u.id == 'A' || u.tags.contains('T')) && credentials.count() > 0");
    assert.deepEqual([...c.roots].sort(), ["approvers", "credentials"]);
    assert.deepEqual([...c.userFields].sort(), ["id", "tags"]);
    assert.deepEqual([...c.stringLiterals].sort(), ["A", "T"]);
    assert.equal(c.field, "consensus");
    assert.equal(c.source, "approvers.any(u, u.id == 'A' || u.tags.contains('T')) && credentials.count() > 0");

    const count = compile("consensus", "approvers.count() >= 2");
    assert.deepEqual([...count.roots], ["approvers"]);
    assert.equal(count.userFields.size, 0);
    assert.equal(count.stringLiterals.size, 0);

    const creds = compile("consensus", "credentials.any(c, c.user_id == 'U')");
    assert.equal(creds.userFields.size, 0, "Credential fields are not User fields");

    const t = compile("time", "CronSpan('0 9 * * *', '1h', 'UTC') && time.now < Timestamp('2026-01-01T00:00:00Z')");
    assert.deepEqual([...t.roots], ["time"]);
    assert.deepEqual([...t.stringLiterals].sort(), ["0 9 * * *", "1h", "2026-01-01T00:00:00Z", "UTC"]);
  });
});

describe("activityKind", () => {
  it("drops the prefix and a trailing _V<digits>", () => {
    assert.equal(activityKind("ACTIVITY_TYPE_CREATE_USERS_V4"), "CREATE_USERS");
    assert.equal(activityKind("ACTIVITY_TYPE_OTP_LOGIN_V2"), "OTP_LOGIN");
    assert.equal(activityKind("ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8"), "CREATE_SUB_ORGANIZATION");
    assert.equal(activityKind("ACTIVITY_TYPE_SET_IP_ALLOWLIST"), "SET_IP_ALLOWLIST");
    assert.equal(activityKind("ACTIVITY_TYPE_CREATE_OAUTH2_CREDENTIAL"), "CREATE_OAUTH2_CREDENTIAL");
    assert.equal(activityKind("ACTIVITY_TYPE_CREATE_POLICY_V10"), "CREATE_POLICY");
  });
});
