// create_read_write_session V2 (docs/sessions-and-network.md §7.1): the legacy read-write
// session of @turnkey/sdk-browser's iframe client (refreshSession, loginWithReadWriteSession).
// The service makes the session key: a fresh P-256 key registered as an expiring api key of
// type CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256, whose private half is returned only as a
// credential bundle encrypted to the client's targetPublicKey and never stored.
import { Type } from "@sinclair/typebox";
import { invalid } from "../../errors.ts";
import { HexPublicKey, Id, Name } from "../../schemas/common.ts";
import { createSession } from "./create-session.ts";
import { submitterProfile } from "./submitter-profile.ts";
import { uncompressedP256 } from "../../crypto/bundles.ts";
import { credentialBundle } from "../../crypto/credential-bundle.ts";
import { generateP256, privateScalar } from "../../crypto/p256.ts";
import { defineActivity } from "../define.ts";

const Params = Type.Object({
  targetPublicKey: HexPublicKey,
  userId: Type.Optional(Id("user")),
  apiKeyName: Type.Optional(Name("apiKeyName")),
  // Checked by createSession (1 to the configured maximum), which names the field.
  expirationSeconds: Type.Optional(
    Type.String({ maxLength: 32, errorMessage: "invalid api key expiration: must be a whole number of seconds, as a string" }),
  ),
  invalidateExisting: Type.Optional(Type.Boolean()),
});

export const createReadWriteSessionV2 = defineActivity({
  type: "ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2",
  // The SDK reads activity.result.createReadWriteSessionResultV2.
  result: "createReadWriteSessionResultV2",
  resource: "AUTH",
  action: "CREATE",
  kind: "CREATE_READ_WRITE_SESSION",
  summary:
    "Create a read-write session key for the submitting user (or userId, a user of the submitter's organization) and return its private key as a credential bundle encrypted to targetPublicKey.",
  params: Params,
  returns: Type.Object({
    organizationId: Type.String(),
    organizationName: Type.String(),
    userId: Type.String(),
    username: Type.String(),
    apiKeyId: Type.String(),
    credentialBundle: Type.String({
      description: "base58check(compressed encapsulated key ‖ ciphertext): decryptCredentialBundle opens it with the target key",
    }),
  }),
  // An authentication flow (docs/request-path.md §5): a parent's credential may submit it in a
  // sub-organization, and the session is then the parent user's own — a parent never mints a
  // session for a sub-organization's user (docs/sessions-and-network.md §7.1).
  parentMayStamp: true,
  check(p) {
    if (!uncompressedP256(p.targetPublicKey)) {
      throw invalid("parameters.targetPublicKey: must be a P-256 public key (compressed or uncompressed hex)", [
        { field: "parameters.targetPublicKey", description: "P-256 public key" },
      ]);
    }
  },
  // A user making a session for itself needs no policy, as with the logins (docs/policy-language.md §6.8); for another user, policies decide.
  implicitlyAllowed: (p, initiator) => p.userId === undefined || p.userId === initiator.userId,
  async execute(ctx, p) {
    const userId = p.userId ?? ctx.actor.userId;
    const organizationId = ctx.actor.organizationId;
    const profile = await submitterProfile(ctx);
    const key = generateP256();
    const { apiKeyId } = await createSession(ctx, {
      userId,
      organizationId,
      publicKey: key.publicCompressed,
      ...(p.expirationSeconds !== undefined ? { expirationSeconds: p.expirationSeconds } : {}),
      ...(p.invalidateExisting !== undefined ? { invalidateExisting: p.invalidateExisting } : {}),
      ...(profile !== undefined ? { sessionProfileId: profile } : {}),
      credentialType: "CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256",
      name: p.apiKeyName ?? `Read Write Session - ${new Date(ctx.now).toISOString()}`,
    });
    const secret = privateScalar(key);
    let bundle: string;
    try {
      bundle = await credentialBundle(secret, p.targetPublicKey);
    } finally {
      secret.fill(0);
    }
    const names = await ctx.tx
      .selectFrom("users")
      .innerJoin("organizations", "organizations.id", "users.organization_id")
      .select(["users.name as user_name", "organizations.name as organization_name"])
      .where("users.id", "=", userId)
      .executeTakeFirstOrThrow();
    return {
      organizationId,
      organizationName: names.organization_name,
      userId,
      username: names.user_name,
      apiKeyId,
      credentialBundle: bundle,
    };
  },
});
