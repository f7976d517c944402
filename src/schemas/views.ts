// Response shapes, for the OpenAPI document. The code that builds them lives in
// store/*.ts and views/activity.ts.
import { Type, type Static } from "@sinclair/typebox";
import { Timestamp } from "./common.ts";

/** The SDK's OauthProvider record (v1OauthProvider). */
export const OauthProviderSchema = Type.Object({
  providerId: Type.String(),
  providerName: Type.String(),
  issuer: Type.String(),
  audience: Type.String(),
  subject: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const Credential = Type.Object({ publicKey: Type.String(), type: Type.String(), sessionProfileId: Type.Optional(Type.String()) });

export const ApiKey = Type.Object({
  credential: Credential,
  apiKeyId: Type.String(),
  apiKeyName: Type.String(),
  expirationSeconds: Type.Optional(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const User = Type.Object({
  userId: Type.String(),
  userName: Type.String(),
  userEmail: Type.Optional(Type.String()),
  userPhoneNumber: Type.Optional(Type.String()),
  authenticators: Type.Array(Type.Unknown()),
  apiKeys: Type.Array(ApiKey),
  userTags: Type.Array(Type.String()),
  oauthProviders: Type.Array(OauthProviderSchema),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  /** v1User.mfaPolicies: v1MfaPolicy objects (docs/mfa.md §1). */
  mfaPolicies: Type.Array(Type.Unknown()),
});

export const Vote = Type.Object({
  id: Type.String(),
  userId: Type.String(),
  user: User,
  activityId: Type.String(),
  selection: Type.String({ description: "VOTE_SELECTION_APPROVED | VOTE_SELECTION_REJECTED" }),
  message: Type.String({ description: "the exact request body the voter signed" }),
  publicKey: Type.String(),
  signature: Type.String(),
  scheme: Type.String(),
  createdAt: Timestamp,
});

export const AppProof = Type.Object({
  scheme: Type.String(),
  publicKey: Type.String(),
  proofPayload: Type.String(),
  signature: Type.String(),
});

/**
 * The Activity object as the service returns it (answers, get_activity, list_activities,
 * webhook events). views/activity.ts is typed from it, so the document cannot lack a field.
 */
export const Activity = Type.Object({
  id: Type.String(),
  organizationId: Type.String(),
  status: Type.String(),
  type: Type.String(),
  intent: Type.Record(Type.String(), Type.Unknown(), { description: "one key: the intent named for the activity type" }),
  result: Type.Record(Type.String(), Type.Unknown(), { description: "one key once completed: the result object" }),
  votes: Type.Array(Vote),
  fingerprint: Type.String({ description: "sha256 (hex) of the request body" }),
  canApprove: Type.Boolean(),
  canReject: Type.Boolean(),
  createdAt: Type.String({ description: "epoch milliseconds" }),
  updatedAt: Type.String({ description: "epoch milliseconds" }),
  failure: Type.Optional(Type.Unknown()),
  appProofs: Type.Optional(Type.Array(AppProof, { description: "present when the submission asked for them (generateAppProofs)" })),
});

export type ActivityView = Static<typeof Activity>;

export const WebhookEndpoint = Type.Object({
  endpointId: Type.String(),
  organizationId: Type.String(),
  url: Type.String(),
  name: Type.String(),
  isActive: Type.Boolean(),
  subscriptions: Type.Array(
    Type.Object({ eventType: Type.String(), filtersJson: Type.Optional(Type.String()), isActive: Type.Optional(Type.Boolean()) }),
  ),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  disabledReason: Type.Optional(Type.String({ description: "present only while the service keeps the endpoint disabled" })),
  disabledAt: Type.Optional(Timestamp),
});

export const UserTag = Type.Object({
  tagId: Type.String(),
  tagName: Type.String(),
  tagType: Type.Literal("TAG_TYPE_USER"),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const ErrorBody = Type.Object({
  code: Type.Integer({ description: "gRPC status code" }),
  message: Type.String(),
  details: Type.Array(Type.Record(Type.String(), Type.Unknown())),
});

export const Policy = Type.Object({
  policyId: Type.String(),
  policyName: Type.String(),
  effect: Type.String(),
  condition: Type.String(),
  consensus: Type.String(),
  time: Type.Optional(Type.String()),
  notes: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const PolicyEvaluation = Type.Object({
  id: Type.String(),
  activityId: Type.String(),
  organizationId: Type.String(),
  voteId: Type.String(),
  policyEvaluations: Type.Array(Type.Object({ policyId: Type.Optional(Type.String()), outcome: Type.String() })),
  createdAt: Timestamp,
});
