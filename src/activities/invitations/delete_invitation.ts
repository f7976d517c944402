// delete_invitation (SDK type v1DeleteInvitationIntent; docs/invitations.md §4): a live
// invitation is revoked — its token digest cleared, so the mailed token matches nothing, and
// its limit slots given back. The row stays, REVOKED, as the record of what was sent.
import { Type, type Static } from "@sinclair/typebox";
import { notFound, precondition } from "../../errors.ts";
import { Id } from "../../schemas/common.ts";
import { lockInvitation } from "../../store/invitations.ts";
import { releaseSlots } from "../../store/slots.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { liveScope, mailboxScope } from "./create_invitations.ts";

const Params = Type.Object({ invitationId: Id("invitation") });

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, now } = ctx;
  const row = await lockInvitation(tx, organization.id, p.invitationId);
  if (!row) throw notFound(`no invitation ${p.invitationId} in organization ${organization.id}`);
  if (row.status !== "INVITATION_STATUS_CREATED") {
    throw precondition(
      `invitation ${row.id} is ${row.status === "INVITATION_STATUS_ACCEPTED" ? "already accepted (delete the user instead)" : "already deleted"}`,
    );
  }
  await tx
    .updateTable("invitations")
    .set({ status: "INVITATION_STATUS_REVOKED", token_digest: null, updated_at: now })
    .where("id", "=", row.id)
    .execute();
  await releaseSlots(tx, liveScope(organization.id), row.id);
  await releaseSlots(tx, mailboxScope(organization.id, row.receiver_email), row.id);
  return { invitationId: row.id };
}

export const deleteInvitation = defineActivity({
  type: "ACTIVITY_TYPE_DELETE_INVITATION",
  resource: "INVITATION",
  action: "DELETE",
  kind: "DELETE_INVITATION",
  summary: "Revoke an invitation that was not accepted: its token stops working.",
  params: Params,
  returns: Type.Object({ invitationId: Type.String() }),
  execute,
});
