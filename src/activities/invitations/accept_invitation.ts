// accept_invitation (docs/invitations.md §5; upstream has the activity type and its result,
// v1AcceptInvitationResult, but no public path: this request shape is our choice). The invitee
// proves the mailed one-time token and brings the credential they register — a passkey
// (`authenticator`, as v1AcceptInvitationIntentV2) and/or an API key — as the invitation's
// access type allows; the user is created with the invited name, email and tags. The token
// works once: the invitation row is locked, must be live, and its digest is cleared with the
// user's creation in the same transaction.
//
// Who submits it: a credential of the inviting organization itself (the app's backend
// relaying what the invitee's browser produced). It creates a user, so a parent organization's
// credential is refused like any other user change (docs/request-path.md §5). The invitation
// was authorized when it was created and the token proves the invitee, so acceptance is
// implicitly allowed (docs/policy-language.md §6.8) unless a policy says otherwise.
import { Type, type Static } from "@sinclair/typebox";
import { invalid, notFound, precondition } from "../../errors.ts";
import { ApiKeyParamsV2, Id } from "../../schemas/common.ts";
import { invitationTokenMatches, lockInvitation } from "../../store/invitations.ts";
import { lockUserTags } from "../../store/locks.ts";
import { releaseSlots } from "../../store/slots.ts";
import { AuthenticatorParamsV2 } from "../users/user-schemas.ts";
import { addUsers, keysOfUsers } from "../users/new-users.ts";
import { organizationsAbove, refuseAncestorKeys } from "../credentials/ancestor-keys.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { liveScope, mailboxScope } from "./create_invitations.ts";

const Params = Type.Object({
  invitationId: Id("invitation"),
  invitationToken: Type.String({
    minLength: 43,
    maxLength: 43,
    pattern: "^[A-Za-z0-9_-]+$",
    errorMessage: "must be the invitation token from the invitation email (43 characters)",
  }),
  authenticator: Type.Optional(AuthenticatorParamsV2),
  apiKey: Type.Optional(ApiKeyParamsV2),
});

/** What the access type requires of the credentials brought (docs/invitations.md §5.2). */
function checkCredentials(accessType: string, p: Static<typeof Params>): void {
  if (accessType === "ACCESS_TYPE_WEB" && p.apiKey)
    throw invalid("parameters.apiKey: this invitation's access type is ACCESS_TYPE_WEB (passkeys only)", [
      { field: "parameters.apiKey", description: "not allowed for ACCESS_TYPE_WEB" },
    ]);
  if (accessType === "ACCESS_TYPE_API" && p.authenticator)
    throw invalid("parameters.authenticator: this invitation's access type is ACCESS_TYPE_API (API keys only)", [
      { field: "parameters.authenticator", description: "not allowed for ACCESS_TYPE_API" },
    ]);
  if (accessType === "ACCESS_TYPE_WEB" && !p.authenticator)
    throw invalid("parameters.authenticator: accepting an ACCESS_TYPE_WEB invitation registers a passkey", [
      { field: "parameters.authenticator", description: "required" },
    ]);
  if (accessType === "ACCESS_TYPE_API" && !p.apiKey)
    throw invalid("parameters.apiKey: accepting an ACCESS_TYPE_API invitation registers an API key", [
      { field: "parameters.apiKey", description: "required" },
    ]);
  if (!p.apiKey && !p.authenticator)
    throw invalid("parameters: accepting an invitation registers a credential: give authenticator, apiKey or both", [
      { field: "parameters.authenticator", description: "required without apiKey" },
    ]);
}

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, now } = ctx;
  const row = await lockInvitation(tx, organization.id, p.invitationId);
  // A wrong token, an unknown invitation and one already used read the same: nothing tells a
  // guesser which invitations exist (the token has 256 bits; guessing is not the threat).
  if (!row || !invitationTokenMatches(row, p.invitationToken)) {
    throw notFound(`no live invitation ${p.invitationId} with this token in organization ${organization.id}`);
  }
  if (row.status !== "INVITATION_STATUS_CREATED")
    throw notFound(`no live invitation ${p.invitationId} with this token in organization ${organization.id}`);
  if (row.expires_at <= now) throw precondition(`invitation ${row.id} expired; ask for a new one`);
  checkCredentials(row.access_type, p);
  // Tags deleted since the invitation are not applied (docs/invitations.md §5.3); the others
  // are locked shared, as create_users does, so none disappears before it is applied.
  const invited = JSON.parse(row.receiver_user_tags) as string[];
  const tags = await lockUserTags(tx, organization.id, invited, "shared");
  const user = {
    userName: row.receiver_user_name,
    userEmail: row.receiver_email,
    apiKeys: p.apiKey ? [p.apiKey] : [],
    authenticators: p.authenticator ? [p.authenticator] : [],
    oauthProviders: [],
    userTags: tags,
  };
  await refuseAncestorKeys(
    tx,
    await organizationsAbove(tx, organization.id, ctx.chains),
    ctx.actor.organizationId,
    keysOfUsers([user], "parameters"),
  );
  const [userId] = await addUsers(tx, organization.id, [user], now, "parameters", ctx.services.logins.webauthn);
  await tx
    .updateTable("invitations")
    .set({ status: "INVITATION_STATUS_ACCEPTED", token_digest: null, accepted_user_id: userId!, updated_at: now })
    .where("id", "=", row.id)
    .execute();
  await releaseSlots(tx, liveScope(organization.id), row.id);
  await releaseSlots(tx, mailboxScope(organization.id, row.receiver_email), row.id);
  return { invitationId: row.id, userId: userId! };
}

export const acceptInvitation = defineActivity({
  type: "ACTIVITY_TYPE_ACCEPT_INVITATION_V2",
  resource: "INVITATION",
  action: "UPDATE",
  kind: "ACCEPT_INVITATION",
  summary: "Accept an invitation with its one-time token: creates the invited user with the passkey and/or API key it registers.",
  params: Params,
  // The one-time token works until the invitation is accepted: recorded sealed (docs/activities.md §10).
  secretParams: ["invitationToken"],
  returns: Type.Object({ invitationId: Type.String(), userId: Type.String() }),
  implicitlyAllowed: () => true,
  execute,
});
