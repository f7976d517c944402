// The SDK's v1Invitation and v1AccessType, for whatever answer carries invitations.
import { Type } from "@sinclair/typebox";
import { Timestamp } from "./common.ts";

export const AccessType = Type.Union([Type.Literal("ACCESS_TYPE_WEB"), Type.Literal("ACCESS_TYPE_API"), Type.Literal("ACCESS_TYPE_ALL")], {
  errorMessage: "must be ACCESS_TYPE_WEB, ACCESS_TYPE_API or ACCESS_TYPE_ALL",
});

export const Invitation = Type.Object({
  invitationId: Type.String(),
  receiverUserName: Type.String(),
  receiverEmail: Type.String(),
  receiverUserTags: Type.Array(Type.String()),
  accessType: AccessType,
  status: Type.Union([
    Type.Literal("INVITATION_STATUS_CREATED"),
    Type.Literal("INVITATION_STATUS_ACCEPTED"),
    Type.Literal("INVITATION_STATUS_REVOKED"),
  ]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  senderUserId: Type.String(),
});
