// otp_auth (docs/logins.md §9.5): the legacy end of an OTP login. The code is checked exactly
// as verify_otp V1 checks it (verify_otp.ts: per-code attempts, per-contact guesses), the
// verification token it yields — bound to targetPublicKey — is spent at once as otp_login
// spends one (the user with that contact in the target organization; the contact is then
// verified), and instead of a session JWT the user gets a credential bundle sealed to
// targetPublicKey (logins/credential-bundles). The token never leaves the activity.
import { Type, type Static } from "@sinclair/typebox";
import { requireToken } from "../verification-tokens.ts";
import { BundleLoginResult, checkTargetKey, credentialFor, issueCredential } from "../credential-bundles/issue.ts";
import { Id } from "../../schemas/common.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { consumeForLogin } from "./otp_login.ts";
import { verify } from "./verify_otp.ts";

const Params = Type.Object({
  otpId: Id("OTP"),
  otpCode: Type.String({ minLength: 1, maxLength: 64, errorMessage: "otpCode must be 1 to 64 characters" }),
  targetPublicKey: Type.String({ minLength: 66, maxLength: 132, errorMessage: "targetPublicKey must be a P-256 public key (hex)" }),
  apiKeyName: Type.Optional(Type.String({ minLength: 1, maxLength: 256, errorMessage: "apiKeyName must be 1 to 256 characters" })),
  expirationSeconds: Type.Optional(
    Type.String({ maxLength: 32, errorMessage: "invalid api key expiration: must be a whole number of seconds, as a string" }),
  ),
  invalidateExisting: Type.Optional(Type.Boolean()),
});

const CODE = "parameters.otpCode";

async function authenticate(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { verificationToken } = await verify(ctx, p.otpId, undefined, async () => ({
    code: p.otpCode,
    publicKey: p.targetPublicKey,
    field: CODE,
  }));
  const claims = await requireToken(ctx, verificationToken, CODE);
  const user = await consumeForLogin(ctx, claims, CODE);
  const issued = await issueCredential(ctx, credentialFor(user, "OTP Auth", p));
  return { userId: user.id, apiKeyId: issued.apiKeyId, credentialBundle: issued.credentialBundle };
}

export const otpAuth = defineActivity({
  type: "ACTIVITY_TYPE_OTP_AUTH",
  resource: "AUTH",
  action: "CREATE",
  kind: "OTP_AUTH",
  summary:
    "Check an OTP code (from init_otp_auth or init_otp) and log its contact's user in: returns a credential bundle sealed to targetPublicKey.",
  params: Params,
  // The code is live until verified: recorded sealed, shown as "<redacted>" (docs/activities.md §10).
  secretParams: ["otpCode"],
  returns: BundleLoginResult,
  // docs/request-path.md §5: an authentication flow a parent's backend runs for its sub-organizations' users.
  parentMayStamp: true,
  check: (p) => checkTargetKey(p.targetPublicKey),
  execute: authenticate,
});
