import { Type, type Static } from "@sinclair/typebox";
import { alreadyExists } from "../../errors.ts";
import { Id } from "../../schemas/common.ts";
import { isUniqueViolation, newId } from "../../store/util.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { RequiredMethodsParams } from "./methods.ts";
import {
  checkCaps,
  checkCondition,
  checkedSteps,
  checkNamedCredentials,
  Condition,
  lockPolicyOwner,
  MfaNotes,
  MfaPolicyName,
  Order,
} from "./mfa-fields.ts";

// v1CreateMfaPolicyIntent (docs/mfa.md §1).
const Params = Type.Object({
  userId: Id("user"),
  mfaPolicyName: MfaPolicyName,
  condition: Condition,
  requiredAuthenticationMethods: RequiredMethodsParams,
  order: Order,
  notes: Type.Optional(MfaNotes),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, now } = ctx;
  const steps = checkedSteps(p.requiredAuthenticationMethods);
  await lockPolicyOwner(tx, organization.id, p.userId);
  await checkNamedCredentials(tx, organization.id, p.userId, steps);
  await checkCaps(tx, organization.id, p.userId);
  const mfaPolicyId = newId();
  try {
    await tx
      .insertInto("mfa_policies")
      .values({
        id: mfaPolicyId,
        organization_id: organization.id,
        user_id: p.userId,
        name: p.mfaPolicyName,
        condition: p.condition,
        required: JSON.stringify(steps),
        position: p.order,
        notes: p.notes ?? "",
        created_at: now,
        updated_at: now,
      })
      .execute();
  } catch (err) {
    if (isUniqueViolation(err, "mfa_policies"))
      throw alreadyExists(`user ${p.userId} already has an MFA policy named ${JSON.stringify(p.mfaPolicyName)}`);
    throw err;
  }
  return { mfaPolicyId };
}

export const createMfaPolicy = defineActivity({
  type: "ACTIVITY_TYPE_CREATE_MFA_POLICY",
  result: "createMfaPolicyResult",
  resource: "MFA_POLICY",
  action: "CREATE",
  kind: "CREATE_MFA_POLICY",
  summary: "Create an MFA policy for a user of the organization: a condition and the authentication steps it requires.",
  params: Params,
  returns: Type.Object({ mfaPolicyId: Type.String() }),
  check: (p) => checkCondition(p.condition),
  policyParams: (p) => ({ user_id: p.userId }),
  execute,
});
