// init_user_email_recovery V2 (docs/logins.md §9.4): the legacy email recovery. The user of
// the target organization with that verified email receives, by email, a recovery
// credential sealed to targetPublicKey; stamped with it, the user's recover_user adds a
// passkey (recover_user.ts, implicitly allowed for the user's own credentials). The
// credential is an expiring session key of the user, as email_auth's (our choice: email_auth
// to the same address already yields one, so a narrower key would protect nothing more).
import { Type, type Static } from "@sinclair/typebox";
import { isRootUser } from "../../store/organizations.ts";
import { sessionSeconds } from "../sessions/create-session.ts";
import { checkTargetKey, credentialFor, issueCredential } from "../credential-bundles/issue.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { requireFeature } from "../organizations/feature-gate.ts";
import { checkCredentialMail, credentialMailFields, prepareCredentialMail, userWithVerifiedEmail } from "../otp/credential-mail.ts";

const Params = Type.Object(credentialMailFields);

async function initRecovery(ctx: ExecuteContext, p: Static<typeof Params>) {
  const secs = sessionSeconds(p.expirationSeconds, ctx.services.logins.sessionMaxSeconds);
  // Switched-off recovery refuses before any look-up or mail (docs/organizations.md §8.2).
  await requireFeature(ctx, "FEATURE_NAME_EMAIL_RECOVERY", "email recovery");
  const user = await userWithVerifiedEmail(ctx, p.email);
  if (await isRootUser(ctx.tx, user.organization_id, user.id))
    await requireFeature(ctx, "FEATURE_NAME_ROOT_USER_EMAIL_RECOVERY", "email recovery of a root user");
  const send = await prepareCredentialMail(ctx, p, "recovery");
  const issued = await issueCredential(ctx, credentialFor(user, "Recovery", p));
  await send(issued.credentialBundle, secs);
  return { userId: user.id };
}

export const initUserEmailRecoveryV2 = defineActivity({
  type: "ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY_V2",
  result: "initUserEmailRecoveryResult",
  resource: "RECOVERY",
  action: "CREATE",
  kind: "INIT_USER_EMAIL_RECOVERY",
  summary:
    "Email a recovery credential (a session key sealed to targetPublicKey) to the user with this verified email; it then stamps recover_user.",
  params: Params,
  returns: Type.Object({ userId: Type.String() }),
  // docs/request-path.md §5: a recovery flow a parent's backend starts for its sub-organizations' users.
  parentMayStamp: true,
  check: (p) => {
    checkTargetKey(p.targetPublicKey);
    checkCredentialMail(p);
  },
  execute: initRecovery,
});
