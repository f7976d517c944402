// The MFA queries (docs/mfa.md §5): a user's MFA policies, and what the users of a waiting
// activity still owe it.
import { Type } from "@sinclair/typebox";
import { notFound } from "../errors.ts";
import { Id, OrganizationId, Timestamp } from "../schemas/common.ts";
import { findActivity } from "../store/activities.ts";
import { findUser } from "../store/users.ts";
import { findMfaPolicy, mfaPoliciesOf, mfaPolicyView, mfaStatusView, requirementsOf } from "../store/mfa-policies.ts";
import { AUTHENTICATION_TYPES } from "../activities/mfa/methods.ts";
import type { Executor } from "../store/schema.ts";
import { defineQuery } from "./define.ts";

const Method = Type.Object({ type: Type.String({ description: AUTHENTICATION_TYPES.join(" | ") }), id: Type.Optional(Type.String()) });
const Step = Type.Object({ any: Type.Array(Method) });
/** v1MfaPolicy. */
const MfaPolicy = Type.Object({
  mfaPolicyId: Type.String(),
  mfaPolicyName: Type.String(),
  condition: Type.String(),
  requiredAuthenticationMethods: Type.Array(Step),
  order: Type.Number(),
  notes: Type.Optional(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
/** v1MfaStatus. */
const MfaStatus = Type.Object({
  mfaPolicyId: Type.String(),
  userId: Type.String(),
  satisfied: Type.Boolean(),
  satisfiedMethods: Type.Array(Method),
  requiredMethods: Type.Array(Step),
});

async function requireUser(db: Executor, organizationId: string, userId: string): Promise<void> {
  if (!(await findUser(db, organizationId, userId))) throw notFound(`no user ${userId} in organization ${organizationId}`);
}

export const getMfaPolicy = defineQuery({
  op: "get_mfa_policy",
  summary: "Get one MFA policy of a user.",
  request: Type.Object({ organizationId: OrganizationId, userId: Id("user"), mfaPolicyId: Id("MFA policy") }),
  response: Type.Object({ mfaPolicy: MfaPolicy }),
  async run({ db, organization }, req) {
    const row = await findMfaPolicy(db, organization.id, req.userId, req.mfaPolicyId);
    if (!row) throw notFound(`no MFA policy ${req.mfaPolicyId} of user ${req.userId} in organization ${organization.id}`);
    return { mfaPolicy: mfaPolicyView(row) };
  },
});

export const getMfaPolicies = defineQuery({
  op: "get_mfa_policies",
  summary: "List a user's MFA policies in evaluation order (order, then creation).",
  request: Type.Object({ organizationId: OrganizationId, userId: Id("user") }),
  response: Type.Object({ mfaPolicies: Type.Array(MfaPolicy) }),
  async run({ db, organization }, req) {
    await requireUser(db, organization.id, req.userId);
    return { mfaPolicies: (await mfaPoliciesOf(db, organization.id, req.userId)).map(mfaPolicyView) };
  },
});

export const getMfaStatus = defineQuery({
  op: "get_mfa_status",
  summary: "What an activity's users owe it: for each, the MFA policy that matched, the steps it requires and those met so far.",
  request: Type.Object({ organizationId: OrganizationId, activityId: Id("activity"), userId: Type.Optional(Id("user")) }),
  response: Type.Object({ mfaStatuses: Type.Array(MfaStatus) }),
  async run({ db, organization }, req) {
    const activity = await findActivity(db, req.activityId);
    if (!activity || activity.organization_id !== organization.id) {
      throw notFound(`no activity ${req.activityId} in organization ${organization.id}`);
    }
    return { mfaStatuses: (await requirementsOf(db, activity.id, req.userId)).map(mfaStatusView) };
  },
});
