// Why a policy field was not true: the explainer behind explain_activity and dry_run_policies
// (docs/policy-dry-run.md §3). It walks the field's checked tree against the facts of one
// evaluation and evaluates sub-expressions with the compiler's own closures (compileNodes), so
// a part is false here exactly when it is false in the engine. Pure: no I/O, no clock; every
// sub-evaluation is charged to one meter of SIGIL_POLICY_MAX_STEPS (docs/policy-language.md §11.1).
//
// What is reported (docs/policy-dry-run.md §3.2):
//   a && b      the first false operand, explained in turn
//   a || b      every operand (all are false), each explained
//   a == b …    a comparison leaf: both values in words
//   x.all(v, P) the lambda as a whole, with the first element for which P was false
//   x.any(v, P) the lambda as a whole (no element satisfied P)
//   anything else (a bool field, `!e`, a CronSpan, a membership test): that part as a whole
// Spans are UTF-16 offsets [start, end) into the field's text.
import type { Expr, Lambda } from "./ast.ts";
import { evaluationLimits, isBudgetError, meterOf, type Meter } from "./budget.ts";
import { check, type Checked } from "./checker.ts";
import { compileNodes, weightOf, type Frame } from "./compiler.ts";
import { PolicyRuntimeError, type Field } from "./errors.ts";
import type { EvalEnv } from "./facts.ts";
import { compileExpression } from "./index.ts";
import { tokenize } from "./lexer.ts";
import { parse } from "./parser.ts";
import { Timestamp } from "./values.ts";

export interface Span {
  start: number;
  end: number;
}

export interface Explanation {
  field: Field;
  /** In a sentence, e.g. "activity.type was ACTIVITY_TYPE_CREATE_USERS, not ACTIVITY_TYPE_CREATE_POLICY". */
  words: string;
  /** The false (or failing) parts, UTF-16 offsets into the field's text. */
  spans: Span[];
}

interface Part {
  words: string[];
  spans: Span[];
}

/** The policy's three expression fields, as stored. */
export interface PolicyText {
  effect: string;
  condition: string;
  consensus: string;
  time?: string;
}

const SHORT = 80;
const LIST_SHOWN = 5;

/**
 * Why a policy has the given outcome, when that outcome is not a match: the time window
 * (OUTCOME_TIME_INACTIVE), the failing part (OUTCOME_ERROR), else the false condition or, with
 * the condition true, the false consensus. Undefined for a match (ALLOW, DENY_EXPLICIT) or when
 * today's text is true for these facts (a policy changed since, or a set the engine skipped).
 */
export function explainPolicy(
  p: PolicyText,
  outcome: string,
  env: EvalEnv,
  meter: Meter = meterOf(evaluationLimits().steps),
): Explanation | undefined {
  if (outcome === "OUTCOME_ALLOW" || outcome === "OUTCOME_DENY_EXPLICIT") return undefined;
  const fields: [Field, string][] = [
    ["time", p.time ?? ""],
    ["condition", p.condition],
    ["consensus", p.consensus],
  ];
  if (outcome === "OUTCOME_ERROR") {
    for (const [field, source] of fields) {
      const e = walkField(field, source, env, meter);
      if (e?.failed) return e.explanation;
    }
    return undefined;
  }
  if (outcome === "OUTCOME_TIME_INACTIVE") return explainField("time", p.time ?? "", env, meter) ?? undefined;
  return explainField("condition", p.condition, env, meter) ?? explainField("consensus", p.consensus, env, meter) ?? undefined;
}

/**
 * Why `source` is false for `env`; null when it is true, blank, or does not compile. A runtime
 * error is explained too (where it happened). When the activity names several wallets and the
 * field reads `wallet`, each wallet is tried in turn, as the engine judges them (engine.ts).
 */
export function explainField(
  field: Field,
  source: string,
  env: EvalEnv,
  meter: Meter = meterOf(evaluationLimits().steps),
): Explanation | null {
  return walkField(field, source, env, meter)?.explanation ?? null;
}

/** Not true: the explanation, and whether it is a runtime error rather than a false value. */
interface Walked {
  explanation: Explanation;
  failed: boolean;
}

function walkField(field: Field, source: string, env: EvalEnv, meter: Meter): Walked | null {
  const compiled = safeCompile(field, source);
  if (!compiled) return null;
  const named = env.activity?.wallets;
  if (!env.wallet && named && named.length > 1 && compiled.roots.has("wallet")) {
    for (const wallet of named) {
      const w = new Walker(field, source, compiled.checked, { ...env, wallet }, meter).falseOrError();
      if (w) return { ...w, explanation: { ...w.explanation, words: `for wallet ${describe(wallet)}: ${w.explanation.words}` } };
    }
    return null;
  }
  return new Walker(field, source, compiled.checked, env, meter).falseOrError();
}

function safeCompile(field: Field, source: string): { checked: Checked; roots: ReadonlySet<string> } | null {
  try {
    const compiled = compileExpression(field, source);
    if (!compiled) return null;
    // The tree itself (compiled expressions keep only closures): parsed again, at most 8 KiB.
    return { checked: check(field, parse(field, tokenize(field, source))), roots: compiled.roots };
  } catch {
    return null; // a stored expression that no longer compiles: its outcome is an error, said by the engine
  }
}

class Walker {
  readonly #frame: Frame;
  readonly #closures = new Map<Expr, (f: Frame) => unknown>();
  readonly #nodes: (e: Expr) => (f: Frame) => unknown;

  constructor(
    readonly field: Field,
    readonly source: string,
    readonly checked: Checked,
    env: EvalEnv,
    meter: Meter,
  ) {
    this.#nodes = compileNodes(checked, source);
    this.#frame = { env, slots: new Array<unknown>(checked.slotCount).fill(undefined), now: undefined, meter };
  }

  falseOrError(): Walked | null {
    const root = this.checked.root;
    let failure: PolicyRuntimeError | undefined;
    try {
      try {
        if (this.#eval(root) === true) return null;
      } catch (err) {
        if (!(err instanceof PolicyRuntimeError) || isBudgetError(err)) throw err;
        failure = err;
      }
      if (failure) return { explanation: this.#explanation(this.#whereFails(root, failure)), failed: true };
      return { explanation: this.#explanation(this.#whyFalse(root)), failed: false };
    } catch (err) {
      if (!(err instanceof PolicyRuntimeError) || !isBudgetError(err)) throw err;
      // The evaluation itself, or the explaining, ran out of steps: said as such, the whole field marked.
      return { explanation: { field: this.field, words: `not explained: ${err.message}`, spans: [span(root)] }, failed: true };
    }
  }

  #explanation(p: Part): Explanation {
    return { field: this.field, words: p.words.join("; "), spans: p.spans };
  }

  #eval(e: Expr): unknown {
    let fn = this.#closures.get(e);
    if (!fn) {
      fn = this.#nodes(e);
      this.#closures.set(e, fn);
    }
    // The nodes outside lambdas are charged here (the closures charge lambda iterations and scans).
    if ((this.#frame.meter.left -= weightOf(e)) < 0) this.#frame.meter.left = -1;
    if (this.#frame.meter.left < 0) throw budgetError(this.#frame.meter);
    return fn(this.#frame);
  }

  #text(e: Expr): string {
    const s = this.source.slice(e.pos.offset, e.end).replace(/\s+/g, " ");
    return s.length > SHORT ? `${s.slice(0, SHORT - 3)}...` : s;
  }

  /** `e` evaluated to false: which part, and why. */
  #whyFalse(e: Expr): Part {
    switch (e.kind) {
      case "logical": {
        if (e.op === "&&") {
          for (const o of e.operands) if (this.#eval(o) !== true) return this.#whyFalse(o);
          break;
        }
        const parts = e.operands.map((o) => this.#whyFalse(o));
        return { words: parts.flatMap((p) => p.words), spans: parts.flatMap((p) => p.spans) };
      }
      case "compare":
        return { words: [this.#compareWords(e)], spans: [span(e)] };
      case "contains": {
        const list = this.#eval(e.object),
          item = this.#eval(e.arg);
        return { words: [`${this.#text(e.object)} was ${describe(list)}, without ${describe(item)}`], spans: [span(e)] };
      }
      case "lambda":
        return { words: [this.#lambdaWords(e)], spans: [span(e)] };
      case "not":
        return { words: [`${this.#text(e.operand)} was true`], spans: [span(e)] };
      case "call":
        return {
          words: [
            `${this.#text(e)} was not active at time.now (${describe(new Timestamp(BigInt(Math.floor(this.#frame.env.nowMs ?? 0)) * 1_000_000n))})`,
          ],
          spans: [span(e)],
        };
      default:
        break;
    }
    return { words: [`${this.#text(e)} was false`], spans: [span(e)] };
  }

  #compareWords(e: Extract<Expr, { kind: "compare" }>): string {
    if (e.op === "in") {
      const item = this.#eval(e.left),
        list = this.#eval(e.right);
      return `${this.#text(e.left)} was ${describe(item)}, not one of ${describe(list)}`;
    }
    const l = this.#eval(e.left),
      r = this.#eval(e.right);
    const literal = (x: Expr) => x.kind === "string" || x.kind === "int" || x.kind === "bool" || x.kind === "list";
    // The side that reads the facts is named; the literal is the value it was compared with.
    const [subject, value, other, op] = literal(e.left) && !literal(e.right) ? [e.right, r, l, FLIPPED[e.op]] : [e.left, l, r, e.op];
    const what = `${this.#text(subject)} was ${describe(value)}`;
    switch (op) {
      case "==":
        return `${what}, not ${describe(other)}`;
      case "!=":
        return `${what}, the value it must differ from`;
      default:
        return `${what}, not ${op} ${describe(other)}`;
    }
  }

  #lambdaWords(e: Lambda): string {
    const list = this.#eval(e.object);
    const items = Array.isArray(list) ? (list as unknown[]) : [];
    const whole = this.#text(e);
    if (e.method === "any") {
      return items.length === 0
        ? `${whole} was false: ${this.#text(e.object)} was empty`
        : `${whole} was false: none of the ${items.length} elements of ${this.#text(e.object)} satisfied it`;
    }
    // all: the first element for which the predicate is false, and why (the variable bound to it).
    const slot = this.checked.slots.get(e)!;
    for (let i = 0; i < items.length; i++) {
      this.#frame.slots[slot] = items[i];
      if (this.#eval(e.body) !== true) {
        const inner = this.#whyFalse(e.body).words.join("; ");
        return `${whole} was false: for element ${i + 1} of ${items.length} (${describe(items[i])}), ${inner}`;
      }
    }
    return `${whole} was false`;
  }

  /** Evaluating `e` raised `err`: the innermost part that raises it. */
  #whereFails(e: Expr, err: PolicyRuntimeError): Part {
    for (const child of children(e)) {
      try {
        this.#eval(child);
      } catch (inner) {
        if (inner instanceof PolicyRuntimeError && !isBudgetError(inner)) return this.#whereFails(child, inner);
        throw inner;
      }
    }
    return { words: [`${this.#text(e)} failed: ${err.message}`], spans: [span(e)] };
  }
}

const FLIPPED: Record<string, string> = { "==": "==", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<=" };

function budgetError(m: Meter): PolicyRuntimeError {
  return new PolicyRuntimeError("BudgetExceeded", m.message);
}

const span = (e: Expr): Span => ({ start: e.pos.offset, end: e.end });

/** The sub-expressions evaluated with `e` in its own scope (a lambda's predicate needs its variable bound). */
function children(e: Expr): readonly Expr[] {
  switch (e.kind) {
    case "list":
      return e.items;
    case "member":
    case "count":
    case "lambda":
      return [e.object];
    case "index":
      return [e.object, e.index];
    case "slice":
      return [e.object, e.start, e.stop];
    case "contains":
      return [e.object, e.arg];
    case "call":
      return e.args;
    case "not":
      return [e.operand];
    case "logical":
      return e.operands;
    case "compare":
      return [e.left, e.right];
    default:
      return [];
  }
}

const PLAIN = /^[A-Za-z0-9_.:@/+-]+$/;

/** A value in words: short, never the whole of a long list or string. */
export function describe(v: unknown): string {
  if (v === undefined || v === null) return "absent";
  if (typeof v === "string") {
    const s = v.length > SHORT ? `${v.slice(0, SHORT - 3)}...` : v;
    return PLAIN.test(s) ? s : JSON.stringify(s);
  }
  if (typeof v === "bigint" || typeof v === "boolean" || typeof v === "number") return String(v);
  if (v instanceof Timestamp) {
    const ms = Number(v.ns / 1_000_000n);
    return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : `${v.ns} ns`;
  }
  if (Array.isArray(v)) {
    if (v.length === 0) return "[] (empty)";
    const shown = v.slice(0, LIST_SHOWN).map(describe).join(", ");
    return v.length > LIST_SHOWN ? `[${shown}, … (${v.length} items)]` : `[${shown}]`;
  }
  if (typeof v === "object") {
    const o = v as Record<string, unknown>;
    // Users, credentials, wallets and keys are named by id (or label, or address).
    if (typeof o.id === "string" && o.id !== "")
      return `${typeof o.alias === "string" ? "user" : typeof o.label === "string" ? "" : "credential"} ${o.id}`.trim();
    if (typeof o.label === "string") return o.label === "" ? "(unnamed)" : describe(o.label);
    if (typeof o.address === "string") return describe(o.address);
    const keys = Object.keys(o);
    return `{${keys.slice(0, LIST_SHOWN).join(", ")}${keys.length > LIST_SHOWN ? ", …" : ""}}`;
  }
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- objects were described above
  return String(v);
}
