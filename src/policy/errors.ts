// The two ways a policy expression can fail. Compile errors are found when a
// policy is created or updated (the activity fails with invalid-argument and
// nothing is stored); runtime errors surface at evaluation and make that one
// policy's outcome OUTCOME_ERROR.

/** The three expression fields of a policy; each has its own keyword environment. */
export type Field = "condition" | "consensus" | "time";

/** A position in the source: 0-based offset, 1-based line and column (columns count code points). */
export interface SourcePos {
  readonly offset: number;
  readonly line: number;
  readonly column: number;
}

export class PolicyCompileError extends Error {
  readonly field: Field;
  readonly line: number;
  readonly column: number;
  /** 0-based UTF-16 offset into the expression (an editor highlights from here). */
  readonly offset: number;
  /** The message without the `field:line:column: ` prefix. */
  readonly problem: string;

  constructor(field: Field, pos: SourcePos, problem: string) {
    super(`${field}:${pos.line}:${pos.column}: ${problem}`);
    this.name = "PolicyCompileError";
    this.field = field;
    this.line = pos.line;
    this.column = pos.column;
    this.offset = pos.offset;
    this.problem = problem;
  }
}

/**
 * - MissingField: `activity.params.<name>` that this activity type does not expose.
 * - IndexOutOfRange: `x[i]` / `x[a..b]` outside the string or list.
 * - TypeMismatch: a dynamic (`activity.params`) value of the wrong type for its use.
 * - AbsentKeyword: the keyword's object was not supplied for this evaluation.
 * - InvalidInput: the evaluation inputs themselves are malformed (e.g. nowMs out of range).
 * - BudgetExceeded: the evaluation did more work than its budget allows (budget.ts).
 * - Internal: an unexpected failure, wrapped so callers only ever see this class.
 */
export type PolicyRuntimeErrorKind =
  "MissingField" | "IndexOutOfRange" | "TypeMismatch" | "AbsentKeyword" | "InvalidInput" | "BudgetExceeded" | "Internal";

export class PolicyRuntimeError extends Error {
  readonly kind: PolicyRuntimeErrorKind;

  constructor(kind: PolicyRuntimeErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PolicyRuntimeError";
    this.kind = kind;
  }
}
