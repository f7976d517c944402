// create_invitations (SDK type v1CreateInvitationsIntent; docs/invitations.md §1–3): each
// invitation is a row with the digest of a fresh one-time token, and a mail carrying the token
// to the receiver through the operator's mail transport.
//
// The operator's mail is a shared resource and tenants are adversaries
// (docs/invitations.md §3): every mail takes the OTP send slots (per recipient mailbox and per
// organization tree, docs/otp-limits-and-mail.md §4.3); an organization holds at most
// MAX_LIVE_INVITATIONS live invitations and one per receiving mailbox; the mail carries no text
// the requester chose. All limits are limit slots taken inside the activity's transaction, so
// they hold under concurrent requests, and a refused or undeliverable request leaves nothing.
import { Type, type Static } from "@sinclair/typebox";
import { ApiError, Grpc, alreadyExists, exhausted, invalid } from "../../errors.ts";
import { Email, Id, Name, maxItems } from "../../schemas/common.ts";
import { AccessType } from "../../schemas/invitation.ts";
import { mailboxKey, takeSend } from "../../logins/otp/limits.ts";
import { organizationChain } from "../../store/organizations.ts";
import { invitationTokenDigest, newInvitationToken } from "../../store/invitations.ts";
import { nextFreeAt, takeSlot } from "../../store/slots.ts";
import { newId } from "../../store/util.ts";
import { requireUserTags } from "../users/new-users.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { invitationMessage } from "./invitation-mail.ts";

export const MAX_INVITATIONS_PER_REQUEST = 10;
export const MAX_LIVE_INVITATIONS = 100;
export const INVITATION_TTL_HOURS = 72;
const TTL_MS = INVITATION_TTL_HOURS * 3600_000;

export const liveScope = (organizationId: string) => `invitation-live:${organizationId}`;
export const mailboxScope = (organizationId: string, email: string) =>
  `invitation-mailbox:${organizationId}:${mailboxKey("OTP_TYPE_EMAIL", email)}`;

const InvitationParams = Type.Object({
  receiverUserName: Name("receiverUserName"),
  receiverUserEmail: Email,
  receiverUserTags: maxItems(Id("user tag"), "receiverUserTags", 100),
  accessType: AccessType,
  senderUserId: Id("user"),
});

const Params = Type.Object({ invitations: maxItems(InvitationParams, "invitations", MAX_INVITATIONS_PER_REQUEST, 1) });

const retryIn = (at: number | undefined, now: number) => Math.max(1000, (at ?? now + 1000) - now);

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, now, services, actor, organization } = ctx;
  const transport = services.logins.email;
  if (!transport) {
    throw new ApiError(
      Grpc.FAILED_PRECONDITION,
      "EMAIL_SENDING_DISABLED",
      "invitations are sent by email: this server has no mail transport configured (set SMTP_URL)",
    );
  }
  // Refusals of the request itself before anything is counted.
  const seen = new Set<string>();
  for (const [i, inv] of p.invitations.entries()) {
    const at = `parameters.invitations[${i}]`;
    // The sender is who signs (docs/invitations.md §1): nobody sends in another user's name.
    if (inv.senderUserId !== actor.userId || actor.organizationId !== organization.id) {
      throw invalid(`${at}.senderUserId: must be the id of the user who signs the request`, [
        { field: `${at}.senderUserId`, description: "must be the signing user" },
      ]);
    }
    const mailbox = mailboxKey("OTP_TYPE_EMAIL", inv.receiverUserEmail);
    if (seen.has(mailbox))
      throw invalid(`${at}.receiverUserEmail: the same mailbox is invited twice in this request`, [
        { field: `${at}.receiverUserEmail`, description: "invited twice" },
      ]);
    seen.add(mailbox);
    const existing = await tx
      .selectFrom("users")
      .select("id")
      .where("organization_id", "=", organization.id)
      .where("email_normalized", "=", inv.receiverUserEmail.toLowerCase())
      .executeTakeFirst();
    if (existing) throw alreadyExists(`${at}.receiverUserEmail: a user with this email already exists in the organization`);
  }
  const chain = await organizationChain(tx, organization.id, ctx.chains);
  const topOrganizationId = chain[chain.length - 1] ?? organization.id;
  const top = await tx.selectFrom("organizations").select("name").where("id", "=", topOrganizationId).executeTakeFirstOrThrow();
  const expiresAt = now + TTL_MS;

  const invitationIds: string[] = [];
  for (const [i, inv] of p.invitations.entries()) {
    const at = `parameters.invitations[${i}]`;
    const id = newId();
    const tags = await requireUserTags(tx, organization.id, inv.receiverUserTags, `${at}.receiverUserTags`);
    if (!(await takeSlot(tx, liveScope(organization.id), MAX_LIVE_INVITATIONS, id, expiresAt, now))) {
      const ms = retryIn(await nextFreeAt(tx, liveScope(organization.id), now), now);
      throw exhausted(
        `organization ${organization.id} has ${MAX_LIVE_INVITATIONS} live invitations; delete one or wait until one expires or is accepted; try again in ${Math.ceil(ms / 1000)} seconds`,
        ms,
      );
    }
    const perMailbox = mailboxScope(organization.id, inv.receiverUserEmail);
    if (!(await takeSlot(tx, perMailbox, 1, id, expiresAt, now))) {
      throw alreadyExists(
        `${at}.receiverUserEmail: this address already has a live invitation to the organization; delete it (delete_invitation) before inviting again`,
      );
    }
    await takeSend(tx, services.logins, mailboxKey("OTP_TYPE_EMAIL", inv.receiverUserEmail), topOrganizationId, id, now);
    const token = newInvitationToken();
    await tx
      .insertInto("invitations")
      .values({
        id,
        organization_id: organization.id,
        sender_user_id: actor.userId,
        receiver_user_name: inv.receiverUserName,
        receiver_email: inv.receiverUserEmail,
        receiver_user_tags: JSON.stringify(tags),
        access_type: inv.accessType,
        status: "INVITATION_STATUS_CREATED",
        token_digest: invitationTokenDigest(id, token),
        accepted_user_id: null,
        expires_at: expiresAt,
        created_at: now,
        updated_at: now,
      })
      .execute();
    const message = invitationMessage({
      to: inv.receiverUserEmail,
      appName: top.name,
      invitationId: id,
      token,
      expiresInHours: INVITATION_TTL_HOURS,
    });
    try {
      await transport.send(message);
    } catch (err) {
      const reason = err instanceof Error ? err.message : "delivery failed";
      services.log?.warn({ invitationId: id, transport: transport.kind, reason }, "create_invitations: invitation delivery failed");
      throw new ApiError(
        Grpc.UNAVAILABLE,
        "UNSPECIFIED",
        `could not deliver the invitation email to ${at}.receiverUserEmail: ${reason}; nothing was recorded, try again later`,
      );
    }
    invitationIds.push(id);
  }
  return { invitationIds };
}

export const createInvitations = defineActivity({
  type: "ACTIVITY_TYPE_CREATE_INVITATIONS",
  resource: "INVITATION",
  action: "CREATE",
  kind: "CREATE_INVITATIONS",
  summary: `Invite people by email to join the organization as users (with tags and an access type); each gets a one-time token valid ${INVITATION_TTL_HOURS} hours.`,
  params: Params,
  returns: Type.Object({ invitationIds: Type.Array(Type.String()) }),
  execute,
});
