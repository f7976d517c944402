import { Type } from "@sinclair/typebox";
import { OrganizationId, Pagination, maxItems } from "../schemas/common.ts";
import { Activity } from "../schemas/views.ts";
import { listActivities } from "../store/activities.ts";
import { pageRequest } from "../store/pagination.ts";
import { activityViews } from "../views/activity.ts";
import { defineQuery } from "./define.ts";

const Status = Type.Union(
  [
    "ACTIVITY_STATUS_CREATED",
    "ACTIVITY_STATUS_PENDING",
    "ACTIVITY_STATUS_COMPLETED",
    "ACTIVITY_STATUS_FAILED",
    "ACTIVITY_STATUS_CONSENSUS_NEEDED",
    "ACTIVITY_STATUS_REJECTED",
    "ACTIVITY_STATUS_AUTHENTICATORS_NEEDED",
  ].map((s) => Type.Literal(s)),
  { errorMessage: "must be an ACTIVITY_STATUS_* value" },
);

export const listActivitiesQuery = defineQuery({
  op: "list_activities",
  summary: "List an organization's activities, newest first, with status/type filters and cursor pagination.",
  request: Type.Object({
    organizationId: OrganizationId,
    filterByStatus: Type.Optional(maxItems(Status, "filterByStatus", 10)),
    filterByType: Type.Optional(
      maxItems(Type.String({ pattern: "^ACTIVITY_TYPE_[A-Z0-9_]+$", errorMessage: "must be an ACTIVITY_TYPE_* value" }), "filterByType", 100),
    ),
    paginationOptions: Type.Optional(Pagination),
  }),
  response: Type.Object({ activities: Type.Array(Activity) }),
  async run({ db, organization, viewer }, req) {
    const rows = await listActivities(
      db,
      { organizationId: organization.id, statuses: req.filterByStatus, types: req.filterByType },
      pageRequest(req.paginationOptions),
    );
    return { activities: await activityViews(db, rows, undefined, viewer) };
  },
});
