// § alone in this file: docs/policy-language.md
// A reference evaluator for policy expressions: a plain walk over the syntax tree
// (src/policy/ast.ts), written for obviousness rather than speed, to hold the compiled
// closures of src/policy/compiler.ts to (test/unit/policy-property.test.ts).
//
// It shares the front end with the engine (lexer, parser, checker: both evaluate the same
// checked tree) and takes one thing from the checker, the static type of each node. Nothing of
// the compiler is used. Semantics (docs/policy-language.md):
//   - no short-circuit (§2.5): every operand of && / || and every lambda iteration is evaluated,
//     and any error anywhere makes the whole expression an error;
//   - int and uint are exact big integers (§3.3); strings index by code point (§3.4);
//     bounds: 0 <= i < len, 0 <= a <= b <= len;
//   - values read through activity.params are dynamic (§3.6): where the context has a static
//     type (an operand of && or !, an index, the other side of ==, the element type of a list)
//     the value must have it; == between two dynamic values needs the same primitive type; a
//     wrong type is a TypeMismatch evaluation error.
//
// Because nothing short-circuits, which error the engine reports when several clauses fail is
// a matter of its evaluation order, which the language leaves open. So the reference does not
// stop at the first error: it evaluates everything that can still be evaluated and returns the
// set of error kinds that occurred. The engine must report one of them.

import type { Expr } from "../../src/policy/ast.ts";
import { check } from "../../src/policy/checker.ts";
import { CronSpan, parseCron, parseDuration } from "../../src/policy/cron.ts";
import type { Field, PolicyRuntimeErrorKind } from "../../src/policy/errors.ts";
import type { EvalEnv } from "../../src/policy/facts.ts";
import { tokenize } from "../../src/policy/lexer.ts";
import { parse } from "../../src/policy/parser.ts";
import { parseTimestamp } from "../../src/policy/timestamp.ts";
import type { Type } from "../../src/policy/types.ts";

export type ReferenceOutcome =
  { readonly ok: true; readonly value: boolean } | { readonly ok: false; readonly kinds: ReadonlySet<PolicyRuntimeErrorKind> };

/** A timestamp of the reference: epoch nanoseconds. */
class Instant {
  constructor(readonly ns: bigint) {}
}

/** One node's result: a value, or "failed" (the error kinds are collected separately). */
type Result = { ok: true; v: unknown } | { ok: false };
const FAILED: Result = { ok: false };
const value = (v: unknown): Result => ({ ok: true, v });

/** The comparable classes of values; everything else (lists, structs) cannot be compared. */
type ValueClass = "bool" | "int" | "string" | "timestamp" | "other";

function classOfValue(v: unknown): ValueClass {
  if (typeof v === "boolean") return "bool";
  if (typeof v === "bigint") return "int";
  if (typeof v === "string") return "string";
  if (v instanceof Instant) return "timestamp";
  return "other";
}

/** The class a static type fixes, or null when it fixes none (dynamic, lists, structs, ...). */
function classOfType(t: Type | undefined): ValueClass | null {
  if (t === undefined) return null;
  switch (t.k) {
    case "bool":
      return "bool";
    case "int":
    case "uint":
      return "int";
    case "string":
      return "string";
    case "timestamp":
      return "timestamp";
    default:
      return null;
  }
}

/** Compiles nothing: parses and type-checks, then evaluates by walking the tree. */
export function referenceEvaluate(field: Field, source: string, env: EvalEnv): ReferenceOutcome {
  const root = parse(field, tokenize(field, source));
  const { types } = check(field, root);
  const kinds = new Set<PolicyRuntimeErrorKind>();
  const fail = (kind: PolicyRuntimeErrorKind): Result => {
    kinds.add(kind);
    return FAILED;
  };
  /** Lambda variables in scope, innermost last. */
  const scope: { name: string; value: unknown }[] = [];

  const result = mustBe(root, "bool");
  if (kinds.size > 0 || !result.ok) return { ok: false, kinds };
  return { ok: true, value: result.v as boolean };

  /** Evaluates `e`; a value of the wrong class where `expected` is fixed is a TypeMismatch. */
  function mustBe(e: Expr, expected: ValueClass | null): Result {
    const r = evaluate(e);
    if (!r.ok || expected === null) return r;
    return classOfValue(r.v) === expected ? r : fail("TypeMismatch");
  }

  function evaluate(e: Expr): Result {
    switch (e.kind) {
      case "bool":
      case "int":
      case "string":
        return value(e.value);
      case "list": {
        // A list literal's static element type (when it has one) fixes the class of dynamic items.
        const t = types.get(e);
        const itemClass = t?.k === "list" ? classOfType(t.elem ?? undefined) : null;
        const items = e.items.map((item) => mustBe(item, itemClass));
        return items.every((r) => r.ok) ? value(items.map((r) => (r as { v: unknown }).v)) : FAILED;
      }
      case "ident":
        return identifier(e.name);
      case "member": {
        const obj = evaluate(e.object);
        if (!obj.ok) return FAILED;
        return member(e.object, obj.v, e.name);
      }
      case "index": {
        const obj = evaluate(e.object);
        // A string key on a dynamic value (a map of signing data): no value here is a map.
        if (types.get(e.index)?.k === "string") {
          const key = evaluate(e.index);
          if (!obj.ok || !key.ok) return FAILED;
          return fail("TypeMismatch");
        }
        const i = mustBe(e.index, "int");
        if (!obj.ok || !i.ok) return FAILED;
        return index(obj.v, i.v as bigint);
      }
      case "slice": {
        const obj = evaluate(e.object);
        const a = mustBe(e.start, "int");
        const b = mustBe(e.stop, "int");
        if (!obj.ok || !a.ok || !b.ok) return FAILED;
        return slice(obj.v, a.v as bigint, b.v as bigint);
      }
      case "lambda": {
        const list = asList(evaluate(e.object));
        if (!list.ok) return FAILED;
        const xs = list.v as unknown[];
        const verdicts: Result[] = [];
        for (const x of xs) {
          scope.push({ name: e.variable, value: x });
          verdicts.push(mustBe(e.body, "bool"));
          scope.pop();
        }
        if (!verdicts.every((r) => r.ok)) return FAILED;
        const holds = verdicts.map((r) => (r as { v: unknown }).v === true);
        if (e.method === "all") return value(holds.every(Boolean));
        if (e.method === "any") return value(holds.some(Boolean));
        return value(xs.filter((_, i) => holds[i]));
      }
      case "contains":
        return membership(e.object, e.arg);
      case "count": {
        const list = asList(evaluate(e.object));
        return list.ok ? value(BigInt((list.v as unknown[]).length)) : FAILED;
      }
      case "call":
        return call(e.name, e.args);
      case "not": {
        const r = mustBe(e.operand, "bool");
        return r.ok ? value(!r.v) : FAILED;
      }
      case "logical": {
        const operands = e.operands.map((o) => mustBe(o, "bool"));
        if (!operands.every((r) => r.ok)) return FAILED;
        const bools = operands.map((r) => (r as { v: unknown }).v === true);
        return value(e.op === "&&" ? bools.every(Boolean) : bools.some(Boolean));
      }
      case "compare": {
        if (e.op === "in") return membership(e.right, e.left);
        // A dynamic side must have the class of the other side's static type, when it has one.
        const lt = classOfType(types.get(e.left));
        const rt = classOfType(types.get(e.right));
        const ordering = e.op !== "==" && e.op !== "!=";
        // Ordering is defined on numbers and timestamps only, and params hold no timestamps.
        const l = mustBe(e.left, rt ?? (ordering ? "int" : null));
        const r = mustBe(e.right, lt ?? (ordering ? "int" : null));
        if (!l.ok || !r.ok) return FAILED;
        if (!ordering) {
          const same = equal(l.v, r.v);
          if (same === undefined) return fail("TypeMismatch");
          return value(e.op === "==" ? same : !same);
        }
        const a = l.v instanceof Instant ? l.v.ns : (l.v as bigint);
        const b = r.v instanceof Instant ? r.v.ns : (r.v as bigint);
        switch (e.op) {
          case "<":
            return value(a < b);
          case ">":
            return value(a > b);
          case "<=":
            return value(a <= b);
          default:
            return value(a >= b);
        }
      }
    }
  }

  /** `elem in list` and `list.contains(elem)`: == against every element, all of them compared. */
  function membership(listNode: Expr, elemNode: Expr): Result {
    const lt = types.get(listNode);
    const elemClass = lt?.k === "list" ? classOfType(lt.elem ?? undefined) : null;
    const list = asList(evaluate(listNode));
    const elem = mustBe(elemNode, elemClass);
    if (!list.ok || !elem.ok) return FAILED;
    let found = false;
    let mismatch = false;
    for (const x of list.v as unknown[]) {
      const same = equal(elem.v, x);
      if (same === undefined) mismatch = true;
      else if (same) found = true;
    }
    return mismatch ? fail("TypeMismatch") : value(found);
  }

  /** ==: both values of one comparable class; undefined when they cannot be compared. */
  function equal(a: unknown, b: unknown): boolean | undefined {
    const ca = classOfValue(a);
    if (ca === "other" || ca !== classOfValue(b)) return undefined;
    if (a instanceof Instant && b instanceof Instant) return a.ns === b.ns;
    return a === b;
  }

  function asList(r: Result): Result {
    if (!r.ok) return r;
    return Array.isArray(r.v) ? r : fail("TypeMismatch");
  }

  function identifier(name: string): Result {
    for (let i = scope.length - 1; i >= 0; i--) {
      if (scope[i]!.name === name) return value(scope[i]!.value);
    }
    switch (name) {
      case "activity":
        return env.activity === undefined ? fail("AbsentKeyword") : value(env.activity);
      case "approvers":
        return env.approvers === undefined ? fail("AbsentKeyword") : value(env.approvers);
      case "credentials":
        return env.credentials === undefined ? fail("AbsentKeyword") : value(env.credentials);
      case "time": {
        const now = nowMs();
        if (!now.ok) return FAILED;
        // Unix milliseconds, possibly fractional, to exact nanoseconds.
        const ms = now.v as number;
        const whole = Math.floor(ms);
        return value({ now: new Instant(BigInt(whole) * 1_000_000n + BigInt(Math.round((ms - whole) * 1e6))) });
      }
      // The wallets the activity names: `wallets` all of them; `wallet` the pass's bound one, else the only one.
      case "wallets":
        return env.activity?.wallets === undefined ? fail("AbsentKeyword") : value(env.activity.wallets);
      case "wallet":
        if (env.wallet !== undefined) return value(env.wallet);
        return env.activity?.wallets?.length === 1 ? value(env.activity.wallets[0]) : fail("AbsentKeyword");
      // Signing objects: never present in this service.
      case "private_key":
      case "wallet_account":
      case "eth":
      case "solana":
      case "tron":
      case "bitcoin":
      case "tempo":
      case "secret":
        return fail("AbsentKeyword");
      default:
        throw new Error(`reference: the checker let an unknown identifier through: ${name}`);
    }
  }

  /** time.now in Unix milliseconds: required, and within years 1970-9999. */
  function nowMs(): Result {
    const ms = env.nowMs;
    if (ms === undefined) return fail("AbsentKeyword");
    if (typeof ms !== "number" || !(ms >= 0 && ms <= Date.UTC(9999, 11, 31, 23, 59, 59, 999))) return fail("InvalidInput");
    return value(ms);
  }

  function member(objectNode: Expr, obj: unknown, name: string): Result {
    const t = types.get(objectNode);
    if (t?.k === "params") {
      const params = obj as Record<string, unknown>;
      return Object.hasOwn(params, name) ? value(params[name]) : fail("MissingField");
    }
    // A value read through activity.params is a string, int, bool or list: none has fields.
    if (t?.k === "dynamic") return fail("TypeMismatch");
    return value((obj as Record<string, unknown>)[name]);
  }

  function index(obj: unknown, i: bigint): Result {
    const xs = typeof obj === "string" ? Array.from(obj) : Array.isArray(obj) ? obj : undefined;
    if (xs === undefined) return fail("TypeMismatch");
    if (i < 0n || i >= BigInt(xs.length)) return fail("IndexOutOfRange");
    return value(xs[Number(i)]);
  }

  function slice(obj: unknown, a: bigint, b: bigint): Result {
    const xs = typeof obj === "string" ? Array.from(obj) : Array.isArray(obj) ? obj : undefined;
    if (xs === undefined) return fail("TypeMismatch");
    if (a < 0n || a > b || b > BigInt(xs.length)) return fail("IndexOutOfRange");
    const part = xs.slice(Number(a), Number(b));
    return value(typeof obj === "string" ? part.join("") : part);
  }

  /** Timestamp('…') and CronSpan('…', '…', '…'): the checker admits string literals only. */
  function call(name: string, args: readonly Expr[]): Result {
    const texts = args.map((a) => (a.kind === "string" ? a.value : ""));
    if (name === "Timestamp") {
      const ts = parseTimestamp(texts[0]!);
      if (!ts.ok) throw new Error(`reference: the checker let an invalid timestamp through: ${texts[0]}`);
      return value(new Instant(ts.value));
    }
    const schedule = parseCron(texts[0]!);
    const minutes = parseDuration(texts[1]!);
    if (!schedule.ok || !minutes.ok) throw new Error(`reference: the checker let an invalid CronSpan through: ${texts.join(", ")}`);
    const now = nowMs();
    if (!now.ok) return FAILED;
    return value(new CronSpan(schedule.value, minutes.value, texts[2]!).isActive(now.v as number));
  }
}
