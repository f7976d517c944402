import { Type, type Static } from "@sinclair/typebox";
import { notFound } from "../../errors.ts";
import { Id } from "../../schemas/common.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { lockPolicyOwner } from "./mfa-fields.ts";

// v1DeleteMfaPolicyIntent (docs/mfa.md §1). Activities already waiting keep what they owe.
const Params = Type.Object({ userId: Id("user"), mfaPolicyId: Id("MFA policy") });

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization } = ctx;
  await lockPolicyOwner(tx, organization.id, p.userId);
  const deleted = await tx
    .deleteFrom("mfa_policies")
    .where("id", "=", p.mfaPolicyId)
    .where("organization_id", "=", organization.id)
    .where("user_id", "=", p.userId)
    .executeTakeFirst();
  if (Number(deleted.numDeletedRows) === 0)
    throw notFound(`no MFA policy ${p.mfaPolicyId} of user ${p.userId} in organization ${organization.id}`);
  return { mfaPolicyId: p.mfaPolicyId };
}

export const deleteMfaPolicy = defineActivity({
  type: "ACTIVITY_TYPE_DELETE_MFA_POLICY",
  result: "deleteMfaPolicyResult",
  resource: "MFA_POLICY",
  action: "DELETE",
  kind: "DELETE_MFA_POLICY",
  summary: "Delete a user's MFA policy.",
  params: Params,
  returns: Type.Object({ mfaPolicyId: Type.String() }),
  policyParams: (p) => ({ user_id: p.userId, mfa_policy_id: p.mfaPolicyId }),
  execute,
});
