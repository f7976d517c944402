// How much work one evaluation may do (docs/policy-language.md §11). Every evaluation runs
// against a meter: the compiled closures charge it for each lambda iteration (the nodes of
// the predicate), each element a membership test scans and each long string they index, and
// past its end the evaluation stops with a BudgetExceeded runtime error — OUTCOME_ERROR for
// that policy, and a refusal for the activity (engine.ts). A pass over many policies (or many
// MFA conditions) shares one total so that many cheap evaluations cannot add up either.
import { PolicyRuntimeError } from "./errors.ts";

export interface EvaluationLimits {
  /** Steps one evaluation (one policy's fields, a session scope, an MFA condition) may take. */
  readonly steps: number;
  /** Steps a whole pass (every policy of an activity, every MFA condition of a user) may take. */
  readonly passSteps: number;
  /** Static bound checked when tenant input is compiled: lambda iterations and membership scans, worst case. */
  readonly iterations: number;
}

/** Defaults (docs/policy-language.md §11.4 for how they were measured). */
export const DEFAULT_LIMITS: EvaluationLimits = { steps: 100_000, passSteps: 300_000, iterations: 100_000 };

let limits: EvaluationLimits = DEFAULT_LIMITS;

/** Set once at startup from the knobs (cli/serve.ts); one value per process. */
export function setEvaluationLimits(next: EvaluationLimits): void {
  limits = next;
}

export function evaluationLimits(): EvaluationLimits {
  return limits;
}

/** What one evaluation may still spend; `message` says which budget ran out. */
export interface Meter {
  left: number;
  readonly message: string;
}

export const budgetMessage = (steps: number): string => `evaluation budget of ${steps} steps exceeded`;
const passMessage = (total: number): string => `evaluation budget of the whole pass (${total} steps) exceeded`;

/** A meter for one evaluation on its own. */
export function meterOf(steps: number = limits.steps): Meter {
  return { left: steps, message: budgetMessage(steps) };
}

// One error per message, reused: once a pass is spent every remaining policy overruns at its
// first step, and capturing a stack trace each time cost more than the evaluations it stopped.
const overruns = new Map<string, PolicyRuntimeError>();

export function overBudget(m: Meter): PolicyRuntimeError {
  m.left = -1; // stays spent: nothing after the overrun in this evaluation runs
  let err = overruns.get(m.message);
  if (!err) {
    if (overruns.size >= 64) overruns.clear();
    err = new PolicyRuntimeError("BudgetExceeded", m.message);
    overruns.set(m.message, err);
  }
  return err;
}

/**
 * One pass: each evaluation gets its own meter, cut to what the pass has left, and what it
 * spent comes off the pass's total.
 */
export class PassBudget {
  private left: number;
  // One meter per pass, reset for each evaluation: a decision over many policies allocates none
  // (evaluations are synchronous and never nested within one pass).
  private readonly meter: { left: number; message: string } = { left: 0, message: "" };
  private readonly ownMessage: string;
  private readonly passMessage: string;

  constructor(
    private readonly steps: number = limits.steps,
    total: number = limits.passSteps,
  ) {
    this.left = total;
    this.ownMessage = budgetMessage(steps);
    this.passMessage = passMessage(total);
  }

  /** The message of the pass's budget once nothing is left of it, so callers can skip the work. */
  spent(): string | undefined {
    return this.left <= 0 ? this.passMessage : undefined;
  }

  run<T>(fn: (m: Meter) => T): T {
    const start = Math.max(0, Math.min(this.steps, this.left));
    const m = this.meter;
    m.left = start;
    m.message = start < this.steps ? this.passMessage : this.ownMessage;
    try {
      return fn(m);
    } finally {
      this.left -= start - Math.max(0, m.left);
    }
  }
}

/** Whether an error is an exhausted budget (the activity is then refused, docs/policy-language.md §11.2). */
export const isBudgetError = (err: unknown): boolean => err instanceof PolicyRuntimeError && err.kind === "BudgetExceeded";
