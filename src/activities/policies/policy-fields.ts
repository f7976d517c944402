// What every policy-writing activity shares: field schemas, expression checks, the write.
import { Type } from "@sinclair/typebox";
import { exhausted, invalid } from "../../errors.ts";
import { Name } from "../../schemas/common.ts";
import { compileSubmitted, PolicyCompileError, type Field } from "../../policy/index.ts";
import { bumpPolicyVersion, countPolicies, MAX_POLICIES_PER_ORGANIZATION, type PolicyRow } from "../../store/policies.ts";
import { isUniqueViolation } from "../../store/util.ts";
import type { Executor } from "../../store/schema.ts";
import { lockOrganization } from "../../store/locks.ts";

/** Longer than any documented policy by far; the language caps its own input too. */
export const MAX_EXPRESSION_LENGTH = 8192;

export const Effect = Type.Union([Type.Literal("EFFECT_ALLOW"), Type.Literal("EFFECT_DENY")], {
  errorMessage: "must be EFFECT_ALLOW or EFFECT_DENY",
});
export const Expression = (what: string) =>
  Type.String({
    maxLength: MAX_EXPRESSION_LENGTH,
    errorMessage: `${what} must be a policy expression of at most ${MAX_EXPRESSION_LENGTH} characters`,
  });
export const PolicyName = Name("policyName");
export const Notes = Type.String({ maxLength: 4096, errorMessage: "notes must be at most 4096 characters" });

/** createPolicyIntentV3, also the items of createPoliciesIntent. */
export const CreatePolicyParams = Type.Object({
  policyName: PolicyName,
  effect: Effect,
  condition: Type.Optional(Expression("condition")),
  consensus: Type.Optional(Expression("consensus")),
  notes: Notes,
  time: Type.Optional(Expression("time")),
});

/**
 * Compiles each present expression so a policy that would not parse or type-check, or whose
 * worst evaluation is past the static cost bound (docs/policy-language.md §11.3), is refused
 * at submission, naming the field, line, column and problem.
 */
export function checkExpressions(exprs: Partial<Record<Field, string | undefined>>, path: string, names: Record<Field, string>): void {
  for (const field of ["condition", "consensus", "time"] as const) {
    const source = exprs[field];
    if (source === undefined) continue;
    try {
      compileSubmitted(field, source);
    } catch (err) {
      if (!(err instanceof PolicyCompileError)) throw err;
      throw invalid(`invalid policy ${field}: ${err.message}`, [{ field: `${path}.${names[field]}`, description: err.message }]);
    }
  }
}

export const CREATE_FIELD_NAMES: Record<Field, string> = { condition: "condition", consensus: "consensus", time: "time" };

/** Inserts policies, enforcing the per-organization cap and unique names. */
export async function insertPolicies(tx: Executor, organizationId: string, rows: PolicyRow[]): Promise<void> {
  const names = new Set<string>();
  for (const r of rows) {
    if (names.has(r.name)) throw invalid(`policy label must be unique: ${JSON.stringify(r.name)} is given twice`);
    names.add(r.name);
  }
  // Concurrent policy writers of one organization count one after the other (the lock), so
  // the cap holds: a count taken without it could be stale by the time we insert.
  await lockOrganization(tx, organizationId);
  const existing = await countPolicies(tx, organizationId);
  if (existing + rows.length > MAX_POLICIES_PER_ORGANIZATION) {
    throw exhausted(
      `organization ${organizationId} has ${existing} policies; at most ${MAX_POLICIES_PER_ORGANIZATION} are allowed per organization`,
    );
  }
  try {
    await tx.insertInto("policies").values(rows).execute();
  } catch (err) {
    if (isUniqueViolation(err, "policies")) throw invalid("policy label must be unique: a policy with this name already exists");
    throw err;
  }
  await bumpPolicyVersion(tx, organizationId);
}
