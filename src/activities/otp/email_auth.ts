// email_auth V3 (docs/logins.md §9.3): the legacy email login. The user of the target
// organization with that verified email receives, by email, a credential bundle sealed to
// the request's targetPublicKey; the credential is an expiring session key of that user
// (logins/credential-bundles). The result names the user and the key, never the bundle.
// A parent's backend starts it for its sub-organizations' users (sdk-server's
// sendCredential and emailAuth proxy method), as it does the OTP flows.
import { Type, type Static } from "@sinclair/typebox";
import { sessionSeconds } from "../sessions/create-session.ts";
import { checkTargetKey, credentialFor, issueCredential } from "../credential-bundles/issue.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { requireFeature } from "../organizations/feature-gate.ts";
import { checkCredentialMail, credentialMailFields, prepareCredentialMail, userWithVerifiedEmail } from "./credential-mail.ts";

const Params = Type.Object({
  ...credentialMailFields,
  apiKeyName: Type.Optional(Type.String({ minLength: 1, maxLength: 256, errorMessage: "apiKeyName must be 1 to 256 characters" })),
  invalidateExisting: Type.Optional(Type.Boolean()),
});
type Params = Static<typeof Params>;

async function emailAuth(ctx: ExecuteContext, p: Params) {
  const secs = sessionSeconds(p.expirationSeconds, ctx.services.logins.sessionMaxSeconds);
  // Switched-off email auth refuses before any look-up or mail (docs/organizations.md §8.2).
  await requireFeature(ctx, "FEATURE_NAME_EMAIL_AUTH", "email authentication");
  const user = await userWithVerifiedEmail(ctx, p.email);
  const send = await prepareCredentialMail(ctx, p, "login");
  const issued = await issueCredential(ctx, credentialFor(user, "Email Auth", p));
  await send(issued.credentialBundle, secs);
  return { userId: user.id, apiKeyId: issued.apiKeyId };
}

export const emailAuthV3 = defineActivity({
  type: "ACTIVITY_TYPE_EMAIL_AUTH_V3",
  result: "emailAuthResult",
  resource: "AUTH",
  action: "CREATE",
  kind: "EMAIL_AUTH",
  summary:
    "Email a credential bundle (a session key sealed to targetPublicKey) to the user with this verified email; returns the user and key ids.",
  params: Params,
  returns: Type.Object({ userId: Type.String(), apiKeyId: Type.String() }),
  // docs/request-path.md §5: an authentication flow a parent's backend starts for its sub-organizations' users.
  parentMayStamp: true,
  check: (p) => {
    checkTargetKey(p.targetPublicKey);
    checkCredentialMail(p);
  },
  execute: emailAuth,
});
