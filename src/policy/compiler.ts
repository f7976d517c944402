// Typed AST → nested JavaScript closures. Compiled once per (field, source);
// each evaluation only runs the closures. Static types pick a specialised
// closure for every operator, so runtime checks are left only where
// `activity.params` makes a value dynamic. Nothing short-circuits (docs/policy-language.md §2.5):
// every operand and every lambda iteration runs, so any error surfaces. Work is charged to
// the frame's meter as it is done (docs/policy-language.md §11.1): the nodes outside lambdas
// once per evaluation (index.ts), a lambda's predicate at each iteration, a membership test
// per element scanned, a string index or slice by the length of the string.

import type { Compare, Expr, Lambda } from "./ast.ts";
import type { Cast, Checked } from "./checker.ts";
import { overBudget, type Meter } from "./budget.ts";
import { PolicyRuntimeError } from "./errors.ts";
import type { ActivityFacts, EvalEnv, ParamValue } from "./facts.ts";
import { eqClass, type Type } from "./types.ts";
import {
  countOf,
  dynEquals,
  hasSurrogates,
  indexList,
  indexString,
  readField,
  sliceList,
  sliceString,
  Timestamp,
  typeMismatch,
} from "./values.ts";

/** Per-evaluation state: the inputs, lambda variables by slot, `time.now` once read, the work left. */
export interface Frame {
  env: EvalEnv;
  readonly slots: unknown[];
  now: Timestamp | undefined;
  meter: Meter;
}
type Fn = (f: Frame) => unknown;
type Bool = (f: Frame) => boolean;
type Big = (f: Frame) => bigint;
type Arr = (f: Frame) => readonly unknown[];

/** `time.now` must be a real instant; years 1970–9999 keep every calendar computation in range. */
const MAX_NOW_MS = 253_402_300_799_999;

export function nowMsOf(f: Frame): number {
  const ms = f.env.nowMs;
  if (ms === undefined) throw new PolicyRuntimeError("AbsentKeyword", "time.now is not available: no time was given for this evaluation");
  if (typeof ms !== "number" || !(ms >= 0 && ms <= MAX_NOW_MS)) {
    throw new PolicyRuntimeError("InvalidInput", `time.now must be Unix milliseconds between 1970 and 9999, got ${String(ms)}`);
  }
  return ms;
}

function nowOf(f: Frame): Timestamp {
  if (f.now) return f.now;
  const ms = nowMsOf(f);
  const whole = Math.floor(ms);
  f.now = new Timestamp(BigInt(whole) * 1_000_000n + BigInt(Math.round((ms - whole) * 1e6)));
  return f.now;
}

/** Charges `n` steps; throws BudgetExceeded past the end. */
function spend(f: Frame, n: number): void {
  if ((f.meter.left -= n) < 0) throw overBudget(f.meter);
}

/**
 * A string index or slice scans the string: one step per 32 characters, natively; a string
 * with surrogate pairs is walked code point by code point in JavaScript, two steps a unit.
 */
const scanCost = (s: string): number => 1 + (hasSurrogates(s) ? 2 * s.length : s.length >>> 5);

/** Steps a CronSpan costs: it walks up to eight local days of fires (cron.ts). */
const CRON_STEPS = 64;

/**
 * The nodes evaluated once each time `e` is: its whole subtree, except the predicates of the
 * lambdas in it, which charge their own nodes at each iteration.
 */
export function weightOf(e: Expr): number {
  switch (e.kind) {
    case "bool":
    case "int":
    case "string":
    case "ident":
      return 1;
    case "list":
      return e.items.reduce((n, i) => n + weightOf(i), 1);
    case "member":
    case "count":
      return 1 + weightOf(e.object);
    case "index":
      return 1 + weightOf(e.object) + weightOf(e.index);
    case "slice":
      return 1 + weightOf(e.object) + weightOf(e.start) + weightOf(e.stop);
    case "lambda":
      return 1 + weightOf(e.object);
    case "contains":
      return 1 + weightOf(e.object) + weightOf(e.arg);
    case "call":
      return e.args.reduce((n, a) => n + weightOf(a), 1);
    case "not":
      return 1 + weightOf(e.operand);
    case "logical":
      return e.operands.reduce((n, o) => n + weightOf(o), 1);
    case "compare":
      return 1 + weightOf(e.left) + weightOf(e.right);
  }
}

function absent(name: string): never {
  throw new PolicyRuntimeError("AbsentKeyword", `'${name}' is not available for this evaluation`);
}

const hasOwn = Object.prototype.hasOwnProperty;

export function compile(checked: Checked, source: string): Bool {
  return compileNodes(checked, source)(checked.root) as Bool;
}

/**
 * The closure of any node of a checked tree, each with the same semantics as inside the whole
 * expression: the explainer (explain.ts) evaluates sub-expressions with them. A node inside a
 * lambda reads its variable from the frame slot the lambda binds.
 */
export function compileNodes(checked: Checked, source: string): (e: Expr) => (f: Frame) => unknown {
  const { types, casts, slots } = checked;
  const typeOfNode = (e: Expr): Type => types.get(e)!;
  // The source text of a node, for runtime error messages.
  const text = (e: Expr): string => {
    const s = source.slice(e.pos.offset, e.end);
    return s.length > 80 ? `${s.slice(0, 77)}...` : s;
  };

  return node;

  /** The closure of a node, with the runtime check its cast (if any) requires. */
  function node(e: Expr): Fn {
    const f = raw(e);
    const cast = casts.get(e);
    return cast ? guard(f, cast, text(e)) : f;
  }

  function raw(e: Expr): Fn {
    switch (e.kind) {
      case "bool":
      case "string": {
        const v = e.value;
        return () => v;
      }
      case "int": {
        const v = e.value;
        return () => v;
      }
      case "list": {
        if (e.items.every((i) => i.kind === "bool" || i.kind === "int" || i.kind === "string")) {
          const constant = Object.freeze(e.items.map((i) => (i as { value: unknown }).value));
          return () => constant;
        }
        const items = e.items.map(node);
        return (f) => items.map((item) => item(f));
      }
      case "ident":
        return identifier(e.name, slots.get(e));
      case "member":
        return member(e.object, e.name);
      case "index": {
        const obj = node(e.object),
          ix = node(e.index) as Big,
          what = text(e.object);
        switch (typeOfNode(e.object).k) {
          case "string":
            return (f) => {
              const v = obj(f) as string;
              spend(f, scanCost(v));
              return indexString(v, ix(f), what);
            };
          case "list":
            return (f) => indexList(obj(f) as readonly unknown[], ix(f), what);
          default:
            return (f) => {
              const v = obj(f),
                i = ix(f);
              // A string key (the checker lets `dynamic['k']` through): only the signing facts have maps.
              if (typeof i === "string") return readField(v, i, what);
              if (typeof i !== "bigint") throw typeMismatch(what, v, "a map");
              if (typeof v === "string") {
                spend(f, scanCost(v));
                return indexString(v, i, what);
              }
              if (Array.isArray(v)) return indexList(v as readonly unknown[], i, what);
              throw typeMismatch(what, v, "a string or a list");
            };
        }
      }
      case "slice": {
        const obj = node(e.object),
          a = node(e.start) as Big,
          b = node(e.stop) as Big,
          what = text(e.object);
        switch (typeOfNode(e.object).k) {
          case "string":
            return (f) => {
              const v = obj(f) as string;
              spend(f, scanCost(v));
              return sliceString(v, a(f), b(f), what);
            };
          case "list":
            return (f) => {
              const v = sliceList(obj(f) as readonly unknown[], a(f), b(f), what);
              spend(f, v.length);
              return v;
            };
          default:
            return (f) => {
              const v = obj(f),
                start = a(f),
                stop = b(f);
              if (typeof v === "string") {
                spend(f, scanCost(v));
                return sliceString(v, start, stop, what);
              }
              if (Array.isArray(v)) {
                const sliced = sliceList(v as readonly unknown[], start, stop, what);
                spend(f, sliced.length);
                return sliced;
              }
              throw typeMismatch(what, v, "a string or a list");
            };
        }
      }
      case "lambda":
        return lambda(e);
      case "contains":
        return membership(e.object, e.arg);
      case "count": {
        const list = listOf(e.object);
        return (f) => countOf(list(f).length);
      }
      case "call": {
        const ts = checked.timestamps.get(e);
        if (ts !== undefined) {
          const v = new Timestamp(ts);
          return () => v;
        }
        const span = checked.cronSpans.get(e)!;
        return (f) => {
          spend(f, CRON_STEPS);
          return span.isActive(nowMsOf(f));
        };
      }
      case "not": {
        const operand = node(e.operand) as Bool;
        return (f) => !operand(f);
      }
      case "logical": {
        const ops = e.operands.map(node) as Bool[];
        if (ops.length === 2) {
          const [x, y] = ops as [Bool, Bool];
          return e.op === "&&"
            ? (f) => {
                const l = x(f),
                  r = y(f);
                return l && r;
              }
            : (f) => {
                const l = x(f),
                  r = y(f);
                return l || r;
              };
        }
        const and = e.op === "&&";
        return (f) => {
          let result = and;
          for (let i = 0; i < ops.length; i++) {
            if (ops[i]!(f) !== and) result = !and;
          }
          return result;
        };
      }
      case "compare":
        return compare(e);
    }
  }

  function lambda(e: Lambda): Fn {
    const list = listOf(e.object),
      body = node(e.body) as Bool,
      slot = slots.get(e)!;
    // One iteration: binding the variable and the predicate's own nodes.
    const step = 1 + weightOf(e.body);
    switch (e.method) {
      case "all":
        return (f) => {
          const xs = list(f);
          let result = true;
          for (let i = 0; i < xs.length; i++) {
            spend(f, step);
            f.slots[slot] = xs[i];
            if (!body(f)) result = false;
          }
          return result;
        };
      case "any":
        return (f) => {
          const xs = list(f);
          let result = false;
          for (let i = 0; i < xs.length; i++) {
            spend(f, step);
            f.slots[slot] = xs[i];
            if (body(f)) result = true;
          }
          return result;
        };
      case "filter":
        return (f) => {
          const xs = list(f);
          const kept: unknown[] = [];
          for (let i = 0; i < xs.length; i++) {
            spend(f, step);
            f.slots[slot] = xs[i];
            if (body(f)) kept.push(xs[i]);
          }
          return kept;
        };
    }
  }

  function identifier(name: string, slot: number | undefined): Fn {
    if (slot !== undefined) return (f) => f.slots[slot];
    switch (name) {
      case "activity":
        return (f) => f.env.activity ?? absent("activity");
      case "approvers":
        return (f) => f.env.approvers ?? absent("approvers");
      case "credentials":
        return (f) => f.env.credentials ?? absent("credentials");
      case "time":
        return (f) => ({ now: nowOf(f) });
      case "wallets":
        return (f) => f.env.activity?.wallets ?? absent("wallets");
      case "wallet":
        return (f) => {
          if (f.env.wallet) return f.env.wallet;
          const named = f.env.activity?.wallets;
          if (named?.length === 1) return named[0];
          throw new PolicyRuntimeError(
            "AbsentKeyword",
            named && named.length > 1
              ? `'wallet' is not available: this activity names ${named.length} wallets (use wallets)`
              : "'wallet' is not available for this evaluation",
          );
        };
      case "wallet_account":
        return (f) => f.env.activity?.walletAccount ?? absent("wallet_account");
      case "private_key":
        return (f) => f.env.activity?.privateKey ?? absent("private_key");
      case "eth":
      case "solana":
      case "bitcoin":
        // Bound by a signing activity to what its request parses into (docs/signing-policies.md §1).
        return (f) => {
          const signing = f.env.activity?.signing;
          const root = signing && hasOwn.call(signing, name) ? signing[name] : undefined;
          return root ?? absent(name);
        };
      case "tron":
      case "tempo":
      case "secret":
        // Never bound by any activity of this service (types.ts, SIGNING_KEYWORDS).
        return () => absent(name);
      default:
        throw new Error(`checker let an unbound identifier through: ${name}`);
    }
  }

  function member(object: Expr, name: string): Fn {
    const ot = typeOfNode(object);
    if (object.kind === "ident" && object.name === "time" && !slots.has(object)) return nowOf; // time.now
    const obj = node(object);
    if (ot.k === "params") {
      // params only ever comes from the evaluation's own activity, which names the type in the error.
      return (f) => {
        const params = obj(f) as Readonly<Record<string, ParamValue>>;
        if (!hasOwn.call(params, name)) {
          const type = (f.env.activity as ActivityFacts | undefined)?.type ?? "this activity";
          throw new PolicyRuntimeError("MissingField", `activity.params has no field '${name}' for ${type}`);
        }
        return params[name];
      };
    }
    if (ot.k === "dynamic") {
      // Only the signing facts hold maps (`eth.tx.to`); anything else is a type mismatch.
      const what = text(object);
      return (f) => readField(obj(f), name, what);
    }
    return (FIELD_READERS.get(name) ?? keyedReader(name))(obj);
  }

  /** A list-valued operand; dynamic values are checked to be lists. */
  function listOf(e: Expr): Arr {
    const f0 = node(e);
    if (typeOfNode(e).k === "list") return f0 as Arr;
    const what = text(e);
    return (f) => {
      const v = f0(f);
      if (!Array.isArray(v)) throw typeMismatch(what, v, "list");
      return v as readonly unknown[];
    };
  }

  function compare(e: Compare): Fn {
    if (e.op === "in") return membership(e.right, e.left);
    const l = node(e.left),
      r = node(e.right);
    const lt = typeOfNode(e.left),
      rt = typeOfNode(e.right);
    const cls = eqClass(lt) ?? eqClass(rt); // null only when both sides are dynamic
    if (e.op === "==" || e.op === "!=") {
      const negate = e.op === "!=";
      if (cls === null) {
        const what = text(e);
        return negate ? (f) => !dynEquals(l(f), r(f), what) : (f) => dynEquals(l(f), r(f), what);
      }
      if (cls === "timestamp") {
        return negate ? (f) => (l(f) as Timestamp).ns !== (r(f) as Timestamp).ns : (f) => (l(f) as Timestamp).ns === (r(f) as Timestamp).ns;
      }
      return negate ? (f) => l(f) !== r(f) : (f) => l(f) === r(f);
    }
    const [a, b] =
      cls === "timestamp" ? [(f: Frame) => (l(f) as Timestamp).ns, (f: Frame) => (r(f) as Timestamp).ns] : [l as Big, r as Big];
    switch (e.op) {
      case "<":
        return (f) => a(f) < b(f);
      case ">":
        return (f) => a(f) > b(f);
      case "<=":
        return (f) => a(f) <= b(f);
      default:
        return (f) => a(f) >= b(f);
    }
  }

  /** `elem in list` / `list.contains(elem)`: the same equality as `==`. */
  function membership(listNode: Expr, elemNode: Expr): Fn {
    const list = listOf(listNode),
      elem = node(elemNode);
    const lt = typeOfNode(listNode);
    const elemType = lt.k === "list" ? lt.elem : null;
    if (lt.k === "list" && (elemType === null || elemType.k !== "dynamic")) {
      if (eqClass(typeOfNode(elemNode)) === "timestamp") {
        return (f) => {
          const xs = list(f) as readonly Timestamp[],
            x = (elem(f) as Timestamp).ns;
          spend(f, xs.length);
          let found = false;
          for (let i = 0; i < xs.length; i++) if (xs[i]!.ns === x) found = true;
          return found;
        };
      }
      return (f) => {
        const xs = list(f),
          x = elem(f);
        spend(f, xs.length);
        return xs.includes(x);
      };
    }
    const what = `${text(elemNode)} in ${text(listNode)}`;
    return (f) => {
      const xs = list(f),
        x = elem(f);
      // Two steps an element: each comparison checks both values' types (dynEquals).
      spend(f, 2 * xs.length);
      let found = false;
      for (let i = 0; i < xs.length; i++) if (dynEquals(x, xs[i], what)) found = true;
      return found;
    };
  }
}

// Struct fields read with a fixed property name each, so every read site stays
// monomorphic instead of sharing one keyed load across all field names. Looked up in a
// Map: the field name comes from policy text (the checker admits only declared struct
// fields, but a name such as "constructor" must never find Object.prototype's here either).
const FIELD_READERS: ReadonlyMap<string, (obj: Fn) => Fn> = new Map(
  Object.entries<(obj: Fn) => Fn>({
    id: (obj) => (f) => (obj(f) as { id: unknown }).id,
    tags: (obj) => (f) => (obj(f) as { tags: unknown }).tags,
    email: (obj) => (f) => (obj(f) as { email: unknown }).email,
    alias: (obj) => (f) => (obj(f) as { alias: unknown }).alias,
    user_id: (obj) => (f) => (obj(f) as { user_id: unknown }).user_id,
    type: (obj) => (f) => (obj(f) as { type: unknown }).type,
    credential_id: (obj) => (f) => (obj(f) as { credential_id: unknown }).credential_id,
    public_key: (obj) => (f) => (obj(f) as { public_key: unknown }).public_key,
    kind: (obj) => (f) => (obj(f) as { kind: unknown }).kind,
    resource: (obj) => (f) => (obj(f) as { resource: unknown }).resource,
    action: (obj) => (f) => (obj(f) as { action: unknown }).action,
    params: (obj) => (f) => (obj(f) as { params: unknown }).params,
    now: (obj) => (f) => (obj(f) as { now: unknown }).now,
    imported: (obj) => (f) => (obj(f) as { imported: unknown }).imported,
    exported: (obj) => (f) => (obj(f) as { exported: unknown }).exported,
    label: (obj) => (f) => (obj(f) as { label: unknown }).label,
    address: (obj) => (f) => (obj(f) as { address: unknown }).address,
  }),
);
const keyedReader =
  (name: string) =>
  (obj: Fn): Fn =>
  (f) =>
    (obj(f) as Record<string, unknown>)[name];

function guard(f: Fn, cast: Cast, what: string): Fn {
  switch (cast) {
    case "bool":
      return (fr) => {
        const v = f(fr);
        if (typeof v !== "boolean") throw typeMismatch(what, v, "bool");
        return v;
      };
    case "numeric":
      return (fr) => {
        const v = f(fr);
        if (typeof v !== "bigint") throw typeMismatch(what, v, "int");
        return v;
      };
    case "string":
      return (fr) => {
        const v = f(fr);
        if (typeof v !== "string") throw typeMismatch(what, v, "string");
        return v;
      };
  }
}
