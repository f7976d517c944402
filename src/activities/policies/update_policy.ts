import { Type, type Static } from "@sinclair/typebox";
import { invalid, notFound } from "../../errors.ts";
import { Id } from "../../schemas/common.ts";
import { bumpPolicyVersion, findPolicy } from "../../store/policies.ts";
import { isUniqueViolation } from "../../store/util.ts";
import { lockOrganization } from "../../store/locks.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { Effect, Expression, Notes, PolicyName, checkExpressions } from "./policy-fields.ts";

// updatePolicyIntentV2: an absent field keeps its value; an empty expression clears it.
const Params = Type.Object({
  policyId: Id("policy"),
  policyName: Type.Optional(PolicyName),
  policyEffect: Type.Optional(Effect),
  policyCondition: Type.Optional(Expression("policyCondition")),
  policyConsensus: Type.Optional(Expression("policyConsensus")),
  policyNotes: Type.Optional(Notes),
  time: Type.Optional(Expression("time")),
});
type P = Static<typeof Params>;

async function execute(ctx: ExecuteContext, p: P) {
  const { tx, organization, now } = ctx;
  // Absent fields are merged from the stored row: read it only once concurrent writers of
  // this organization's policies are done, or their changes would be written back over.
  await lockOrganization(tx, organization.id);
  const current = await findPolicy(tx, organization.id, p.policyId);
  if (!current) throw notFound(`no policy ${p.policyId} in organization ${organization.id}`);
  try {
    await tx
      .updateTable("policies")
      .set({
        name: p.policyName ?? current.name,
        effect: p.policyEffect ?? current.effect,
        condition: p.policyCondition ?? current.condition,
        consensus: p.policyConsensus ?? current.consensus,
        time: p.time ?? current.time,
        notes: p.policyNotes ?? current.notes,
        updated_at: now,
      })
      .where("id", "=", current.id)
      .execute();
  } catch (err) {
    if (isUniqueViolation(err, "policies")) throw invalid("policy label must be unique: another policy has this name");
    throw err;
  }
  await bumpPolicyVersion(tx, organization.id);
  return { policyId: current.id };
}

const Result = Type.Object({ policyId: Type.String() });

export const updatePolicyV2 = defineActivity({
  type: "ACTIVITY_TYPE_UPDATE_POLICY_V2",
  result: "updatePolicyResultV2",
  resource: "POLICY",
  action: "UPDATE",
  kind: "UPDATE_POLICY",
  summary: "Update a policy: absent fields are kept, an empty expression clears it.",
  params: Params,
  returns: Result,
  check: (p) =>
    checkExpressions({ condition: p.policyCondition, consensus: p.policyConsensus, time: p.time }, "parameters", {
      condition: "policyCondition",
      consensus: "policyConsensus",
      time: "time",
    }),
  execute,
});
