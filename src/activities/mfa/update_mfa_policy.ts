import { Type, type Static } from "@sinclair/typebox";
import { alreadyExists, notFound } from "../../errors.ts";
import { Id } from "../../schemas/common.ts";
import { isUniqueViolation } from "../../store/util.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { RequiredMethodsParams } from "./methods.ts";
import {
  checkCondition,
  checkedSteps,
  checkNamedCredentials,
  Condition,
  lockPolicyOwner,
  MfaNotes,
  MfaPolicyName,
  Order,
} from "./mfa-fields.ts";
import { findMfaPolicy } from "../../store/mfa-policies.ts";

// v1UpdateMfaPolicyIntent: an absent field keeps its value (docs/mfa.md §1).
const Params = Type.Object({
  userId: Id("user"),
  mfaPolicyId: Id("MFA policy"),
  mfaPolicyName: Type.Optional(MfaPolicyName),
  condition: Type.Optional(Condition),
  requiredAuthenticationMethods: Type.Optional(RequiredMethodsParams),
  order: Type.Optional(Order),
  notes: Type.Optional(MfaNotes),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, now } = ctx;
  const steps = p.requiredAuthenticationMethods ? checkedSteps(p.requiredAuthenticationMethods) : undefined;
  // Absent fields are merged from the stored row, read under the lock.
  await lockPolicyOwner(tx, organization.id, p.userId);
  const current = await findMfaPolicy(tx, organization.id, p.userId, p.mfaPolicyId);
  if (!current) throw notFound(`no MFA policy ${p.mfaPolicyId} of user ${p.userId} in organization ${organization.id}`);
  if (steps) await checkNamedCredentials(tx, organization.id, p.userId, steps);
  try {
    await tx
      .updateTable("mfa_policies")
      .set({
        name: p.mfaPolicyName ?? current.name,
        condition: p.condition ?? current.condition,
        required: steps ? JSON.stringify(steps) : current.required,
        position: p.order ?? current.position,
        notes: p.notes ?? current.notes,
        updated_at: now,
      })
      .where("id", "=", current.id)
      .execute();
  } catch (err) {
    if (isUniqueViolation(err, "mfa_policies"))
      throw alreadyExists(`user ${p.userId} already has an MFA policy named ${JSON.stringify(p.mfaPolicyName)}`);
    throw err;
  }
  return { mfaPolicyId: current.id };
}

export const updateMfaPolicy = defineActivity({
  type: "ACTIVITY_TYPE_UPDATE_MFA_POLICY",
  result: "updateMfaPolicyResult",
  resource: "MFA_POLICY",
  action: "UPDATE",
  kind: "UPDATE_MFA_POLICY",
  summary: "Update a user's MFA policy: absent fields are kept. Activities already waiting keep the steps they matched.",
  params: Params,
  returns: Type.Object({ mfaPolicyId: Type.String() }),
  check: (p) => checkCondition(p.condition),
  policyParams: (p) => ({ user_id: p.userId, mfa_policy_id: p.mfaPolicyId }),
  execute,
});
