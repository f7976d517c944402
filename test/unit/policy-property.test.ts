import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  compileExpression,
  PolicyCompileError,
  PolicyRuntimeError,
  type ActivityFacts,
  type CredentialFacts,
  type EvalEnv,
  type Field,
  type ParamValue,
  type UserFacts,
} from "../../src/policy/index.ts";
import { referenceEvaluate } from "../helpers/policy-reference.ts";

const FIELDS: readonly Field[] = ["condition", "consensus", "time"];

/** Compiles; anything thrown other than PolicyCompileError fails the property. Returns the expression or null. */
function compileOrReject(field: Field, source: string) {
  try {
    return compileExpression(field, source);
  } catch (err) {
    if (err instanceof PolicyCompileError) {
      assert.ok(err.line >= 1 && err.column >= 1, err.message);
      assert.equal(err.message, `${field}:${err.line}:${err.column}: ${err.problem}`);
      return null;
    }
    throw err;
  }
}

/** Evaluation yields a boolean or a PolicyRuntimeError that is not a wrapped internal failure. */
function evaluateSafely(expr: NonNullable<ReturnType<typeof compileExpression>>, env: EvalEnv): "true" | "false" | "error" {
  try {
    const v = expr.evaluate(env);
    assert.equal(typeof v, "boolean");
    return v ? "true" : "false";
  } catch (err) {
    if (err instanceof PolicyRuntimeError) {
      assert.notEqual(err.kind, "Internal", `internal failure for ${expr.field} ${JSON.stringify(expr.source)}: ${err.message}`);
      return "error";
    }
    throw err;
  }
}

// ---------------------------------------------------------------- random facts

const word = fc.constantFrom("a", "b", "x", "CREATE_USERS", "ops", "", "é", "😀", "U1", "T1");
const paramValue: fc.Arbitrary<ParamValue> = fc.letrec<{ v: ParamValue }>((tie) => ({
  v: fc.oneof({ depthSize: "small" }, word, fc.bigInt({ min: -5n, max: 10n }), fc.boolean(), fc.array(tie("v"), { maxLength: 3 })),
})).v;
const user: fc.Arbitrary<UserFacts> = fc.record({
  id: word,
  tags: fc.array(word, { maxLength: 3 }),
  email: word,
  alias: word,
});
const credential: fc.Arbitrary<CredentialFacts> = fc.record({
  id: word,
  user_id: word,
  type: fc.constantFrom("CREDENTIAL_TYPE_API_KEY_P256", "CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR"),
  credential_id: word,
  public_key: word,
});
const walletFact = fc.record({ id: word, imported: fc.boolean(), exported: fc.boolean(), label: word });
const activityFacts: fc.Arbitrary<ActivityFacts> = fc.record(
  {
    type: fc.constantFrom("ACTIVITY_TYPE_CREATE_USERS_V4", "ACTIVITY_TYPE_DELETE_USERS", "ACTIVITY_TYPE_STAMP_LOGIN"),
    kind: fc.constantFrom("CREATE_USERS", "DELETE_USERS", "STAMP_LOGIN"),
    resource: fc.constantFrom("USER", "AUTH"),
    action: fc.constantFrom("CREATE", "DELETE"),
    params: fc.dictionary(fc.constantFrom("s", "n", "ids", "flag", "user_ids", "b"), paramValue, { maxKeys: 4 }),
    // The wallets the activity names: `wallet` is bound only when there is exactly one.
    wallets: fc.array(walletFact, { maxLength: 3 }),
  },
  { requiredKeys: ["type", "kind", "resource", "action", "params"] },
);
/** Facts whose activity exposes every parameter the grammar reads, so dynamic values meet their uses. */
const allParams: fc.Arbitrary<EvalEnv> = fc.record({
  activity: fc.record({
    type: fc.constant("ACTIVITY_TYPE_DELETE_USERS"),
    kind: fc.constant("DELETE_USERS"),
    resource: fc.constant("USER"),
    action: fc.constant("DELETE"),
    params: fc.record({ s: paramValue, n: paramValue, ids: paramValue, flag: paramValue, user_ids: paramValue, b: paramValue }),
    wallets: fc.array(walletFact, { minLength: 1, maxLength: 1 }),
  }),
});
const env: fc.Arbitrary<EvalEnv> = fc.record(
  {
    activity: activityFacts,
    approvers: fc.array(user, { maxLength: 3 }),
    credentials: fc.array(credential, { maxLength: 3 }),
    nowMs: fc.oneof(
      fc.integer({ min: Date.parse("2025-01-01T00:00:00Z"), max: Date.parse("2027-01-01T00:00:00Z") }),
      fc.integer({ min: 0, max: 253_402_300_799_999 }),
      fc.constantFrom(Number.NaN, -1, 1e300, 0.5),
    ),
    // The wallet a per-wallet pass binds (decide() with several named wallets).
    wallet: walletFact,
  },
  { requiredKeys: [] },
);

// ---------------------------------------------------------------- token soup

const REAL_TOKENS = [
  "&&",
  "||",
  "!",
  "-",
  "==",
  "!=",
  "<",
  ">",
  "<=",
  ">=",
  "in",
  "(",
  ")",
  "[",
  "]",
  ",",
  "..",
  ".",
  "true",
  "false",
  "0",
  "1",
  "2",
  "170141183460469231731687303715884105728",
  "'a'",
  "'x'",
  "''",
  "'\\''",
  "activity",
  "approvers",
  "credentials",
  "time",
  "now",
  "kind",
  "type",
  "params",
  "user_ids",
  "id",
  "tags",
  "all",
  "any",
  "filter",
  "contains",
  "count",
  "u",
  "x",
  "Timestamp",
  "CronSpan",
  "wallet",
  "wallets",
  "label",
  "exported",
  "private_key",
  "eth",
  "tx",
  "'2026-03-01T00:00:00Z'",
  "'0 9 * * 1-5'",
  "'8h'",
  "'UTC'",
  "'America/New_York'",
];
const JUNK = [
  "&",
  "|",
  "=",
  "+",
  "*",
  "/",
  "#",
  "{",
  "}",
  '"',
  "`",
  "$",
  "?",
  ":",
  ";",
  "'",
  "\\",
  "é",
  "😀",
  "\u0000",
  "\ud800",
  "99999999999999999999999999999999999999999999999999999999999999999999999999999999",
];
const tokenSoup = fc
  .array(fc.tuple(fc.constantFrom(...REAL_TOKENS, ...REAL_TOKENS, ...JUNK), fc.constantFrom("", " ", "\n", "\t", "\r\n")), {
    maxLength: 40,
  })
  .map((parts) => parts.map(([t, ws]) => t + ws).join(""));

// ---------------------------------------------------------------- grammar of the language

interface Shapes {
  bool: string;
  int: string;
  str: string;
  strs: string;
  ints: string;
}

/** Source text from the grammar, with atoms mostly from the given field's environment. */
function grammar(field: Field): fc.Arbitrary<string> {
  const keywordAtoms: Record<Field, { bool: string[]; int: string[]; str: string[]; strs: string[] }> = {
    condition: {
      // activity.params values are dynamic: these put them where a type is fixed and where not.
      bool: [
        "activity.params.flag",
        "'a' in activity.params.ids",
        "activity.params.ids.contains(activity.params.s)",
        "activity.params.n in [1, activity.params.b]",
        "activity.params.s == activity.params.n",
        // The element type of a statically typed list applies even when it is empty at run time.
        "activity.params.s in ['a', 'b'][0..activity.params.n]",
        // Wallet keywords: bound or absent per activity; the signing objects are always absent.
        "wallet.exported",
        "!wallet.imported",
        "wallets.any(w, w.imported && w.label != '')",
        "eth.tx.to == 'a'",
        "eth.tx.contract_call_args['wad'] > 1",
        "wallet_account.address == wallet.id",
      ],
      int: ["activity.params.n", "activity.params.ids.count()", "wallets.count()", "wallets.filter(w, w.exported).count()"],
      str: [
        "activity.kind",
        "activity.type",
        "activity.resource",
        "activity.action",
        "activity.params.s",
        "activity.params.ids[0]",
        "wallet.label",
        "wallet.id",
        "wallets[0].label",
        "private_key.id",
      ],
      strs: ["activity.params.ids", "activity.params.user_ids", "private_key.tags", "[wallet.label, wallet.id]"],
    },
    consensus: {
      bool: ["approvers.any(u, u.id == 'U1')", "credentials.all(c, c.type != '')"],
      int: ["approvers.count()", "credentials.count"],
      str: ["approvers[0].id", "credentials[0].user_id"],
      strs: ["approvers[0].tags", "approvers.filter(u, u.tags.contains('T1'))[0].tags"],
    },
    time: {
      bool: [
        "CronSpan('0 9 * * 1-5', '8h', 'America/New_York')",
        "CronSpan('30 2 * * *', '90m', 'America/New_York')",
        "CronSpan('0 0 1 * 0', '7d', 'UTC')",
        "time.now >= Timestamp('2026-03-01T00:00:00Z')",
        "time.now < Timestamp('2026-04-01T00:00:00.5Z')",
        "[time.now][0] == time.now",
      ],
      int: [],
      str: [],
      strs: [],
    },
  };
  const atoms = keywordAtoms[field];
  const pick = (xs: string[], fallback: fc.Arbitrary<string>) => (xs.length ? fc.oneof(fc.constantFrom(...xs), fallback) : fallback);
  const strLit = fc.constantFrom("'a'", "'x'", "''", "'it\\'s'", "'😀é'", "'U1'", "'T1'", "'CREATE_USERS'");
  const intLit = fc.oneof(
    fc.bigInt({ min: -3n, max: 5n }).map(String),
    fc.constantFrom("170141183460469231731687303715884105728", "-170141183460469231731687303715884105728", "99"),
  );
  const bin = (l: fc.Arbitrary<string>, ops: string[], r: fc.Arbitrary<string>) =>
    fc.tuple(l, fc.constantFrom(...ops), r).map(([a, op, b]) => `(${a} ${op} ${b})`);

  return fc.letrec<Shapes>((tieAny) => {
    const tie = (k: keyof Shapes) => tieAny(k) as fc.Arbitrary<string>;
    return {
      bool: fc.oneof(
        { depthSize: "small", maxDepth: 6 },
        fc.constantFrom("true", "false"),
        pick(atoms.bool, fc.constant("true")),
        bin(tie("bool"), ["&&", "||", "==", "!="], tie("bool")),
        tie("bool").map((b) => `!${b}`),
        bin(tie("int"), ["==", "!=", "<", "<=", ">", ">="], tie("int")),
        bin(tie("str"), ["==", "!="], tie("str")),
        fc.tuple(tie("str"), tie("strs")).map(([s, l]) => `${s} in ${l}`),
        fc.tuple(tie("int"), tie("ints")).map(([i, l]) => `${l}.contains(${i})`),
        fc.tuple(tie("strs"), fc.constantFrom("all", "any"), tie("bool")).map(([l, m, b]) => `${l}.${m}(x, ${b} || x == 'a')`),
        fc.tuple(tie("ints"), fc.constantFrom("all", "any"), tie("bool")).map(([l, m, b]) => `${l}.${m}(i, ${b} && i >= 0)`),
      ),
      int: fc.oneof(
        { depthSize: "small", maxDepth: 6 },
        intLit,
        pick(atoms.int, intLit),
        tie("strs").map((l) => `${l}.count()`),
        tie("ints").map((l) => `${l}.count`),
        fc.tuple(tie("ints"), tie("int")).map(([l, i]) => `${l}[${i}]`),
      ),
      str: fc.oneof(
        { depthSize: "small", maxDepth: 6 },
        strLit,
        pick(atoms.str, strLit),
        fc.tuple(tie("str"), tie("int")).map(([s, i]) => `${s}[${i}]`),
        fc.tuple(tie("str"), tie("int"), tie("int")).map(([s, a, b]) => `${s}[${a}..${b}]`),
        fc.tuple(tie("strs"), tie("int")).map(([l, i]) => `${l}[${i}]`),
      ),
      strs: fc.oneof(
        { depthSize: "small", maxDepth: 6 },
        fc.array(tie("str"), { maxLength: 3 }).map((xs) => `[${xs.join(", ")}]`),
        pick(atoms.strs, fc.constant("['a', 'b']")),
        fc.tuple(tie("strs"), tie("bool")).map(([l, b]) => `${l}.filter(s, ${b} || s != '')`),
        fc.tuple(tie("strs"), tie("int"), tie("int")).map(([l, a, b]) => `${l}[${a}..${b}]`),
      ),
      ints: fc.oneof(
        { depthSize: "small", maxDepth: 6 },
        fc.array(tie("int"), { maxLength: 3 }).map((xs) => `[${xs.join(",")}]`),
        fc.tuple(tie("ints"), tie("bool")).map(([l, b]) => `${l}.filter(n, ${b})`),
      ),
    };
  }).bool;
}

// ---------------------------------------------------------------- properties

describe("policy language properties", () => {
  it("token soup never throws anything but PolicyCompileError, and what compiles evaluates safely (and as the reference does)", () => {
    fc.assert(
      fc.property(tokenSoup, fc.constantFrom(...FIELDS), env, (source, field, facts) => {
        const c = compileOrReject(field, source);
        if (c) {
          evaluateSafely(c, facts);
          agreesWithReference(c, facts);
        }
      }),
      { numRuns: 1500 },
    );
  });

  it("arbitrary strings never throw anything but PolicyCompileError", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 60 }), fc.constantFrom(...FIELDS), (source, field) => {
        compileOrReject(field, source);
      }),
      { numRuns: 700 },
    );
  });

  for (const field of FIELDS) {
    it(`generated ${field} expressions compile or are rejected, and evaluate to a boolean or a PolicyRuntimeError`, () => {
      const outcomes = { rejected: 0, true: 0, false: 0, error: 0 };
      fc.assert(
        fc.property(grammar(field), fc.array(env, { minLength: 1, maxLength: 3 }), (source, envs) => {
          const c = compileOrReject(field, source);
          if (!c) {
            outcomes.rejected++;
            return;
          }
          for (const e of envs) outcomes[evaluateSafely(c, e)]++;
        }),
        { numRuns: 500 },
      );
      // The grammar is meant to exercise evaluation, not just the checker.
      assert.ok(outcomes.true + outcomes.false > 0, JSON.stringify(outcomes));
      assert.ok(outcomes.rejected < 500, JSON.stringify(outcomes));
    });
  }

  it("deeply nested and very long generated inputs are rejected cleanly", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("(", "!", "[", "x.any(y, ", "'a'[", "activity.kind[0..", "-"),
        fc.integer({ min: 60, max: 3000 }),
        fc.constantFrom(...FIELDS),
        (opener, n, field) => {
          compileOrReject(field, opener.repeat(n) + "true");
        },
      ),
      { numRuns: 100 },
    );
  });
});

// ---------------------------------------------------------------- differential: compiled vs reference

/**
 * The compiled closure and the tree-walking reference (test/helpers/policy-reference.ts) give
 * the same boolean, or both fail; the engine's error kind must be one of the kinds the
 * reference saw (with no short-circuit, several clauses may fail and the engine reports
 * whichever it met first). Returns the outcome, for the caller's coverage counts.
 */
function agreesWithReference(expr: NonNullable<ReturnType<typeof compileExpression>>, facts: EvalEnv): "true" | "false" | "error" {
  const reference = referenceEvaluate(expr.field, expr.source, facts);
  const where = `${expr.field} ${JSON.stringify(expr.source)} with ${JSON.stringify(facts, (_, v) => (typeof v === "bigint" ? `${v}n` : v))}`;
  let compiled: boolean | PolicyRuntimeError;
  try {
    compiled = expr.evaluate(facts);
  } catch (err) {
    if (!(err instanceof PolicyRuntimeError)) throw err;
    compiled = err;
  }
  if (reference.ok) {
    assert.equal(compiled, reference.value, `compiled ${String(compiled)}, reference ${reference.value}: ${where}`);
    return reference.value ? "true" : "false";
  }
  assert.ok(
    compiled instanceof PolicyRuntimeError,
    `compiled ${String(compiled)}, reference failed with ${[...reference.kinds].join("/")}: ${where}`,
  );
  assert.ok(
    reference.kinds.has(compiled.kind),
    `compiled failed with ${compiled.kind} (${compiled.message}), reference with ${[...reference.kinds].join("/")}: ${where}`,
  );
  return "error";
}

describe("compiled expressions agree with the reference evaluator", () => {
  it("on hand-picked expressions whose answers docs/policy-language.md gives (so the reference itself is not vacuous)", () => {
    const facts: EvalEnv = {
      activity: {
        type: "ACTIVITY_TYPE_DELETE_USERS",
        kind: "DELETE_USERS",
        resource: "USER",
        action: "DELETE",
        params: { user_ids: ["U1"] },
        wallets: [{ id: "W", imported: false, exported: false, label: "cold" }],
      },
      nowMs: Date.parse("2026-03-02T10:00:00Z"),
    };
    const cases: Array<[Field, string, boolean | string]> = [
      ["condition", "'abc'[0..2] == 'ab' && 'abc'[0] == 'a'", true],
      ["condition", "[1,2,3][0..2].count() == 2 && 2 in [1,2,3][0..2] && !(3 in [1,2,3][0..2])", true],
      ["condition", "170141183460469231731687303715884105728 > 1", true],
      ["condition", "[1,2,3].filter(x, x == 1).count() == 1 && [1,1,1].all(x, x == 1) && ![].any(x, x == 1)", true],
      ["condition", "false && activity.params.nope == 'x'", "MissingField"],
      ["condition", "true || activity.params.user_ids[5] == 'x'", "IndexOutOfRange"],
      ["condition", "activity.params.user_ids == 'x'", "TypeMismatch"],
      ["condition", "activity.kind[0..99] == 'x'", "IndexOutOfRange"],
      ["condition", "'😀é'[1] == 'é'", true],
      ["condition", "wallet.label == 'cold' && wallets.count() == 1 && !wallet.exported", true],
      ["condition", "true || private_key.id == 'K'", "AbsentKeyword"],
      ["condition", "false && eth.tx.contract_call_args['wad'] > 1", "AbsentKeyword"],
      ["time", "time.now >= Timestamp('2026-03-01T00:00:00Z') && CronSpan('0 9 * * 1-5', '8h', 'UTC')", true],
    ];
    for (const [field, source, expected] of cases) {
      const reference = referenceEvaluate(field, source, facts);
      if (typeof expected === "boolean") assert.deepEqual(reference, { ok: true, value: expected }, source);
      else assert.deepEqual(reference, { ok: false, kinds: new Set([expected]) }, source);
      agreesWithReference(compileExpression(field, source)!, facts);
    }
  });

  for (const field of FIELDS) {
    it(`on generated ${field} expressions and facts`, () => {
      const outcomes = { rejected: 0, true: 0, false: 0, error: 0 };
      fc.assert(
        fc.property(grammar(field), fc.array(fc.oneof(env, allParams), { minLength: 1, maxLength: 3 }), (source, envs) => {
          const c = compileOrReject(field, source);
          if (!c) {
            outcomes.rejected++;
            return;
          }
          for (const e of envs) outcomes[agreesWithReference(c, e)]++;
        }),
        { numRuns: 700, includeErrorInReport: true },
      );
      // Agreement must have been tested on each kind of outcome, not only on errors.
      assert.ok(outcomes.true > 0 && outcomes.false > 0 && outcomes.error > 0, JSON.stringify(outcomes));
    });
  }
});
