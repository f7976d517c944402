// What the MFA policy activities share: field schemas, checks, and the per-user lock
// under which caps are counted (docs/mfa.md §1).
import { Type } from "@sinclair/typebox";
import { exhausted, invalid, notFound } from "../../errors.ts";
import { Name } from "../../schemas/common.ts";
import { compileSubmitted, PolicyCompileError } from "../../policy/index.ts";
import { lockOrganization, lockUsers } from "../../store/locks.ts";
import type { Executor } from "../../store/schema.ts";
import { idlessProblem, normalizeSteps, type Step } from "./methods.ts";
import { countMfaPolicies, MAX_MFA_POLICIES_PER_ORGANIZATION, MAX_MFA_POLICIES_PER_USER } from "../../store/mfa-policies.ts";

export const MAX_CONDITION_LENGTH = 8192;
/** `order` as an int64 in the SDK; kept to what every engine stores exactly. */
export const MAX_ORDER = 2_147_483_647;

export const MfaPolicyName = Name("mfaPolicyName");
export const Condition = Type.String({
  minLength: 1,
  maxLength: MAX_CONDITION_LENGTH,
  errorMessage: `condition must be a policy expression of 1 to ${MAX_CONDITION_LENGTH} characters`,
});
export const Order = Type.Integer({ minimum: 0, maximum: MAX_ORDER, errorMessage: `order must be an integer from 0 to ${MAX_ORDER}` });
export const MfaNotes = Type.String({ maxLength: 4096, errorMessage: "notes must be at most 4096 characters" });

/** The condition compiles (as a policy condition, within the static cost bound of docs/policy-language.md §11.3) and is not blank; refused naming the problem otherwise. */
export function checkCondition(source: string | undefined): void {
  if (source === undefined) return;
  try {
    if (compileSubmitted("condition", source) === null)
      throw invalid("condition must not be blank", [{ field: "parameters.condition", description: "blank" }]);
  } catch (err) {
    if (!(err instanceof PolicyCompileError)) throw err;
    throw invalid(`invalid MFA policy condition: ${err.message}`, [{ field: "parameters.condition", description: err.message }]);
  }
}

/** The steps as stored, refused when a method names an id its type cannot have. */
export function checkedSteps(steps: Parameters<typeof normalizeSteps>[0]): Step[] {
  const normalized = normalizeSteps(steps);
  const problem = idlessProblem(normalized);
  if (problem) throw invalid(`requiredAuthenticationMethods: ${problem} (email and SMS OTP are not told apart by id)`);
  return normalized;
}

/**
 * Locks the organization, then the user (the lock order of store/locks.ts), so the caps are
 * counted with no concurrent writer of this organization's MFA policies; the user must be
 * one of the organization's (docs/mfa.md §4: never another tenant's).
 */
export async function lockPolicyOwner(tx: Executor, organizationId: string, userId: string): Promise<void> {
  await lockOrganization(tx, organizationId);
  const found = await lockUsers(tx, organizationId, [userId], "shared");
  if (!found.includes(userId)) throw notFound(`no user ${userId} in organization ${organizationId}`);
}

/** Refuses one more policy beyond either cap. Call under lockPolicyOwner. */
export async function checkCaps(tx: Executor, organizationId: string, userId: string): Promise<void> {
  const mine = await countMfaPolicies(tx, organizationId, userId);
  if (mine >= MAX_MFA_POLICIES_PER_USER) {
    throw exhausted(`user ${userId} has ${mine} MFA policies; at most ${MAX_MFA_POLICIES_PER_USER} are allowed per user`);
  }
  const all = await countMfaPolicies(tx, organizationId);
  if (all >= MAX_MFA_POLICIES_PER_ORGANIZATION) {
    throw exhausted(
      `organization ${organizationId} has ${all} MFA policies; at most ${MAX_MFA_POLICIES_PER_ORGANIZATION} are allowed per organization`,
    );
  }
}

/** Methods that name a credential of the user (a passkey, an API key, an OAuth provider) must name one of theirs. */
export async function checkNamedCredentials(tx: Executor, organizationId: string, userId: string, steps: readonly Step[]): Promise<void> {
  const named = (type: string) => [
    ...new Set(steps.flatMap((s) => s.any.filter((m) => m.type === type && m.id !== undefined).map((m) => m.id!))),
  ];
  const tables = [
    ["AUTHENTICATION_TYPE_PASSKEY", "authenticators", "passkey"],
    ["AUTHENTICATION_TYPE_API_KEY", "api_keys", "API key"],
    ["AUTHENTICATION_TYPE_OAUTH", "oauth_providers", "OAuth provider"],
  ] as const;
  for (const [type, table, what] of tables) {
    const ids = named(type);
    if (!ids.length) continue;
    const rows = await tx
      .selectFrom(table)
      .select("id")
      .where("id", "in", ids)
      .where("user_id", "=", userId)
      .where("organization_id", "=", organizationId)
      .execute();
    const found = new Set(rows.map((r) => r.id));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length) throw notFound(`no ${what} ${missing.join(", ")} of user ${userId}`);
  }
}
