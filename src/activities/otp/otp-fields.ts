// init_otp's parameter schemas and the checks that need more than a schema (the contact's
// form depends on otpType; customization fields that must parse).
import { Type, type Static } from "@sinclair/typebox";
import { Email, Name } from "../../schemas/common.ts";
import { invalid } from "../../errors.ts";
import { MAX_OTP_LENGTH, MIN_OTP_LENGTH } from "../../logins/otp/code.ts";
import { SMS_CODE_PLACEHOLDER } from "../../logins/otp/message.ts";

export const DEFAULT_OTP_SECONDS = 300;
export const MAX_OTP_SECONDS = 600;

const OtpType = Type.Union([Type.Literal("OTP_TYPE_EMAIL"), Type.Literal("OTP_TYPE_SMS")], {
  errorMessage: "must be OTP_TYPE_EMAIL or OTP_TYPE_SMS (OTP_TYPE_WHATSAPP is not supported by this server)",
});
const Url = (what: string) =>
  Type.String({ maxLength: 2048, pattern: "^https?://\\S+$", errorMessage: `${what} must be an http(s) URL of at most 2048 characters` });

const customizationFields = {
  logoUrl: Type.Optional(Url("logoUrl")),
  magicLinkTemplate: Type.Optional(Url("magicLinkTemplate")),
  templateVariables: Type.Optional(
    Type.String({ maxLength: 4096, errorMessage: "templateVariables must be a JSON object (text, at most 4096 characters)" }),
  ),
  templateId: Type.Optional(Type.String({ maxLength: 256, errorMessage: "templateId must be at most 256 characters" })),
};
export const EmailCustomizationV2 = Type.Object(customizationFields);
export const EmailCustomizationV1 = Type.Object({ appName: Type.Optional(Name("appName", 128)), ...customizationFields });
export const SmsCustomization = Type.Object({
  template: Type.Optional(Type.String({ minLength: 1, maxLength: 480, errorMessage: "template must be 1 to 480 characters" })),
});

const common = {
  otpType: OtpType,
  contact: Type.String({ minLength: 1, maxLength: 254, errorMessage: "contact must be an email address or an E.164 phone number" }),
  otpLength: Type.Optional(
    Type.Integer({
      minimum: MIN_OTP_LENGTH,
      maximum: MAX_OTP_LENGTH,
      errorMessage: `otpLength must be a whole number from ${MIN_OTP_LENGTH} to ${MAX_OTP_LENGTH}`,
    }),
  ),
  smsCustomization: Type.Optional(SmsCustomization),
  userIdentifier: Type.Optional(Type.String({ minLength: 1, maxLength: 256, errorMessage: "userIdentifier must be 1 to 256 characters" })),
  sendFromEmailAddress: Type.Optional(Email),
  alphanumeric: Type.Optional(Type.Boolean()),
  sendFromEmailSenderName: Type.Optional(Name("sendFromEmailSenderName", 128)),
  expirationSeconds: Type.Optional(
    Type.String({
      pattern: "^[0-9]{1,6}$",
      errorMessage: `expirationSeconds must be a whole number of seconds from 1 to ${MAX_OTP_SECONDS}, as a string`,
    }),
  ),
  replyToEmailAddress: Type.Optional(Email),
};

export const InitOtpParamsV1 = Type.Object({ ...common, emailCustomization: Type.Optional(EmailCustomizationV1) });
export const InitOtpParamsV2 = Type.Object({
  ...common,
  appName: Name("appName", 128),
  emailCustomization: Type.Optional(EmailCustomizationV2),
});

export type InitOtpParams = Static<typeof InitOtpParamsV1> | Static<typeof InitOtpParamsV2>;

const EMAIL = new RegExp(Email.pattern!);
const PHONE = /^\+[1-9][0-9]{6,14}$/;

/** The contact as limits and look-ups use it: lower-cased email, E.164 as given. */
export function normalizeContact(type: "OTP_TYPE_EMAIL" | "OTP_TYPE_SMS", contact: string): string {
  return type === "OTP_TYPE_EMAIL" ? contact.toLowerCase() : contact;
}

export function otpSeconds(given: string | undefined): number {
  if (given === undefined || given === "") return DEFAULT_OTP_SECONDS;
  const secs = Number(given);
  if (!(secs >= 1 && secs <= MAX_OTP_SECONDS)) {
    throw invalid(`parameters.expirationSeconds: must be from 1 to ${MAX_OTP_SECONDS} seconds`, [
      { field: "parameters.expirationSeconds", description: `1 to ${MAX_OTP_SECONDS}` },
    ]);
  }
  return secs;
}

const bad = (field: string, description: string) => invalid(`${field}: ${description}`, [{ field, description }]);

export function checkInitOtp(p: InitOtpParams): void {
  if (p.otpType === "OTP_TYPE_EMAIL" && !EMAIL.test(p.contact))
    throw bad("parameters.contact", "must be a valid email address for OTP_TYPE_EMAIL");
  if (p.otpType === "OTP_TYPE_SMS" && !PHONE.test(p.contact))
    throw bad("parameters.contact", "must be an E.164 phone number such as +14155550100 for OTP_TYPE_SMS");
  otpSeconds(p.expirationSeconds);
  const c = p.emailCustomization;
  if (c?.magicLinkTemplate !== undefined && !c.magicLinkTemplate.includes("%s")) {
    throw bad("parameters.emailCustomization.magicLinkTemplate", "must contain %s, where the code goes");
  }
  if (c?.templateVariables !== undefined) {
    let vars: unknown;
    try {
      vars = JSON.parse(c.templateVariables);
    } catch {
      throw bad("parameters.emailCustomization.templateVariables", "must be a JSON object");
    }
    if (typeof vars !== "object" || vars === null || Array.isArray(vars))
      throw bad("parameters.emailCustomization.templateVariables", "must be a JSON object");
  }
  const t = p.smsCustomization?.template;
  if (t !== undefined && !new RegExp(SMS_CODE_PLACEHOLDER.source).test(t)) {
    throw bad("parameters.smsCustomization.template", "must contain {{.OtpCode}}, where the code goes");
  }
}
