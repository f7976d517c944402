// update_organization_name (docs/organizations.md §7.5): the organization renames itself;
// root quorum only (docs/policy-language.md §4.9). Names need not be unique (as at creation).
import { Type } from "@sinclair/typebox";
import { Name } from "../../schemas/common.ts";
import { defineActivity } from "../define.ts";

export const updateOrganizationName = defineActivity({
  type: "ACTIVITY_TYPE_UPDATE_ORGANIZATION_NAME",
  resource: "ORGANIZATION",
  action: "UPDATE",
  kind: "UPDATE_ORGANIZATION_NAME",
  summary: "Rename the organization (root quorum only).",
  params: Type.Object({ organizationName: Name("organizationName") }),
  returns: Type.Object({ organizationId: Type.String(), organizationName: Type.String() }),
  rootOnly: true,
  async execute({ tx, organization, now }, p) {
    await tx.updateTable("organizations").set({ name: p.organizationName, updated_at: now }).where("id", "=", organization.id).execute();
    return { organizationId: organization.id, organizationName: p.organizationName };
  },
});
