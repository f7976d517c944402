// The organization lifecycle and feature activities (docs/organizations.md §7, §8), listed once
// for the registry.
import { deleteSubOrganization } from "./delete_sub_organization.ts";
import { removeOrganizationFeature, setOrganizationFeature } from "./set_organization_feature.ts";
import { updateOrganizationName } from "./update_organization_name.ts";

export const ORGANIZATION_LIFECYCLE_ACTIVITIES = [
  deleteSubOrganization,
  updateOrganizationName,
  setOrganizationFeature,
  removeOrganizationFeature,
];
