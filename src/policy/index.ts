// Public surface of the policy language: compile an expression of one policy
// field once, evaluate it many times. Pure: no I/O, no clocks (the caller
// supplies time.now).

import { evaluationLimits, meterOf, overBudget, type Meter } from "./budget.ts";
import { check } from "./checker.ts";
import { compile, weightOf, type Frame } from "./compiler.ts";
import { staticCost } from "./cost.ts";
import { PolicyCompileError, PolicyRuntimeError, type Field, type SourcePos } from "./errors.ts";
import type { EvalEnv } from "./facts.ts";
import { tokenize } from "./lexer.ts";
import { parse } from "./parser.ts";
import { Lru } from "../cache/lru.ts";

export { PolicyCompileError, PolicyRuntimeError } from "./errors.ts";
export { evaluationLimits, isBudgetError, meterOf, PassBudget, setEvaluationLimits, type EvaluationLimits, type Meter } from "./budget.ts";
export type { Field, PolicyRuntimeErrorKind, SourcePos } from "./errors.ts";
export { activityKind } from "./facts.ts";
export type { ActivityFacts, CredentialFacts, EvalEnv, ParamValue, UserFacts } from "./facts.ts";
export { MAX_DEPTH } from "./parser.ts";

/** Longest accepted expression, in UTF-16 code units. */
export const MAX_SOURCE_LENGTH = 8192;
/** Compiled expressions kept for reuse. */
export const CACHE_SIZE = 10_000;

export interface CompiledExpression {
  readonly field: Field;
  readonly source: string;
  /**
   * True or false; any evaluation error throws PolicyRuntimeError (the policy's outcome is then
   * OUTCOME_ERROR), work past the meter's end included (BudgetExceeded, docs/policy-language.md §11).
   * Without a meter, one of SIGIL_POLICY_MAX_STEPS for this evaluation alone.
   */
  evaluate(env: EvalEnv, meter?: Meter): boolean;
  /** Worst-case lambda iterations and membership comparisons (docs/policy-language.md §11.3). */
  readonly iterations: number;
  /** Keyword roots used: 'approvers', 'credentials', 'activity', 'time'. */
  readonly roots: ReadonlySet<string>;
  /** Fields read on User values: 'id', 'tags', 'email', 'alias'. */
  readonly userFields: ReadonlySet<string>;
  /** Every string literal in the expression (decoded). */
  readonly stringLiterals: ReadonlySet<string>;
  /** Fields read directly on `activity`: a condition reading only type/kind/resource/action depends on the activity type alone. */
  readonly activityFields: ReadonlySet<string>;
  /** False when evaluation can never raise a runtime error (no indexing, slicing or dynamic params) — its budget aside (docs/policy-language.md §11.1). */
  readonly mayFail: boolean;
}

const BLANK = /^[ \t\r\n]*$/;
const NO_ENV: EvalEnv = {};
const cache = new Lru<CompiledExpression>(CACHE_SIZE);

/**
 * Compiles an expression a tenant submits (a policy field, a session profile's scope, an MFA
 * condition): as compileExpression, and refused past the static cost bound
 * (SIGIL_POLICY_MAX_ITERATIONS, docs/policy-language.md §11.3). Stored expressions are only
 * compiled: a bound lowered later still lets them run, under the evaluation budget.
 */
export function compileSubmitted(field: Field, source: string, options?: CompileOptions): CompiledExpression | null {
  const compiled = compileExpression(field, source, options);
  const bound = evaluationLimits().iterations;
  if (compiled && compiled.iterations > bound) {
    const at = costPositions.get(compiled) ?? { offset: 0, line: 1, column: 1 };
    throw new PolicyCompileError(
      field,
      at,
      `the expression may take up to ${formatCount(compiled.iterations)} lambda iterations and list comparisons; ` +
        `the bound is ${bound} (SIGIL_POLICY_MAX_ITERATIONS: the product of list lengths along nested lambdas, docs/policy-language.md §11.3)`,
    );
  }
  return compiled;
}

const formatCount = (n: number): string => (Number.isSafeInteger(n) ? String(n) : n.toExponential(2));
const costPositions = new WeakMap<CompiledExpression, SourcePos>();

/**
 * Compiles `source` as the given policy field. Returns null when the source is
 * empty or whitespace only (the field is absent). Throws PolicyCompileError.
 */
export function compileExpression(field: Field, source: string, options?: CompileOptions): CompiledExpression | null {
  if (BLANK.test(source)) return null;
  const key = `${field}\u0000${source}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const compiled = build(field, source);
  if (options?.cached !== false) cache.set(key, compiled);
  return compiled;
}

export interface CompileOptions {
  /**
   * False for a draft nobody stored (check_policy, a dry run's proposal): an editor sends a new
   * text at every pause in typing, and any tenant could otherwise fill the shared cache with
   * 8 KiB drafts and evict the compiled policies every activity uses (docs/policy-dry-run.md §6).
   * A cached compilation is still reused.
   */
  cached?: boolean;
}

/** Compiled expressions held by the shared cache (tests: drafts leave it unchanged). */
export function compiledCacheSize(): number {
  return cache.size;
}

function build(field: Field, source: string): CompiledExpression {
  if (source.length > MAX_SOURCE_LENGTH) {
    throw new PolicyCompileError(
      field,
      { offset: 0, line: 1, column: 1 },
      `expression is too long (${source.length} characters; the limit is ${MAX_SOURCE_LENGTH})`,
    );
  }
  const ast = parse(field, tokenize(field, source));
  const checked = check(field, ast);
  const run = compile(checked, source);
  const cost = staticCost(checked);
  // The nodes outside every lambda run once per evaluation.
  const weight = weightOf(checked.root);
  // One frame per compiled expression, reused: evaluation is synchronous and never re-entrant.
  const frame: Frame = { env: NO_ENV, slots: new Array<unknown>(checked.slotCount).fill(undefined), now: undefined, meter: meterOf(0) };
  const compiled: CompiledExpression = {
    field,
    source,
    roots: checked.roots,
    userFields: checked.userFields,
    stringLiterals: checked.stringLiterals,
    activityFields: checked.activityFields,
    mayFail: checked.mayFail,
    iterations: cost.iterations,
    evaluate(env: EvalEnv, meter: Meter = meterOf()): boolean {
      frame.env = env;
      frame.now = undefined;
      frame.meter = meter;
      try {
        if ((meter.left -= weight) < 0) throw overBudget(meter);
        return run(frame);
      } catch (err) {
        if (err instanceof PolicyRuntimeError) throw err;
        throw new PolicyRuntimeError("Internal", `evaluation failed unexpectedly: ${String(err)}`, { cause: err });
      } finally {
        frame.env = NO_ENV;
      }
    },
  };
  if (cost.at) costPositions.set(compiled, cost.at);
  return compiled;
}
