import { Type } from "@sinclair/typebox";
import { notFound } from "../errors.ts";
import { Id, OrganizationId } from "../schemas/common.ts";
import { Activity } from "../schemas/views.ts";
import { findActivity } from "../store/activities.ts";
import { activityView } from "../views/activity.ts";
import { defineQuery } from "./define.ts";

export const getActivity = defineQuery({
  op: "get_activity",
  summary: "Get one activity (what the SDK pollers call).",
  request: Type.Object({ organizationId: OrganizationId, activityId: Id("activity") }),
  response: Type.Object({ activity: Activity }),
  async run({ db, state, organization, viewer }, req) {
    const row = await findActivity(db, req.activityId);
    if (!row || row.organization_id !== organization.id) {
      throw notFound(`no activity ${req.activityId} in organization ${organization.id}`);
    }
    return { activity: await activityView(db, row, undefined, viewer, state.governance) };
  },
});
