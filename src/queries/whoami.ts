import { Type } from "@sinclair/typebox";
import { OrganizationId } from "../schemas/common.ts";
import { findOrganization } from "../store/organizations.ts";
import { defineQuery } from "./define.ts";

export const whoami = defineQuery({
  op: "whoami",
  summary: "The user behind the request's credential and the organization that user belongs to.",
  request: Type.Object({ organizationId: OrganizationId }),
  response: Type.Object({
    organizationId: Type.String(),
    organizationName: Type.String(),
    userId: Type.String(),
    username: Type.String(),
  }),
  async run({ db, organization, actor }) {
    // The credential may live in an ancestor of the named organization: answer with the
    // organization the user actually belongs to.
    const home = actor.organizationId === organization.id ? organization : await findOrganization(db, actor.organizationId);
    return {
      organizationId: actor.organizationId,
      organizationName: home?.name ?? "",
      userId: actor.userId,
      username: actor.userName,
    };
  },
});
