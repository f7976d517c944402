// init_otp (docs/logins.md §3.2, §3.3): a code sent by email or SMS, and — from V3 — a signed
// bundle naming a fresh per-OTP P-256 key the client encrypts the code to (verify_otp V2).
//
// Whose content the message carries is otp-content.ts's (docs/otp-limits-and-mail.md §3):
// customization only from the app's backend (a top-level organization's credential).
//
// Limits (docs/otp-limits-and-mail.md §2, §4): at most 3 live codes per contact per
// organization (a burnt code keeps its place until it expires); initiations per contact per
// hour in every organization; messages per recipient and per organization tree per hour;
// with userIdentifier, at most 3 initiations per identifier per 3 minutes. All are limit
// slots (store/slots.ts), so they hold under concurrent requests on PostgreSQL; a refusal is
// 429 with Retry-After. The message is sent inside the activity's transaction (bounded by
// the transport's timeout): a failed delivery rolls back the OTP row and the slots, and
// nothing is recorded.
import { Type, type Static } from "@sinclair/typebox";
import { ApiError, Grpc, exhausted } from "../../errors.ts";
import { contactKey, mailboxKey, takeInitiation, takeSend } from "../../logins/otp/limits.ts";
import { generateCode, codeDigest, DEFAULT_OTP_LENGTH } from "../../logins/otp/code.ts";
import { targetBundle } from "../../logins/otp/bundle.ts";
import { emailMessage, smsMessage } from "../../logins/otp/message.ts";
import { generateP256, toPkcs8 } from "../../crypto/p256.ts";
import { nextFreeAt, takeSlot } from "../../store/slots.ts";
import { newId } from "../../store/util.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { messageContent } from "./otp-content.ts";
import { OTP_FEATURE, requireFeature } from "../organizations/feature-gate.ts";
import { checkInitOtp, InitOtpParamsV1, InitOtpParamsV2, normalizeContact, otpSeconds, type InitOtpParams } from "./otp-fields.ts";
import { AAD } from "../../crypto/aad.ts";

export const MAX_LIVE_CODES_PER_CONTACT = 3;
export const MAX_INITIATIONS_PER_IDENTIFIER = 3;
export const IDENTIFIER_WINDOW_SECONDS = 180;

export const contactScope = (organizationId: string, contactNormalized: string) => `otp-contact:${organizationId}:${contactNormalized}`;

const retryMs = (at: number | undefined, now: number) => Math.max(1000, (at ?? now + 1000) - now);
const retryIn = (ms: number) => `; try again in ${Math.ceil(ms / 1000)} seconds`;

/** Sends a code (init_otp, init_otp_auth): the OTP row, its limits and its message. */
export async function initOtp(ctx: ExecuteContext, p: InitOtpParams): Promise<{ otpId: string; otpEncryptionTargetBundle: string }> {
  const { tx, now, services } = ctx;
  const org = ctx.organization.id;
  const email = p.otpType === "OTP_TYPE_EMAIL";
  // Before anything is counted or sent, and before the transport: the organization's choice
  // is the more specific answer (docs/organizations.md §8.2).
  await requireFeature(ctx, OTP_FEATURE[p.otpType], email ? "email OTP authentication" : "SMS OTP authentication");
  const transport = email ? services.logins.email : services.logins.sms;
  if (!transport) {
    throw email
      ? new ApiError(
          Grpc.FAILED_PRECONDITION,
          "EMAIL_SENDING_DISABLED",
          "email OTP is disabled: this server has no mail transport configured (set SMTP_URL)",
        )
      : new ApiError(
          Grpc.FAILED_PRECONDITION,
          "REQUEST_INVALID",
          "SMS OTP is disabled: this server has no SMS transport configured (set SIGIL_SMS_URL)",
        );
  }
  const secs = otpSeconds(p.expirationSeconds);
  const expiresAt = now + secs * 1000;
  const contactNormalized = normalizeContact(p.otpType, p.contact);
  const otpId = newId();
  // Refusals of the request itself (400) before anything is counted.
  const content = await messageContent(ctx, p);

  if (p.userIdentifier !== undefined) {
    const scope = `otp-identifier:${org}:${p.userIdentifier}`;
    if (!(await takeSlot(tx, scope, MAX_INITIATIONS_PER_IDENTIFIER, otpId, now + IDENTIFIER_WINDOW_SECONDS * 1000, now))) {
      const ms = retryMs(await nextFreeAt(tx, scope, now), now);
      throw exhausted(
        `Max number of OTPs have been initiated for this userIdentifier (${MAX_INITIATIONS_PER_IDENTIFIER} per ${IDENTIFIER_WINDOW_SECONDS / 60} minutes)${retryIn(ms)}`,
        ms,
      );
    }
  }
  const scope = contactScope(org, contactNormalized);
  if (!(await takeSlot(tx, scope, MAX_LIVE_CODES_PER_CONTACT, otpId, expiresAt, now))) {
    const ms = retryMs(await nextFreeAt(tx, scope, now), now);
    throw exhausted(
      `Max number of OTPs have been initiated for this contact (${MAX_LIVE_CODES_PER_CONTACT} live codes); use one of them or wait until one expires${retryIn(ms)}`,
      ms,
    );
  }
  await takeInitiation(tx, services.logins, contactKey(p.otpType, p.contact), otpId, now);
  await takeSend(tx, services.logins, mailboxKey(p.otpType, p.contact), content.topOrganizationId, otpId, now);

  const code = generateCode(p.otpLength ?? DEFAULT_OTP_LENGTH, p.alphanumeric ?? true);
  const target = generateP256();
  await tx
    .insertInto("otps")
    .values({
      id: otpId,
      organization_id: org,
      otp_type: p.otpType,
      contact: p.contact,
      contact_normalized: contactNormalized,
      code_digest: codeDigest(services.masterKey, otpId, code),
      target_private_key_sealed: await services.masterKey.seal(toPkcs8(target), AAD.otpTarget(otpId)),
      attempts: 0,
      status: "live",
      user_identifier: p.userIdentifier ?? null,
      expires_at: expiresAt,
      created_at: now,
      updated_at: now,
    })
    .execute();
  const bundle = targetBundle(await services.serviceKey("OTP_ENCRYPTION_TARGET"), target.publicUncompressed);

  const appName = content.appName;
  // Only the backend's customization is used (otp-content.ts); an end user's request has none left by now.
  const c: Partial<InitOtpParams> = content.custom ? p : {};
  if (email && c.emailCustomization?.templateId !== undefined) {
    services.log?.warn(
      { otpId, templateId: c.emailCustomization.templateId },
      "init_otp: emailCustomization.templateId names an upstream-hosted template; this server sends its built-in template",
    );
  }
  const message = email
    ? emailMessage({
        contact: p.contact,
        ...(appName ? { appName } : {}),
        code,
        expiresInSeconds: secs,
        ...(c.sendFromEmailAddress ? { sendFromEmailAddress: c.sendFromEmailAddress } : {}),
        ...(c.sendFromEmailSenderName ? { sendFromEmailSenderName: c.sendFromEmailSenderName } : {}),
        ...(c.replyToEmailAddress ? { replyToEmailAddress: c.replyToEmailAddress } : {}),
        ...(c.emailCustomization ? { emailCustomization: c.emailCustomization } : {}),
      })
    : smsMessage({
        contact: p.contact,
        ...(appName ? { appName } : {}),
        code,
        ...(c.smsCustomization?.template ? { template: c.smsCustomization.template } : {}),
      });
  try {
    await transport.send(message);
  } catch (err) {
    const reason = err instanceof Error ? err.message : "delivery failed";
    services.log?.warn({ otpId, transport: transport.kind, reason }, "init_otp: OTP delivery failed");
    throw new ApiError(
      Grpc.UNAVAILABLE,
      "UNSPECIFIED",
      `could not deliver the OTP ${email ? "email" : "SMS"}: ${reason}; nothing was recorded, try again later`,
    );
  }
  return { otpId, otpEncryptionTargetBundle: bundle };
}

const ResultV2 = Type.Object({ otpId: Type.String(), otpEncryptionTargetBundle: Type.String() });
const ResultV1 = Type.Object({ otpId: Type.String() });

const common = {
  resource: "OTP",
  action: "CREATE",
  kind: "INIT_OTP",
  // docs/request-path.md §5: a parent's credential runs OTP flows for its sub-organizations' users.
  parentMayStamp: true,
  check: (p: InitOtpParams) => checkInitOtp(p),
};

export const initOtpV3 = defineActivity({
  ...common,
  type: "ACTIVITY_TYPE_INIT_OTP_V3",
  result: "initOtpResultV2",
  params: InitOtpParamsV2,
  returns: ResultV2,
  summary: "Send a one-time code by email or SMS; returns its id and a signed encryption target for verify_otp V2.",
  execute: (ctx, p: Static<typeof InitOtpParamsV2>) => initOtp(ctx, p),
});

export const initOtpV2 = defineActivity({
  ...common,
  type: "ACTIVITY_TYPE_INIT_OTP_V2",
  params: InitOtpParamsV2,
  returns: ResultV1,
  summary: "Send a one-time code by email or SMS (older version: no encryption target; verify with verify_otp V1).",
  execute: async (ctx, p: Static<typeof InitOtpParamsV2>) => ({ otpId: (await initOtp(ctx, p)).otpId }),
});

export const initOtpV1 = defineActivity({
  ...common,
  type: "ACTIVITY_TYPE_INIT_OTP",
  params: InitOtpParamsV1,
  returns: ResultV1,
  summary: "Send a one-time code by email or SMS (oldest version: appName optional, no encryption target).",
  execute: async (ctx, p: Static<typeof InitOtpParamsV1>) => ({ otpId: (await initOtp(ctx, p)).otpId }),
});
