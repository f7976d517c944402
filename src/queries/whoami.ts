import { Type } from "@sinclair/typebox";
import { OrganizationId } from "../schemas/common.ts";
import { defineQuery } from "./define.ts";

export const whoami = defineQuery({
  op: "whoami",
  summary: "The user behind the request's credential and the organization that user belongs to.",
  // Passkey users call it with the parent organization's id (docs/stamps.md §5.2): a credential
  // held in a sub-organization below the target answers with that sub-organization's user.
  credentialScope: "then-descendants",
  request: Type.Object({ organizationId: OrganizationId }),
  response: Type.Object({
    organizationId: Type.String(),
    organizationName: Type.String(),
    userId: Type.String(),
    username: Type.String(),
  }),
  async run({ actor }) {
    // The credential may live in an ancestor of the named organization: answer with the
    // organization the user actually belongs to.
    return {
      organizationId: actor.organizationId,
      organizationName: actor.organizationName,
      userId: actor.userId,
      username: actor.userName,
    };
  },
});
