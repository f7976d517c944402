// delete_sub_organization (docs/organizations.md §7.2): a sub-organization deletes itself —
// started by one of its own root users and decided by its root quorum alone (`rootOnly`); a
// parent's credential is refused before anything is recorded (pipeline/parent-writes.ts).
// Everything the organization owns goes in this activity's transaction; its activities stay,
// and from the commit on the organization id is answered as an unknown one (docs/organizations.md §7.3).
import { Type } from "@sinclair/typebox";
import { invalid, notFound, precondition } from "../../errors.ts";
import {
  deleteOrganizationContents,
  hasLiveSubOrganizations,
  lockOrganizationForDeletion,
  unexportedKeys,
} from "../../store/organization-deletion.ts";
import { defineActivity } from "../define.ts";

export const deleteSubOrganization = defineActivity({
  type: "ACTIVITY_TYPE_DELETE_SUB_ORGANIZATION",
  resource: "ORGANIZATION",
  action: "DELETE",
  kind: "DELETE_SUB_ORGANIZATION",
  summary: "Delete this sub-organization and everything it owns (its root quorum decides; its activities stay for audit).",
  params: Type.Object({ deleteWithoutExport: Type.Optional(Type.Boolean({ errorMessage: "must be a boolean" })) }),
  returns: Type.Object({ subOrganizationUuid: Type.String() }),
  rootOnly: true,
  deletesOrganization: true,
  async execute({ tx, organization, now }, p) {
    // First: every activity of the organization still running queues behind this lock, and
    // finds the organization gone once this commits (store/organizations.ts liveOrganizationLocked).
    const org = await lockOrganizationForDeletion(tx, organization.id);
    if (!org) throw notFound(`organization ${organization.id} not found`, "ORGANIZATION_NOT_FOUND");
    if (org.parent_id === null) {
      throw precondition(`organization ${organization.id} is a top-level organization: only sub-organizations can be deleted`);
    }
    if (await hasLiveSubOrganizations(tx, organization.id)) {
      throw precondition(`organization ${organization.id} has sub-organizations of its own: delete them first`);
    }
    if (p.deleteWithoutExport !== true) {
      const { wallets, privateKeys } = await unexportedKeys(tx, organization.id);
      if (wallets + privateKeys > 0) {
        const why =
          `${wallets} wallet(s) and ${privateKeys} private key(s) of the organization have never been exported; deleting it loses ` +
          "their keys for good: export them first, or set deleteWithoutExport to true";
        throw invalid(`parameters.deleteWithoutExport: ${why}`, [{ field: "parameters.deleteWithoutExport", description: why }]);
      }
    }
    await deleteOrganizationContents(tx, organization.id, now);
    return { subOrganizationUuid: organization.id };
  },
});
