import { Type } from "@sinclair/typebox";
import { OrganizationId, Pagination, maxItems } from "../schemas/common.ts";
import { Activity } from "../schemas/views.ts";
import { listActivities } from "../store/activities.ts";
import { ACTIVITY_STATUSES } from "../store/schema.ts";
import { pageRequest } from "../store/pagination.ts";
import { activityViews } from "../views/activity.ts";
import { defineQuery } from "./define.ts";

const Status = Type.Union(
  ACTIVITY_STATUSES.map((s) => Type.Literal(s)),
  { errorMessage: "must be an ACTIVITY_STATUS_* value" },
);

export const listActivitiesQuery = defineQuery({
  op: "list_activities",
  summary: "List an organization's activities, newest first, with status/type filters and cursor pagination.",
  request: Type.Object({
    organizationId: OrganizationId,
    filterByStatus: Type.Optional(maxItems(Status, "filterByStatus", 10)),
    filterByType: Type.Optional(
      maxItems(
        Type.String({ pattern: "^ACTIVITY_TYPE_[A-Z0-9_]+$", errorMessage: "must be an ACTIVITY_TYPE_* value" }),
        "filterByType",
        100,
      ),
    ),
    paginationOptions: Type.Optional(Pagination),
  }),
  response: Type.Object({ activities: Type.Array(Activity) }),
  async run({ db, state, organization, viewer }, req) {
    const rows = await listActivities(
      db,
      { organizationId: organization.id, statuses: req.filterByStatus, types: req.filterByType },
      pageRequest(req.paginationOptions),
    );
    return { activities: await activityViews(db, rows, undefined, viewer, state.governance) };
  },
});
