// The static cost bound (docs/policy-language.md §11.3): before tenant input is stored, how
// many lambda iterations and membership comparisons its worst evaluation can make — the
// product of the list lengths along nested lambdas, summed over the lambdas and membership
// tests. Literal lists count exactly; lists the expression does not write are bounded by
// LIST_BOUNDS. Pure: reads the checked tree only.
import type { Expr } from "./ast.ts";
import type { Checked } from "./checker.ts";
import type { SourcePos } from "./errors.ts";

/**
 * Longest list each keyword can yield, and each list read below it (docs/policy-language.md
 * §11.3 gives the sources). Signing data: one element per two bytes of the largest input its
 * parser accepts (docs/signing-policies.md §1).
 */
export const LIST_BOUNDS: Readonly<Record<string, number>> = {
  approvers: 100,
  credentials: 100,
  /** A wallet activity names at most the organization's wallets (store/wallets.ts). */
  wallets: 100,
  /** `activity.params` lists: the longest list parameter a request may carry. */
  activity: 100,
  /** `u.tags` / `private_key.tags`. */
  tags: 100,
  eth: 65_536,
  solana: 32_768,
  bitcoin: 256,
};
/** Any other list the expression does not write (never bound today: reading it is an error). */
const UNKNOWN_LIST = 65_536;

/** A list's longest length, and its elements' shape when they are lists or structs holding lists. */
interface Shape {
  readonly len: number;
  readonly elem: Shape | null;
}
const NONE: Shape = { len: 0, elem: null };

function factShape(len: number): Shape {
  // Nested data (instructions → accounts) is bounded by the same cap at every level.
  const s: { len: number; elem: Shape | null } = { len, elem: null };
  s.elem = s;
  return s;
}

function widest(a: Shape | null, b: Shape | null): Shape | null {
  if (!a) return b;
  if (!b) return a;
  if (a === b) return a;
  // Fact data is the same cap at every depth: the widest of it and anything is that cap at
  // every depth, or the other's widest length when that is more.
  if (a.elem === a || b.elem === b) return factShape(Math.max(deepest(a), deepest(b)));
  return { len: Math.max(a.len, b.len), elem: widest(a.elem, b.elem) };
}

/** The longest length at any depth of a shape. */
function deepest(s: Shape): number {
  let n = 0;
  for (let x: Shape | null = s; x; x = x.elem === x ? null : x.elem) n = Math.max(n, x.len); // only fact shapes cycle, on themselves
  return n;
}

export interface Cost {
  /** Worst-case iterations and comparisons, summed (may be Infinity-like for huge products). */
  readonly iterations: number;
  /** Where the costliest lambda or membership test starts. */
  readonly at: SourcePos | null;
}

export function staticCost(checked: Checked): Cost {
  const vars = new Map<number, Shape>(); // lambda slot → the shape of one element
  let total = 0;
  let worst = 0;
  let at: SourcePos | null = null;

  const charge = (n: number, pos: SourcePos) => {
    total += n;
    if (n > worst) {
      worst = n;
      at = pos;
    }
  };

  walk(checked.root, 1);
  return { iterations: total, at };

  /** Visits `e`, evaluated `times` times in the worst case; returns its shape. */
  function walk(e: Expr, times: number): Shape {
    switch (e.kind) {
      case "bool":
      case "int":
      case "string":
        return NONE;
      case "list": {
        let elem: Shape | null = null;
        for (const item of e.items) {
          const s = walk(item, times);
          if (s !== NONE) elem = widest(elem, s);
        }
        return { len: e.items.length, elem };
      }
      case "ident": {
        const slot = checked.slots.get(e);
        if (slot !== undefined) return vars.get(slot) ?? NONE;
        return rootShape(e.name);
      }
      case "member": {
        const obj = walk(e.object, times);
        if (e.name === "tags") return factShape(LIST_BOUNDS.tags!);
        return obj;
      }
      case "index":
        walk(e.index, times);
        return walk(e.object, times).elem ?? NONE;
      case "slice":
        walk(e.start, times);
        walk(e.stop, times);
        return walk(e.object, times);
      case "lambda": {
        const list = walk(e.object, times);
        const n = times * list.len;
        charge(n, e.methodPos);
        vars.set(checked.slots.get(e)!, list.elem ?? NONE);
        walk(e.body, n);
        return e.method === "filter" ? list : NONE;
      }
      case "contains":
        return membership(e.object, e.arg, times, e.methodPos);
      case "count":
      case "not":
        walk(e.kind === "count" ? e.object : e.operand, times);
        return NONE;
      case "call":
      case "logical":
        for (const o of e.kind === "call" ? e.args : e.operands) walk(o, times);
        return NONE;
      case "compare":
        if (e.op === "in") return membership(e.right, e.left, times, e.opPos);
        walk(e.left, times);
        walk(e.right, times);
        return NONE;
    }
  }

  function membership(list: Expr, elem: Expr, times: number, pos: SourcePos): Shape {
    walk(elem, times);
    charge(times * walk(list, times).len, pos);
    return NONE;
  }
}

function rootShape(name: string): Shape {
  switch (name) {
    case "approvers":
    case "credentials":
    case "wallets":
    case "eth":
    case "solana":
    case "bitcoin":
      return factShape(LIST_BOUNDS[name]!);
    case "activity":
      // Only `activity.params.<x>` holds lists.
      return factShape(LIST_BOUNDS.activity!);
    case "wallet":
    case "private_key":
    case "wallet_account":
    case "time":
      return NONE;
    default:
      return factShape(UNKNOWN_LIST);
  }
}
