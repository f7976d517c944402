import { Type } from "@sinclair/typebox";
import { notFound } from "../errors.ts";
import { Id, OrganizationId } from "../schemas/common.ts";
import { Policy, PolicyEvaluation } from "../schemas/views.ts";
import { evaluationsOf, evaluationView, findPolicy, policiesOf, policyView } from "../store/policies.ts";
import { findActivity } from "../store/activities.ts";
import { defineQuery } from "./define.ts";

export const getPolicy = defineQuery({
  op: "get_policy",
  summary: "Get one policy, its expressions exactly as submitted.",
  request: Type.Object({ organizationId: OrganizationId, policyId: Id("policy") }),
  response: Type.Object({ policy: Policy }),
  async run({ db, organization }, req) {
    const row = await findPolicy(db, organization.id, req.policyId);
    if (!row) throw notFound(`no policy ${req.policyId} in organization ${organization.id}`);
    return { policy: policyView(row) };
  },
});

export const listPolicies = defineQuery({
  op: "list_policies",
  summary: "List an organization's policies, oldest first.",
  request: Type.Object({ organizationId: OrganizationId }),
  response: Type.Object({ policies: Type.Array(Policy) }),
  async run({ db, organization }) {
    return { policies: (await policiesOf(db, organization.id)).map(policyView) };
  },
});

export const getPolicyEvaluations = defineQuery({
  op: "get_policy_evaluations",
  summary:
    "Why an activity was decided as it was: one record per evaluation (per vote), each policy's outcome and the final outcome (the entry without policyId).",
  request: Type.Object({ organizationId: OrganizationId, activityId: Id("activity") }),
  response: Type.Object({ policyEvaluations: Type.Array(PolicyEvaluation) }),
  async run({ db, organization }, req) {
    const activity = await findActivity(db, req.activityId);
    if (!activity || activity.organization_id !== organization.id) {
      throw notFound(`no activity ${req.activityId} in organization ${organization.id}`);
    }
    return { policyEvaluations: (await evaluationsOf(db, activity.id)).map(evaluationView) };
  },
});
