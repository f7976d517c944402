import { Type } from "@sinclair/typebox";
import { notFound } from "../../errors.ts";
import { Id, maxItems } from "../../schemas/common.ts";
import { bumpPolicyVersion } from "../../store/policies.ts";
import { missingIn } from "../../store/ownership.ts";
import { lockOrganization } from "../../store/locks.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

/** Deletes the policies, all or nothing: one unknown id fails the whole activity. */
async function deletePolicies(ctx: ExecuteContext, ids: string[]): Promise<string[]> {
  const { tx, organization } = ctx;
  const unique = [...new Set(ids)];
  // Two deletes of one policy would both find it and both answer that they deleted it.
  await lockOrganization(tx, organization.id);
  const missing = await missingIn(tx, "policies", organization.id, unique);
  if (missing.length) throw notFound(`no policy ${missing.join(", ")} in organization ${organization.id}`);
  await tx.deleteFrom("policies").where("organization_id", "=", organization.id).where("id", "in", unique).execute();
  await bumpPolicyVersion(tx, organization.id);
  return unique;
}

export const deletePolicy = defineActivity({
  type: "ACTIVITY_TYPE_DELETE_POLICY",
  resource: "POLICY",
  action: "DELETE",
  kind: "DELETE_POLICY",
  summary: "Delete a policy.",
  params: Type.Object({ policyId: Id("policy") }),
  returns: Type.Object({ policyId: Type.String() }),
  async execute(ctx, p) {
    await deletePolicies(ctx, [p.policyId]);
    return { policyId: p.policyId };
  },
});

export const deletePoliciesActivity = defineActivity({
  type: "ACTIVITY_TYPE_DELETE_POLICIES",
  resource: "POLICY",
  action: "DELETE",
  kind: "DELETE_POLICIES",
  summary: "Delete several policies, all or nothing. Duplicate ids are collapsed.",
  params: Type.Object({ policyIds: maxItems(Id("policy"), "policyIds", 100, 1) }),
  returns: Type.Object({ policyIds: Type.Array(Type.String()) }),
  async execute(ctx, p) {
    return { policyIds: await deletePolicies(ctx, p.policyIds) };
  },
});
