// get_active_policies (SDK types v1GetActivePoliciesRequest / v1ActivePolicyStatus): whether each
// policy of the organization is in its time window now. A policy without a `time` expression is
// always active; one whose expression cannot be evaluated (a runtime error, or a stored
// expression that no longer compiles) is reported inactive with the error, as the SDK type
// describes — the same reading the engine gives it (docs/policy-language.md §6.3: a time error
// is OUTCOME_ERROR, never an allow).
import { Type } from "@sinclair/typebox";
import { OrganizationId } from "../schemas/common.ts";
import { compileExpression, PassBudget, PolicyCompileError, PolicyRuntimeError } from "../policy/index.ts";
import { policiesOf } from "../store/policies.ts";
import { defineQuery } from "./define.ts";

const ActivePolicyStatus = Type.Object({
  organizationId: Type.String(),
  policyId: Type.String(),
  active: Type.Boolean(),
  timeExpr: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
});

/**
 * Whether a time expression holds at `nowMs`: true, false, or the error that stopped it. The
 * organization's expressions share one pass budget, as in a decision (docs/policy-language.md §11.1).
 */
export function timeWindowAt(source: string, nowMs: number, budget: PassBudget = new PassBudget()): boolean | Error {
  try {
    const expr = compileExpression("time", source);
    return expr ? budget.run((m) => expr.evaluate({ nowMs }, m)) === true : true;
  } catch (err) {
    if (err instanceof PolicyRuntimeError || err instanceof PolicyCompileError) return err;
    throw err;
  }
}

export const getActivePolicies = defineQuery({
  op: "get_active_policies",
  summary: "For each policy of the organization, whether its time window (`time`) holds now; policies without one are always active.",
  request: Type.Object({ organizationId: OrganizationId }),
  response: Type.Object({ statuses: Type.Array(ActivePolicyStatus), evaluatedAtMs: Type.String() }),
  async run({ db, organization, now }) {
    const budget = new PassBudget();
    const statuses = (await policiesOf(db, organization.id)).map((row) => {
      const timed = row.time.trim() !== "";
      const at = timed ? timeWindowAt(row.time, now, budget) : true;
      return {
        organizationId: organization.id,
        policyId: row.id,
        active: at === true,
        ...(timed ? { timeExpr: row.time } : {}),
        ...(at instanceof Error ? { error: at.message } : {}),
      };
    });
    return { statuses, evaluatedAtMs: String(now) };
  },
});
