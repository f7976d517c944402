// stamp_login (docs/logins.md §2.4): the stamping user gets a session — the request's publicKey
// registered as an expiring LOGIN key, and a session JWT. Who "the stamping user" is depends
// on the stamp:
//   X-Stamp with an API key or a session key (core's refreshSession);
//   X-Stamp-WebAuthn with a passkey (core's loginWithPasskey: organizationId is the parent
//     organization, the passkey is in the user's sub-organization — hence "then-descendants");
//   X-Stamp-Attested with a verification token (core's loginWithOtp), whose login use is
//     consumed here, in the activity's transaction, so a token logs in once.
//   X-Stamp-Attested with an OIDC token (core's loginWithOauth, auth/attested/oidc.ts): valid
//     until its exp for any number of logins, nothing consumed.
import { Type } from "@sinclair/typebox";
import { HexPublicKey, Id } from "../../schemas/common.ts";
import { loginSession } from "./create-session.ts";
import { consumeLogin } from "../verification-tokens.ts";
import { ATTESTED_CREDENTIAL_TYPE } from "../../auth/attested-stamp.ts";
import { isOidcCredentialId } from "../../auth/attested/oidc.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  publicKey: HexPublicKey,
  // Checked by createSession (a whole number of seconds, 1 to the configured maximum), which
  // names the field; the schema only bounds the length.
  expirationSeconds: Type.Optional(
    Type.String({ maxLength: 32, errorMessage: "invalid api key expiration: must be a whole number of seconds, as a string" }),
  ),
  invalidateExisting: Type.Optional(Type.Boolean()),
  sessionProfileId: Type.Optional(Id("session profile")),
});

/**
 * The verification token an attested stamp presented, if one did. At submission the actor
 * carries it; an activity executed later, on an approval (a policy asked for consensus),
 * runs as the submitter read back from the store, and the token is read from the
 * submitter's vote, which names it as its credential.
 */
async function attestedToken(ctx: ExecuteContext): Promise<string | undefined> {
  if (ctx.actor.attestedTokenId) return ctx.actor.attestedTokenId;
  const vote = await ctx.tx
    .selectFrom("votes")
    .select("credential_id")
    .where("activity_id", "=", ctx.activityId)
    .where("credential_type", "=", ATTESTED_CREDENTIAL_TYPE)
    .executeTakeFirst();
  // An OIDC token (attested/oidc.ts) is valid until its exp for any number of logins: nothing to consume.
  return vote && !isOidcCredentialId(vote.credential_id) ? vote.credential_id : undefined;
}

/**
 * A verification-token login that named the user's own organization proves the contact, as
 * otp_login does (docs/login-lookups.md §1): it is marked verified, if it is still the
 * token's. Found below an ancestor it was verified already; found in an ancestor of the
 * target (the request names another organization) nothing is marked.
 */
async function markProven(ctx: ExecuteContext, tokenId: string): Promise<void> {
  if (ctx.actor.organizationId !== ctx.organization.id) return;
  const token = await ctx.tx
    .selectFrom("verification_tokens")
    .select(["verification_type", "contact"])
    .where("id", "=", tokenId)
    .executeTakeFirst();
  if (!token) return;
  const q = ctx.tx.updateTable("users").where("id", "=", ctx.actor.userId);
  if (token.verification_type === "OTP_TYPE_SMS") {
    await q.set({ phone_verified_at: ctx.now }).where("phone", "=", token.contact).where("phone_verified_at", "is", null).execute();
  } else {
    await q
      .set({ email_verified_at: ctx.now })
      .where("email_normalized", "=", token.contact.toLowerCase())
      .where("email_verified_at", "is", null)
      .execute();
  }
}

export const stampLogin = defineActivity({
  type: "ACTIVITY_TYPE_STAMP_LOGIN",
  resource: "AUTH",
  action: "CREATE",
  kind: "STAMP_LOGIN",
  summary:
    "Log the stamping user in: register publicKey as a session key (expiring after expirationSeconds, default 900) and return the session JWT.",
  params: Params,
  returns: Type.Object({ session: Type.String({ description: "session JWT (ES256 over SHA-256(SHA-256(header.payload)))" }) }),
  // docs/request-path.md §5: the authentication flows a parent may start; the session is always the stamping
  // user's own, in the user's own organization.
  parentMayStamp: true,
  credentialScope: "then-descendants",
  policyParams: (p) => ({ session_profile_id: p.sessionProfileId ?? "" }),
  // docs/policy-language.md §6.8: a user logging themself in needs no policy (one that explicitly allows or denies
  // AUTH/CREATE still decides first).
  implicitlyAllowed: () => true,
  async execute(ctx, p) {
    const tokenId = await attestedToken(ctx);
    if (tokenId) {
      await consumeLogin(ctx.tx, tokenId, ctx.now, "X-Stamp-Attested.publicKeyAttestation");
      await markProven(ctx, tokenId);
    }
    return { session: await loginSession(ctx, { userId: ctx.actor.userId, organizationId: ctx.actor.organizationId }, p) };
  },
});
