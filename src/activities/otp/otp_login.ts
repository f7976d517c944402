// otp_login (docs/logins.md §3.6): a verification token for a contact, plus a client signature by
// the token's key over the session key, logs in the user of the target organization whose
// email (any case) or phone number is that contact. The token's login use is recorded once
// (a second login with it is refused); the session is an expiring LOGIN key (activities/sessions/create-session.ts).
import { Type, type Static } from "@sinclair/typebox";
import { invalid, notFound } from "../../errors.ts";
import { readClientSignature, type ClientSignature as Sig, type VerificationClaims } from "../../auth/tokens.ts";
import { consumeLogin, requireToken } from "../verification-tokens.ts";
import { loginSession } from "../sessions/create-session.ts";
import { HexPublicKey, Id } from "../../schemas/common.ts";
import { OTP_FEATURE, requireFeature } from "../organizations/feature-gate.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const ClientSignature = Type.Object({
  publicKey: HexPublicKey,
  scheme: Type.String({ maxLength: 64, errorMessage: "scheme must be CLIENT_SIGNATURE_SCHEME_API_P256" }),
  message: Type.String({
    minLength: 1,
    maxLength: 4096,
    errorMessage: "message must be the signed TokenUsage JSON (at most 4096 characters)",
  }),
  signature: Type.String({ minLength: 1, maxLength: 512, pattern: "^[0-9a-fA-F]+$", errorMessage: "signature must be hex" }),
});
const fields = {
  verificationToken: Type.String({
    minLength: 1,
    maxLength: 4096,
    errorMessage: "verificationToken must be the token verify_otp returned",
  }),
  publicKey: HexPublicKey,
  expirationSeconds: Type.Optional(Type.String({ maxLength: 16 })),
  invalidateExisting: Type.Optional(Type.Boolean()),
  sessionProfileId: Type.Optional(Id("session profile")),
};
const ParamsV2 = Type.Object({ ...fields, clientSignature: ClientSignature });
// The swagger makes it optional in V1 ("only required if a public key was provided during the
// verification step"); every token here is bound to a key, so it is always required.
const ParamsV1 = Type.Object({ ...fields, clientSignature: Type.Optional(ClientSignature) });
type Params = Static<typeof ParamsV2> | Static<typeof ParamsV1>;

const bad = (field: string, description: string) => invalid(`${field}: ${description}`, [{ field, description }]);

async function userFor(ctx: ExecuteContext, claims: VerificationClaims): Promise<{ id: string; organization_id: string }> {
  const org = ctx.organization.id;
  const q = ctx.tx.selectFrom("users").select(["id", "organization_id"]).where("organization_id", "=", org);
  const users =
    claims.verification_type === "OTP_TYPE_EMAIL"
      ? await q.where("email_normalized", "=", claims.contact.toLowerCase()).limit(2).execute()
      : await q.where("phone", "=", claims.contact).limit(2).execute();
  const what = claims.verification_type === "OTP_TYPE_EMAIL" ? "email" : "phone number";
  if (users.length === 0) throw notFound(`no user with the verified ${what} ${claims.contact} in organization ${org}`);
  if (users.length > 1)
    throw bad(
      "parameters.verificationToken",
      `several users of organization ${org} have the phone number ${claims.contact}; log in another way`,
    );
  return users[0]!;
}

async function otpLogin(ctx: ExecuteContext, p: Params) {
  const field = "parameters.verificationToken";
  const claims = await requireToken(ctx, p.verificationToken, field);
  // A token issued before the channel was switched off logs in no more (docs/organizations.md §8.2).
  await requireFeature(
    ctx,
    OTP_FEATURE[claims.verification_type],
    claims.verification_type === "OTP_TYPE_EMAIL" ? "email OTP authentication" : "SMS OTP authentication",
  );
  if (!p.clientSignature)
    throw bad("parameters.clientSignature", "required: the verification token is bound to a key, and the login must be signed by it");
  const read = readClientSignature(p.clientSignature as Sig, claims, "USAGE_TYPE_LOGIN");
  if ("problem" in read) throw bad("parameters.clientSignature", read.problem);
  const login = read.usage.login as { publicKey?: unknown } | undefined;
  if (typeof login?.publicKey !== "string" || login.publicKey.toLowerCase() !== p.publicKey.toLowerCase()) {
    throw bad("parameters.clientSignature", "clientSignature.message.login.publicKey must be parameters.publicKey");
  }
  const user = await consumeForLogin(ctx, claims, field);
  return { session: await loginSession(ctx, { userId: user.id, organizationId: user.organization_id }, p) };
}

/**
 * The user a verified token logs in (otp_login, otp_auth): found by the token's contact in
 * the target organization; the token's login use is spent and the contact marked verified.
 */
export async function consumeForLogin(
  ctx: ExecuteContext,
  claims: VerificationClaims,
  field: string,
): Promise<{ id: string; organization_id: string }> {
  const user = await userFor(ctx, claims);
  await consumeLogin(ctx.tx, claims.id, ctx.now, field);
  // The swagger: "Verification status of a user is updated when the token is consumed (in
  // OTP_LOGIN requests)" — the contact is now proven.
  const verified = claims.verification_type === "OTP_TYPE_EMAIL" ? "email_verified_at" : "phone_verified_at";
  await ctx.tx
    .updateTable("users")
    .set({ [verified]: ctx.now })
    .where("id", "=", user.id)
    .where(verified, "is", null)
    .execute();
  return user;
}

const common = {
  resource: "AUTH",
  action: "CREATE",
  kind: "OTP_LOGIN",
  parentMayStamp: true,
  returns: Type.Object({ session: Type.String() }),
  policyParams: (p: { sessionProfileId?: string }) => ({ session_profile_id: p.sessionProfileId ?? "" }),
};

export const otpLoginV2 = defineActivity({
  ...common,
  type: "ACTIVITY_TYPE_OTP_LOGIN_V2",
  params: ParamsV2,
  summary: "Log in the user whose contact a verification token proves; returns a session JWT for the given key.",
  execute: (ctx, p: Static<typeof ParamsV2>) => otpLogin(ctx, p),
});

export const otpLoginV1 = defineActivity({
  ...common,
  type: "ACTIVITY_TYPE_OTP_LOGIN",
  params: ParamsV1,
  summary: "Log in with a verification token (older version; clientSignature is required here too).",
  execute: (ctx, p: Static<typeof ParamsV1>) => otpLogin(ctx, p),
});
