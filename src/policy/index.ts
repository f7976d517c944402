// Public surface of the policy language: compile an expression of one policy
// field once, evaluate it many times. Pure: no I/O, no clocks (the caller
// supplies time.now).

import { check } from "./checker.ts";
import { compile, type Frame } from "./compiler.ts";
import { PolicyCompileError, PolicyRuntimeError, type Field } from "./errors.ts";
import type { EvalEnv } from "./facts.ts";
import { tokenize } from "./lexer.ts";
import { parse } from "./parser.ts";

export { PolicyCompileError, PolicyRuntimeError } from "./errors.ts";
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
  /** True or false; any evaluation error throws PolicyRuntimeError (the policy's outcome is then OUTCOME_ERROR). */
  evaluate(env: EvalEnv): boolean;
  /** Keyword roots used: 'approvers', 'credentials', 'activity', 'time'. */
  readonly roots: ReadonlySet<string>;
  /** Fields read on User values: 'id', 'tags', 'email', 'alias'. */
  readonly userFields: ReadonlySet<string>;
  /** Every string literal in the expression (decoded). */
  readonly stringLiterals: ReadonlySet<string>;
  /** Fields read directly on `activity`: a condition reading only type/kind/resource/action depends on the activity type alone. */
  readonly activityFields: ReadonlySet<string>;
  /** False when evaluation can never raise a runtime error (no indexing, slicing or dynamic params). */
  readonly mayFail: boolean;
}

const BLANK = /^[ \t\r\n]*$/;
const NO_ENV: EvalEnv = {};
const cache = new Map<string, CompiledExpression>();

/**
 * Compiles `source` as the given policy field. Returns null when the source is
 * empty or whitespace only (the field is absent). Throws PolicyCompileError.
 */
export function compileExpression(field: Field, source: string): CompiledExpression | null {
  if (BLANK.test(source)) return null;
  const key = `${field}\u0000${source}`;
  const hit = cache.get(key);
  if (hit) {
    // Move to the back so the least recently used entry is the one evicted.
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const compiled = build(field, source);
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(key, compiled);
  return compiled;
}

function build(field: Field, source: string): CompiledExpression {
  if (source.length > MAX_SOURCE_LENGTH) {
    throw new PolicyCompileError(field, { offset: 0, line: 1, column: 1 },
      `expression is too long (${source.length} characters; the limit is ${MAX_SOURCE_LENGTH})`);
  }
  const ast = parse(field, tokenize(field, source));
  const checked = check(field, ast);
  const run = compile(checked, source);
  // One frame per compiled expression, reused: evaluation is synchronous and never re-entrant.
  const frame: Frame = { env: NO_ENV, slots: new Array<unknown>(checked.slotCount).fill(undefined), now: undefined };
  return {
    field,
    source,
    roots: checked.roots,
    userFields: checked.userFields,
    stringLiterals: checked.stringLiterals,
    activityFields: checked.activityFields,
    mayFail: checked.mayFail,
    evaluate(env: EvalEnv): boolean {
      frame.env = env;
      frame.now = undefined;
      try {
        return run(frame);
      } catch (err) {
        if (err instanceof PolicyRuntimeError) throw err;
        throw new PolicyRuntimeError("Internal", `evaluation failed unexpectedly: ${String(err)}`, { cause: err });
      } finally {
        frame.env = NO_ENV;
      }
    },
  };
}
