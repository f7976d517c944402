// The mail of the legacy email flows, email_auth and init_user_email_recovery
// (docs/logins.md §9.3): a credential bundle (logins/credential-bundles) sent to a user's
// verified email. The same rules as init_otp's mail (docs/otp-limits-and-mail.md §3, §4):
// only the app's backend customizes it (otp-content.ts), every message takes an initiation
// slot for the contact and a send slot for the mailbox and the organization tree, and a
// failed delivery rolls everything back. The bundle is inside `text`/`html` only: never
// logged, never in the activity's result.
import { Type, type Static, type TObject } from "@sinclair/typebox";
import { ApiError, Grpc, notFound } from "../../errors.ts";
import { contactKey, mailboxKey, takeInitiation, takeSend } from "../../logins/otp/limits.ts";
import type { OtpMessage } from "../../logins/settings.ts";
import { Email, Name } from "../../schemas/common.ts";
import type { ExecuteContext } from "../define.ts";
import { messageContent } from "./otp-content.ts";
import { checkInitOtp, EmailCustomizationV2 } from "./otp-fields.ts";

/** v1EmailAuthCustomizationParams: appName required (SDK type). */
export const EmailAuthCustomization = Type.Object({ appName: Name("appName", 128), ...EmailCustomizationV2.properties });

/** The fields email_auth V3 and init_user_email_recovery V2 share (SDK types v1EmailAuthIntentV3, v1InitUserEmailRecoveryIntentV2). */
export const credentialMailFields = {
  email: Email,
  targetPublicKey: Type.String({ minLength: 66, maxLength: 132, errorMessage: "targetPublicKey must be a P-256 public key (hex)" }),
  expirationSeconds: Type.Optional(
    Type.String({ maxLength: 32, errorMessage: "invalid api key expiration: must be a whole number of seconds, as a string" }),
  ),
  emailCustomization: EmailAuthCustomization,
  sendFromEmailAddress: Type.Optional(Email),
  sendFromEmailSenderName: Type.Optional(Name("sendFromEmailSenderName", 128)),
  replyToEmailAddress: Type.Optional(Email),
};
export type CredentialMailParams = Static<TObject<typeof credentialMailFields>>;

/** The same form checks as init_otp's (magic link with %s, templateVariables a JSON object). */
export function checkCredentialMail(p: CredentialMailParams): void {
  checkInitOtp(asOtp(p));
}

/** init_otp's view of the request, for the shared content and form rules. */
function asOtp(p: CredentialMailParams) {
  return {
    otpType: "OTP_TYPE_EMAIL" as const,
    contact: p.email,
    emailCustomization: p.emailCustomization,
    ...(p.sendFromEmailAddress !== undefined ? { sendFromEmailAddress: p.sendFromEmailAddress } : {}),
    ...(p.sendFromEmailSenderName !== undefined ? { sendFromEmailSenderName: p.sendFromEmailSenderName } : {}),
    ...(p.replyToEmailAddress !== undefined ? { replyToEmailAddress: p.replyToEmailAddress } : {}),
  };
}

/**
 * The user of the target organization whose email (any case) is `email` and verified
 * (docs/login-lookups.md §1): a contact a user merely typed in never receives a credential.
 */
export async function userWithVerifiedEmail(ctx: ExecuteContext, email: string): Promise<{ id: string; organization_id: string }> {
  const org = ctx.organization.id;
  const user = await ctx.tx
    .selectFrom("users")
    .select(["id", "organization_id"])
    .where("organization_id", "=", org)
    .where("email_normalized", "=", email.toLowerCase())
    .where("email_verified_at", "is not", null)
    .executeTakeFirst();
  if (!user) throw notFound(`no user with the verified email ${email} in organization ${org}`);
  return user;
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
const minutes = (seconds: number) => {
  const m = Math.max(1, Math.round(seconds / 60));
  return m === 1 ? "1 minute" : `${m} minutes`;
};

export type CredentialPurpose = "login" | "recovery";

/** The message: the bundle on the text part's first line (what a client pastes), a magic link when the backend gave one. */
function credentialMessage(
  to: string,
  bundle: string,
  purpose: CredentialPurpose,
  expiresInSeconds: number,
  appName: string | undefined,
  c: Partial<CredentialMailParams>,
): OtpMessage {
  const custom = c.emailCustomization;
  const link = custom?.magicLinkTemplate ? custom.magicLinkTemplate.split("%s").join(encodeURIComponent(bundle)) : undefined;
  const what = purpose === "login" ? "login credential" : "account recovery credential";
  const text = [
    bundle,
    "",
    `This is your ${what}${appName ? ` for ${appName}` : ""}. It expires in ${minutes(expiresInSeconds)}.`,
    ...(link ? ["", `Or open this link: ${link}`] : []),
    "",
    "If you did not ask for it, ignore this message; do not forward it.",
    "",
  ].join("\n");
  const app = appName ? escapeHtml(appName) : "";
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    ...(custom?.logoUrl
      ? [`<p><img src="${escapeHtml(custom.logoUrl)}" alt="${app || "logo"}" style="max-width:340px;max-height:124px"></p>`]
      : []),
    `<p>Your ${what}${app ? ` for ${app}` : ""}:</p>`,
    `<p style="font-family:monospace;word-break:break-all">${escapeHtml(bundle)}</p>`,
    `<p>It expires in ${minutes(expiresInSeconds)}.</p>`,
    ...(link
      ? [`<p><a href="${escapeHtml(link)}">${purpose === "login" ? "Sign in" : "Recover your account"}${app ? ` to ${app}` : ""}</a></p>`]
      : []),
    "<p>If you did not ask for it, ignore this message; do not forward it.</p>",
    "</body></html>",
  ].join("\n");
  return {
    channel: "email",
    to,
    subject: `Your ${appName ? `${appName} ` : ""}${purpose === "login" ? "login" : "recovery"} credential`,
    text,
    html,
    ...(c.sendFromEmailAddress ? { from: c.sendFromEmailAddress } : {}),
    ...(c.sendFromEmailSenderName ? { fromName: c.sendFromEmailSenderName } : c.sendFromEmailAddress ? { fromName: "Notifications" } : {}),
    ...(c.replyToEmailAddress ? { replyTo: c.replyToEmailAddress } : {}),
  };
}

/**
 * Checks who may shape the message and takes the mail slots (400/429 before anything is
 * sent); returns the function that sends the bundle once it exists. Throws 412 when this
 * server has no mail transport.
 */
export async function prepareCredentialMail(ctx: ExecuteContext, p: CredentialMailParams, purpose: CredentialPurpose) {
  const transport = ctx.services.logins.email;
  if (!transport)
    throw new ApiError(
      Grpc.FAILED_PRECONDITION,
      "EMAIL_SENDING_DISABLED",
      "email is disabled: this server has no mail transport configured (set SMTP_URL)",
    );
  const content = await messageContent(ctx, asOtp(p));
  const { tx, services, now, activityId } = ctx;
  await takeInitiation(tx, services.logins, contactKey("OTP_TYPE_EMAIL", p.email), activityId, now);
  await takeSend(tx, services.logins, mailboxKey("OTP_TYPE_EMAIL", p.email), content.topOrganizationId, activityId, now);
  return async (bundle: string, expiresInSeconds: number): Promise<void> => {
    const message = credentialMessage(p.email, bundle, purpose, expiresInSeconds, content.appName, content.custom ? p : {});
    try {
      await transport.send(message);
    } catch (err) {
      const reason = err instanceof Error ? err.message : "delivery failed";
      services.log?.warn({ activityId, transport: transport.kind, reason }, `${purpose} credential delivery failed`);
      throw new ApiError(
        Grpc.UNAVAILABLE,
        "UNSPECIFIED",
        `could not deliver the credential email: ${reason}; nothing was recorded, try again later`,
      );
    }
  };
}
