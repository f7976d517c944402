import { Type, type Static } from "@sinclair/typebox";
import { newOrderedId } from "../../store/util.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { CREATE_FIELD_NAMES, CreatePolicyParams, checkExpressions, insertPolicies } from "./policy-fields.ts";
import type { PolicyRow } from "../../store/policies.ts";

type CreatePolicy = Static<typeof CreatePolicyParams>;

/** The row for a create intent; expressions are kept exactly as submitted. */
export function policyRow(organizationId: string, p: CreatePolicy, now: number): PolicyRow {
  return {
    id: newOrderedId(now),
    organization_id: organizationId,
    name: p.policyName,
    effect: p.effect,
    condition: p.condition ?? "",
    consensus: p.consensus ?? "",
    time: p.time ?? "",
    notes: p.notes,
    created_at: now,
    updated_at: now,
  };
}

async function execute(ctx: ExecuteContext, p: CreatePolicy) {
  const row = policyRow(ctx.organization.id, p, ctx.now);
  await insertPolicies(ctx.tx, ctx.organization.id, [row]);
  return { policyId: row.id };
}

const PolicyResult = Type.Object({ policyId: Type.String() });
const PoliciesResult = Type.Object({ policyIds: Type.Array(Type.String()) });

export const createPolicyV3 = defineActivity({
  type: "ACTIVITY_TYPE_CREATE_POLICY_V3",
  // result: createPolicyResult, the one result name without its version suffix (docs/policy-language.md §7.2).
  resource: "POLICY",
  action: "CREATE",
  kind: "CREATE_POLICY",
  summary: "Create a policy. Its condition, consensus and time expressions are compiled and type-checked at submission.",
  params: CreatePolicyParams,
  returns: PolicyResult,
  check: (p) => checkExpressions(p, "parameters", CREATE_FIELD_NAMES),
  execute,
});

const CreatePoliciesParams = Type.Object({
  policies: Type.Array(CreatePolicyParams, { minItems: 1, maxItems: 100, errorMessage: "policies must hold 1 to 100 policies" }),
});

export const createPolicies = defineActivity({
  type: "ACTIVITY_TYPE_CREATE_POLICIES",
  resource: "POLICY",
  action: "CREATE",
  kind: "CREATE_POLICIES",
  summary: "Create several policies, all or nothing. Policy ids are returned in input order.",
  params: CreatePoliciesParams,
  returns: PoliciesResult,
  check: (p) => p.policies.forEach((item, i) => checkExpressions(item, `parameters.policies[${i}]`, CREATE_FIELD_NAMES)),
  async execute(ctx, p) {
    const rows = p.policies.map((item) => policyRow(ctx.organization.id, item, ctx.now));
    await insertPolicies(ctx.tx, ctx.organization.id, rows);
    return { policyIds: rows.map((r) => r.id) };
  },
});
