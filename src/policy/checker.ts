// Static checking: resolves every identifier against the field's keyword
// environment and lambda scopes, types every node (docs/policy-language.md §3.2), validates
// Timestamp/CronSpan literals, and records what the compiler and the policy
// engine need. Anything wrong here is a creation-time error.

import type { Call, Compare, Expr, Lambda } from "./ast.ts";
import { CronSpan, isValidTimeZone, parseCron, parseDuration } from "./cron.ts";
import { PolicyCompileError, type Field, type SourcePos } from "./errors.ts";
import { parseTimestamp } from "./timestamp.ts";
import {
  ALL_ROOTS,
  BOOL,
  DYNAMIC,
  eqClass,
  FIELD_ROOTS,
  INT,
  isNumeric,
  listOf,
  STRING,
  TIME_FUNCTIONS,
  TIMESTAMP,
  typeName,
  UINT,
  USER,
  ACTIVITY,
  type EqClass,
  type Type,
} from "./types.ts";

/** A runtime assertion the compiler wraps around a dynamic value used where a static type is required. */
export type Cast = "bool" | "numeric" | "string";

export interface Checked {
  readonly root: Expr;
  readonly types: ReadonlyMap<Expr, Type>;
  readonly casts: ReadonlyMap<Expr, Cast>;
  /** Lambda nodes and the identifiers bound by them → frame slot. */
  readonly slots: ReadonlyMap<Expr, number>;
  readonly slotCount: number;
  readonly timestamps: ReadonlyMap<Call, bigint>;
  readonly cronSpans: ReadonlyMap<Call, CronSpan>;
  readonly roots: ReadonlySet<string>;
  readonly userFields: ReadonlySet<string>;
  readonly stringLiterals: ReadonlySet<string>;
  /** Fields read directly on `activity` ('type', 'kind', 'resource', 'action', 'params'). */
  readonly activityFields: ReadonlySet<string>;
  /** Whether evaluation can raise a runtime error (indexing, slicing, dynamic params). */
  readonly mayFail: boolean;
}

/** Quotes user text in a message, shortened so messages stay readable. */
function quote(s: string): string {
  return `'${s.length > 60 ? `${s.slice(0, 57)}...` : s}'`;
}

export function check(field: Field, root: Expr): Checked {
  const types = new Map<Expr, Type>();
  const casts = new Map<Expr, Cast>();
  const slots = new Map<Expr, number>();
  const timestamps = new Map<Call, bigint>();
  const cronSpans = new Map<Call, CronSpan>();
  const roots = new Set<string>();
  const userFields = new Set<string>();
  const stringLiterals = new Set<string>();
  const activityFields = new Set<string>();
  let mayFail = false;
  const scope: { name: string; slot: number; type: Type }[] = [];
  const env = FIELD_ROOTS[field];
  let slotCount = 0;

  const fail = (pos: SourcePos, problem: string): never => {
    throw new PolicyCompileError(field, pos, problem);
  };

  expectBool(root, typeOf(root), `the ${field} expression`);
  return { root, types, casts, slots, slotCount, timestamps, cronSpans, roots, userFields, stringLiterals, activityFields, mayFail };

  function typeOf(e: Expr): Type {
    const t = infer(e);
    types.set(e, t);
    return t;
  }

  function infer(e: Expr): Type {
    switch (e.kind) {
      case "bool":
        return BOOL;
      case "int":
        return e.uint ? UINT : INT;
      case "string":
        stringLiterals.add(e.value);
        return STRING;
      case "list":
        return listLiteral(e.items);
      case "ident":
        return identifier(e);
      case "member": {
        const ot = typeOf(e.object);
        switch (ot.k) {
          case "struct":
            if (!Object.hasOwn(ot.fields, e.name)) {
              fail(e.namePos, `${ot.name} has no field '${e.name}' (fields: ${Object.keys(ot.fields).join(", ")})`);
            }
            if (ot === USER) userFields.add(e.name);
            if (ot === ACTIVITY) activityFields.add(e.name);
            return ot.fields[e.name]!;
          case "params":
          case "dynamic":
            mayFail = true;
            return DYNAMIC; // looked up, and type-checked, at evaluation time
          default:
            return fail(e.namePos, `${typeName(ot)} has no field '${e.name}'`);
        }
      }
      case "index": {
        mayFail = true;
        const ot = indexable(e.object);
        const it = typeOf(e.index);
        // A map key (`eth.tx.contract_call_args['wad']`): only signing data has maps, and it is
        // never present here, so this is checked (and fails) at evaluation.
        if (ot.k === "dynamic" && it.k === "string") return DYNAMIC;
        expectNumeric(e.index, it, "an index");
        return ot.k === "list" ? (ot.elem ?? DYNAMIC) : ot;
      }
      case "slice": {
        mayFail = true;
        const ot = indexable(e.object);
        expectNumeric(e.start, typeOf(e.start), "a slice bound");
        expectNumeric(e.stop, typeOf(e.stop), "a slice bound");
        return ot;
      }
      case "lambda":
        return lambda(e);
      case "contains": {
        const ot = typeOf(e.object);
        if (ot.k !== "list" && ot.k !== "dynamic") fail(e.methodPos, `contains is only defined on lists, found ${typeName(ot)}`);
        membership(ot, e.arg, typeOf(e.arg), "contains");
        return BOOL;
      }
      case "count": {
        const ot = typeOf(e.object);
        if (ot.k !== "list" && ot.k !== "dynamic") fail(e.methodPos, `count is only defined on lists, found ${typeName(ot)}`);
        return INT;
      }
      case "call":
        return call(e);
      case "not":
        expectBool(e.operand, typeOf(e.operand), "the operand of '!'");
        return BOOL;
      case "logical":
        for (const operand of e.operands) expectBool(operand, typeOf(operand), `the operands of '${e.op}'`);
        return BOOL;
      case "compare":
        compare(e);
        return BOOL;
    }
  }

  function identifier(e: Expr & { kind: "ident" }): Type {
    for (let i = scope.length - 1; i >= 0; i--) {
      const v = scope[i]!;
      if (v.name === e.name) {
        slots.set(e, v.slot);
        return v.type;
      }
    }
    if (Object.hasOwn(env, e.name)) {
      roots.add(e.name);
      return env[e.name]!;
    }
    if (TIME_FUNCTIONS.has(e.name)) fail(e.pos, `${e.name} is a function; call it as ${e.name}(...)`);
    for (const [other, keywords] of Object.entries(FIELD_ROOTS)) {
      if (Object.hasOwn(keywords, e.name)) {
        fail(
          e.pos,
          `'${e.name}' is a ${other} keyword and is not available in the ${field} field (available: ${Object.keys(env).join(", ")})`,
        );
      }
    }
    return fail(e.pos, `unknown identifier '${e.name}'`);
  }

  function indexable(object: Expr): Type {
    const ot = typeOf(object);
    if (ot.k !== "list" && ot.k !== "string" && ot.k !== "dynamic")
      fail(object.pos, `cannot index or slice ${typeName(ot)}; only lists and strings`);
    return ot;
  }

  function lambda(e: Lambda): Type {
    const ot = typeOf(e.object);
    if (ot.k !== "list" && ot.k !== "dynamic") fail(e.methodPos, `${e.method} is only defined on lists, found ${typeName(ot)}`);
    if (ALL_ROOTS.has(e.variable)) {
      fail(e.variablePos, `'${e.variable}' is a keyword and cannot be used as a lambda variable name`);
    }
    const slot = slotCount++;
    slots.set(e, slot);
    // An empty list literal never runs its predicate; its variable is typed like an activity.params value.
    scope.push({ name: e.variable, slot, type: ot.k === "list" ? (ot.elem ?? DYNAMIC) : DYNAMIC });
    expectBool(e.body, typeOf(e.body), `the ${e.method} predicate`);
    scope.pop();
    return e.method === "filter" ? ot : BOOL;
  }

  function call(e: Call): Type {
    if (!TIME_FUNCTIONS.has(e.name)) {
      return fail(e.pos, `unknown function '${e.name}'${field === "time" ? " (functions: Timestamp, CronSpan)" : ""}`);
    }
    if (field !== "time") fail(e.pos, `${e.name} is only available in the time field`);
    const arity = e.name === "Timestamp" ? 1 : 3;
    if (e.args.length !== arity) {
      fail(e.pos, `${e.name} expects ${arity} argument${arity === 1 ? "" : "s"}, found ${e.args.length}`);
    }
    const values = e.args.map((arg) => {
      typeOf(arg);
      if (arg.kind !== "string") return fail(arg.pos, `the arguments of ${e.name} must be string literals`);
      return arg.value;
    });
    if (e.name === "Timestamp") {
      const ts = parseTimestamp(values[0]!);
      if (!ts.ok) fail(e.args[0]!.pos, `invalid timestamp ${quote(values[0]!)}: ${ts.reason}`);
      else timestamps.set(e, ts.value);
      return TIMESTAMP;
    }
    const [cron, duration, zone] = values as [string, string, string];
    const schedule = parseCron(cron);
    if (!schedule.ok) return fail(e.args[0]!.pos, `invalid cron expression ${quote(cron)}: ${schedule.reason}`);
    const minutes = parseDuration(duration);
    if (!minutes.ok) return fail(e.args[1]!.pos, `invalid duration ${quote(duration)}: ${minutes.reason}`);
    if (!isValidTimeZone(zone)) fail(e.args[2]!.pos, `unknown time zone ${quote(zone)} (use an IANA name such as America/New_York or UTC)`);
    cronSpans.set(e, new CronSpan(schedule.value, minutes.value, zone));
    return BOOL;
  }

  function compare(e: Compare): void {
    const lt = typeOf(e.left);
    const rt = typeOf(e.right);
    if (e.op === "in") return membership(rt, e.left, lt, "'in'", e.right);
    if (e.op === "==" || e.op === "!=") return equality(e, lt, rt);
    return ordering(e, lt, rt);
  }

  function equality(e: Compare, lt: Type, rt: Type): void {
    if (lt.k === "dynamic" && rt.k === "dynamic") return; // compared at evaluation time
    const lc = eqClass(lt);
    const rc = eqClass(rt);
    if (lt.k !== "dynamic" && !lc) fail(e.opPos, `'${e.op}' is not defined for ${typeName(lt)}`);
    if (rt.k !== "dynamic" && !rc) fail(e.opPos, `'${e.op}' is not defined for ${typeName(rt)}`);
    if (lt.k === "dynamic") return castDynamic(e.left, rc!, rt);
    if (rt.k === "dynamic") return castDynamic(e.right, lc!, lt);
    if (lc !== rc) fail(e.right.pos, `expected ${typeName(lt)}, found ${typeName(rt)}`);
  }

  function ordering(e: Compare, lt: Type, rt: Type): void {
    const orderable = (t: Type): boolean => isNumeric(t) || t.k === "timestamp" || t.k === "dynamic";
    if (!orderable(lt)) fail(e.opPos, `'${e.op}' is not defined for ${typeName(lt)} (only for int, uint and timestamp)`);
    if (!orderable(rt)) {
      fail(
        lt.k === "dynamic" ? e.opPos : e.right.pos,
        lt.k === "dynamic"
          ? `'${e.op}' is not defined for ${typeName(rt)} (only for int, uint and timestamp)`
          : `expected ${typeName(lt)}, found ${typeName(rt)}`,
      );
    }
    if (lt.k === "dynamic" && rt.k === "dynamic") {
      casts.set(e.left, "numeric");
      casts.set(e.right, "numeric");
      return;
    }
    if (lt.k === "dynamic") return castDynamic(e.left, eqClass(rt), rt);
    if (rt.k === "dynamic") return castDynamic(e.right, eqClass(lt), lt);
    if (eqClass(lt) !== eqClass(rt)) fail(e.right.pos, `expected ${typeName(lt)}, found ${typeName(rt)}`);
  }

  /** `elem in list` / `list.contains(elem)`. */
  function membership(lt: Type, elem: Expr, et: Type, op: string, listNode?: Expr): void {
    if (lt.k !== "list" && lt.k !== "dynamic") {
      fail((listNode ?? elem).pos, `${op} needs a list, found ${typeName(lt)}`);
    }
    const t = lt.k === "list" ? lt.elem : DYNAMIC;
    if (et.k !== "dynamic" && !eqClass(et)) fail(elem.pos, `${op} cannot compare ${typeName(et)} values`);
    if (t === null) return; // empty list literal: anything comparable is simply not in it
    if (t.k === "dynamic") {
      // activity.params lists hold strings, ints and bools; each element is compared at evaluation time.
      if (eqClass(et) === "timestamp") fail(elem.pos, `expected a string, int or bool, found ${typeName(et)}`);
      return;
    }
    const tc = eqClass(t);
    if (!tc) fail(elem.pos, `${op} is not defined for ${typeName(lt)} (its elements cannot be compared)`);
    if (et.k === "dynamic") return castDynamic(elem, tc!, t);
    if (eqClass(et) !== tc) fail(elem.pos, `expected ${typeName(t)}, found ${typeName(et)}`);
  }

  function listLiteral(items: readonly Expr[]): Type {
    let elem: Type | null = null;
    const dynamicItems: Expr[] = [];
    for (const item of items) {
      const t = typeOf(item);
      if (t.k === "dynamic") {
        dynamicItems.push(item);
        continue;
      }
      const u: Type | null = elem === null ? t : unify(elem, t);
      if (!u) return fail(item.pos, `list elements must all have one type: expected ${typeName(elem!)}, found ${typeName(t)}`);
      elem = u;
    }
    if (dynamicItems.length > 0) {
      if (elem === null) return listOf(DYNAMIC);
      const c = eqClass(elem);
      for (const item of dynamicItems) castDynamic(item, c, elem);
    }
    return listOf(elem);
  }

  function castDynamic(node: Expr, c: EqClass | null, against: Type): void {
    if (c === null || c === "timestamp") {
      return fail(node.pos, `expected ${typeName(against)}, found ${typeName(DYNAMIC)}`);
    }
    casts.set(node, c === "numeric" ? "numeric" : c);
  }

  function expectBool(node: Expr, t: Type, what: string): void {
    if (t.k === "bool") return;
    if (t.k === "dynamic") return void casts.set(node, "bool");
    fail(node.pos, `${what} must be bool, found ${typeName(t)}`);
  }

  function expectNumeric(node: Expr, t: Type, what: string): void {
    if (isNumeric(t)) return;
    if (t.k === "dynamic") return void casts.set(node, "numeric");
    fail(node.pos, `${what} must be int, found ${typeName(t)}`);
  }
}

/** The common type of two list elements, or null when they cannot share a list. */
function unify(a: Type, b: Type): Type | null {
  if (isNumeric(a) && isNumeric(b)) return a.k === "uint" || b.k === "uint" ? UINT : INT;
  if (a.k === "list" && b.k === "list") {
    if (a.elem === null) return b;
    if (b.elem === null) return a;
    const e = unify(a.elem, b.elem);
    return e && listOf(e);
  }
  if (a.k === "struct" && b.k === "struct") return a.name === b.name ? a : null;
  if (a.k === "list" || b.k === "list" || a.k === "struct" || b.k === "struct") return null;
  return a.k === b.k ? a : null;
}
