// update_auth_proxy_config's fields (SDK type v1UpdateAuthProxyConfigIntent) and the checks
// that need more than a schema: docs/auth-proxy.md §2 gives each rule and its source.
import { Type, type Static } from "@sinclair/typebox";
import { invalid } from "../../errors.ts";
import { Email, Name } from "../../schemas/common.ts";
import { MAX_OTP_LENGTH, MIN_OTP_LENGTH } from "../../logins/otp/code.ts";
import { MAX_TOKEN_SECONDS } from "../verification-tokens.ts";
import { EmailCustomizationV1, MAX_OTP_SECONDS, SmsCustomization } from "../otp/otp-fields.ts";
import { SMS_CODE_PLACEHOLDER } from "../../logins/otp/message.ts";
import type { AuthProxySettings } from "../../store/auth-proxy-configs.ts";

/** Longest session a proxy login may ask for: 30 days (the service's own cap still applies at login). */
export const MAX_PROXY_SESSION_SECONDS = 30 * 86400;
export const MAX_ALLOWED_ORIGINS = 100;
export const MAX_ORIGIN_LENGTH = 512;
/** The providers wallet kits read (enabledSocialProviders, oauthClientIds keys). */
export const SOCIAL_PROVIDERS: ReadonlySet<string> = new Set(["google", "apple", "facebook", "x", "discord"]);

const Token = (what: string, max: number) =>
  Type.String({
    minLength: 1,
    maxLength: max,
    pattern: "^[A-Za-z0-9_.:-]+$",
    errorMessage: `${what} must be 1 to ${max} letters, digits, '_', '.', ':' or '-'`,
  });
const Seconds = (what: string, max: number) =>
  Type.Integer({ minimum: 1, maximum: max, errorMessage: `${what} must be a whole number of seconds from 1 to ${max}` });
const List = <T extends Parameters<typeof Type.Array>[0]>(item: T, what: string, max: number) =>
  Type.Array(item, { maxItems: max, errorMessage: `${what} must be a list of at most ${max} entries` });
const HttpUrl = (what: string) =>
  Type.String({ maxLength: 2048, pattern: "^https?://\\S+$", errorMessage: `${what} must be an http(s) URL of at most 2048 characters` });

export const WalletKitSettings = Type.Object({
  enabledSocialProviders: Type.Optional(List(Type.String({ maxLength: 32 }), "enabledSocialProviders", SOCIAL_PROVIDERS.size)),
  oauthClientIds: Type.Optional(
    Type.Record(
      Type.String(),
      Type.String({ minLength: 1, maxLength: 256, errorMessage: "an OAuth client id must be 1 to 256 characters" }),
      {
        maxProperties: SOCIAL_PROVIDERS.size,
        errorMessage: `oauthClientIds must map at most ${SOCIAL_PROVIDERS.size} providers to client ids`,
      },
    ),
  ),
  oauthRedirectUrl: Type.Optional(HttpUrl("oauthRedirectUrl")),
});

export const UpdateAuthProxyConfigParams = Type.Object({
  allowedOrigins: Type.Optional(
    List(
      Type.String({ maxLength: MAX_ORIGIN_LENGTH, errorMessage: `an origin must be at most ${MAX_ORIGIN_LENGTH} characters` }),
      "allowedOrigins",
      MAX_ALLOWED_ORIGINS,
    ),
  ),
  allowedAuthMethods: Type.Optional(List(Token("an auth method", 64), "allowedAuthMethods", 32)),
  sendFromEmailAddress: Type.Optional(Email),
  replyToEmailAddress: Type.Optional(Email),
  emailAuthTemplateId: Type.Optional(Token("emailAuthTemplateId", 128)),
  otpTemplateId: Type.Optional(Token("otpTemplateId", 128)),
  emailCustomizationParams: Type.Optional(EmailCustomizationV1),
  smsCustomizationParams: Type.Optional(SmsCustomization),
  walletKitSettings: Type.Optional(WalletKitSettings),
  otpExpirationSeconds: Type.Optional(Seconds("otpExpirationSeconds", MAX_OTP_SECONDS)),
  verificationTokenExpirationSeconds: Type.Optional(Seconds("verificationTokenExpirationSeconds", MAX_TOKEN_SECONDS)),
  sessionExpirationSeconds: Type.Optional(Seconds("sessionExpirationSeconds", MAX_PROXY_SESSION_SECONDS)),
  otpAlphanumeric: Type.Optional(Type.Boolean()),
  otpLength: Type.Optional(
    Type.Integer({
      minimum: MIN_OTP_LENGTH,
      maximum: MAX_OTP_LENGTH,
      errorMessage: `otpLength must be a whole number from ${MIN_OTP_LENGTH} to ${MAX_OTP_LENGTH}`,
    }),
  ),
  sendFromEmailSenderName: Type.Optional(Name("sendFromEmailSenderName", 128)),
  verificationTokenRequiredForGetAccountPii: Type.Optional(Type.Boolean()),
  socialLinkingClientIds: Type.Optional(
    List(
      Type.String({ minLength: 1, maxLength: 256, errorMessage: "a client id must be 1 to 256 characters" }),
      "socialLinkingClientIds",
      32,
    ),
  ),
  captchaEnabled: Type.Optional(Type.Boolean()),
});
export type UpdateAuthProxyConfig = Static<typeof UpdateAuthProxyConfigParams>;

const bad = (field: string, description: string) => invalid(`${field}: ${description}`, [{ field, description }]);

/**
 * One allowed origin, normalized (docs/auth-proxy.md §2): an exact http(s) origin —
 * scheme://host[:port], nothing after it but an optional "/" — lower-cased with the default
 * port dropped, as browsers send it. Any "*" is refused here: a whole-list "*" is handled by
 * normalizeOrigins.
 */
export function normalizeOrigin(raw: string, field: string): string {
  if (raw.includes("*"))
    throw bad(
      field,
      'wildcard origins are not supported: list each origin exactly (scheme://host[:port]); an empty list or a single "*" allows every origin',
    );
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw bad(field, "must be an origin such as https://app.example.com (scheme://host[:port])");
  }
  const rest = raw.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/, "");
  if ((u.protocol !== "https:" && u.protocol !== "http:") || u.username !== "" || u.password !== "" || (rest !== "" && rest !== "/")) {
    throw bad(
      field,
      "must be an exact origin such as https://app.example.com: http or https, no user information, path, query or fragment",
    );
  }
  return u.origin;
}

/** The list as stored: normalized, duplicates dropped; [] for "every origin" ([] or ["*"]). */
export function normalizeOrigins(list: readonly string[], field: string): string[] {
  if (list.length === 1 && list[0]!.trim() === "*") return [];
  const out = new Set<string>();
  list.forEach((o, i) => out.add(normalizeOrigin(o.trim(), `${field}[${i}]`)));
  return [...out];
}

// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const CONTROL = /[\u0000-\u001f\u007f]/;

/** The checks beyond the schema; returns the settings to merge, normalized. */
export function checkUpdate(p: UpdateAuthProxyConfig, at = "parameters"): AuthProxySettings {
  const out: AuthProxySettings = {};
  if (p.allowedOrigins !== undefined) out.allowedOrigins = normalizeOrigins(p.allowedOrigins, `${at}.allowedOrigins`);
  if (p.allowedAuthMethods !== undefined) out.allowedAuthMethods = [...new Set(p.allowedAuthMethods)];
  if (p.sendFromEmailAddress !== undefined) out.sendFromEmailAddress = p.sendFromEmailAddress;
  if (p.replyToEmailAddress !== undefined) out.replyToEmailAddress = p.replyToEmailAddress;
  if (p.sendFromEmailSenderName !== undefined) {
    // A header value: no line breaks or other control characters.
    if (CONTROL.test(p.sendFromEmailSenderName))
      throw bad(`${at}.sendFromEmailSenderName`, "must not contain control characters or line breaks");
    out.sendFromEmailSenderName = p.sendFromEmailSenderName;
  }
  if (p.emailAuthTemplateId !== undefined) out.emailAuthTemplateId = p.emailAuthTemplateId;
  if (p.otpTemplateId !== undefined) out.otpTemplateId = p.otpTemplateId;
  if (p.emailCustomizationParams !== undefined)
    out.emailCustomizationParams = checkEmailCustomization(p.emailCustomizationParams, `${at}.emailCustomizationParams`);
  if (p.smsCustomizationParams !== undefined) {
    const t = p.smsCustomizationParams.template;
    if (t !== undefined && !new RegExp(SMS_CODE_PLACEHOLDER.source).test(t))
      throw bad(`${at}.smsCustomizationParams.template`, "must contain {{.OtpCode}}, where the code goes");
    out.smsCustomizationParams = t !== undefined ? { template: t } : {};
  }
  if (p.walletKitSettings !== undefined) out.walletKitSettings = checkWalletKit(p.walletKitSettings, `${at}.walletKitSettings`);
  for (const k of ["otpExpirationSeconds", "verificationTokenExpirationSeconds", "sessionExpirationSeconds", "otpLength"] as const) {
    if (p[k] !== undefined) out[k] = p[k];
  }
  for (const k of ["otpAlphanumeric", "verificationTokenRequiredForGetAccountPii", "captchaEnabled"] as const) {
    if (p[k] !== undefined) out[k] = p[k];
  }
  if (p.socialLinkingClientIds !== undefined) out.socialLinkingClientIds = [...new Set(p.socialLinkingClientIds)];
  return out;
}

function checkEmailCustomization(c: Static<typeof EmailCustomizationV1>, at: string): Record<string, unknown> {
  if (c.magicLinkTemplate !== undefined && !c.magicLinkTemplate.includes("%s"))
    throw bad(`${at}.magicLinkTemplate`, "must contain %s, where the code goes");
  if (c.appName !== undefined && CONTROL.test(c.appName)) throw bad(`${at}.appName`, "must not contain control characters or line breaks");
  if (c.templateVariables !== undefined) {
    let vars: unknown;
    try {
      vars = JSON.parse(c.templateVariables);
    } catch {
      throw bad(`${at}.templateVariables`, "must be a JSON object");
    }
    if (typeof vars !== "object" || vars === null || Array.isArray(vars)) throw bad(`${at}.templateVariables`, "must be a JSON object");
  }
  if (c.templateId !== undefined && !/^[A-Za-z0-9_.:-]{1,128}$/.test(c.templateId))
    throw bad(`${at}.templateId`, "must be 1 to 128 letters, digits, '_', '.', ':' or '-'");
  const out: Record<string, unknown> = {};
  for (const k of ["appName", "logoUrl", "magicLinkTemplate", "templateVariables", "templateId"] as const)
    if (c[k] !== undefined) out[k] = c[k];
  return out;
}

function checkWalletKit(w: Static<typeof WalletKitSettings>, at: string): NonNullable<AuthProxySettings["walletKitSettings"]> {
  const known = [...SOCIAL_PROVIDERS].join(", ");
  const out: NonNullable<AuthProxySettings["walletKitSettings"]> = {};
  if (w.enabledSocialProviders !== undefined) {
    w.enabledSocialProviders.forEach((p, i) => {
      if (!SOCIAL_PROVIDERS.has(p)) throw bad(`${at}.enabledSocialProviders[${i}]`, `must be one of ${known}`);
    });
    out.enabledSocialProviders = [...new Set(w.enabledSocialProviders)];
  }
  if (w.oauthClientIds !== undefined) {
    // Request-named keys: checked against the fixed set, copied into a Map-built object.
    const ids = new Map<string, string>();
    for (const key of Object.keys(w.oauthClientIds)) {
      if (!SOCIAL_PROVIDERS.has(key))
        throw bad(`${at}.oauthClientIds`, `keys must be among ${known}; ${JSON.stringify(key.slice(0, 64))} is not`);
      ids.set(key, w.oauthClientIds[key]!);
    }
    out.oauthClientIds = Object.fromEntries(ids);
  }
  if (w.oauthRedirectUrl !== undefined) {
    let u: URL | undefined;
    try {
      u = new URL(w.oauthRedirectUrl);
    } catch {
      u = undefined;
    }
    if (!u || u.hash !== "" || u.username !== "" || u.password !== "")
      throw bad(`${at}.oauthRedirectUrl`, "must be an absolute http(s) URL without user information or fragment");
    out.oauthRedirectUrl = w.oauthRedirectUrl;
  }
  return out;
}
