// The auth proxy's endpoints (docs/auth-proxy-service.md §2): each reads its body, applies
// captcha and limits where they belong, and makes the public API calls it maps to — signed by
// the config's proxy key, in the config's organization or the sub-organization the request
// names — answering plain JSON (no activity wrapper; the SDK's auth proxy types).
import { invalid, notFound, permissionDenied } from "../errors.ts";
import type { ForwardedActivityType } from "../auth-proxy/forwarded.ts";
import { ApiClient, type SigningKey } from "./api-client.ts";
import type { ConfigEntry } from "./config-source.ts";
import type { ProxyLimiter } from "./limits.ts";
import type { ProxySettings } from "./settings.ts";
import { verifyCaptcha } from "./captcha.ts";
import { accountLookup, nameOtherThanContact } from "./account-filters.ts";
import { oidcEmail, requireVerifiedContact, type VerificationKeys } from "./account-pii.ts";
import { sameContact } from "./account-filters.ts";
import * as B from "./bodies.ts";

export interface EndpointContext {
  entry: ConfigEntry;
  api: ApiClient;
  settings: ProxySettings;
  limiter: ProxyLimiter;
  verificationKeys: VerificationKeys;
  clientIp: string | undefined;
  captchaToken: string | undefined;
}

interface Endpoint {
  body: B.BodySpec;
  run(ctx: EndpointContext, body: Record<string, unknown>): Promise<object>;
}

/** Session lifetime when the config sets none (docs/auth-proxy-service.md §5). */
export const DEFAULT_SESSION_SECONDS = 900;
/** What the API uses when init_otp names no length / alphabet (shown by wallet_kit_config). */
const API_OTP_LENGTH = 9;
const API_OTP_ALPHANUMERIC = true;
/** Auth methods a config allows when it lists none. */
const DEFAULT_AUTH_METHODS = ["email", "sms", "passkey", "wallet"];

const keyOf = (e: ConfigEntry): SigningKey => ({ configId: e.config.configId, sealedKey: e.sealedKey });
const s = (v: unknown) => v as string;
const opt = <T extends object>(cond: unknown, o: T): T | object => (cond === undefined ? {} : o);

async function submit(
  ctx: EndpointContext,
  type: ForwardedActivityType,
  organizationId: string,
  parameters: object,
  resultKey: string,
  extra?: { generateAppProofs?: boolean },
) {
  const activity = await ctx.api.submit(keyOf(ctx.entry), type, organizationId, parameters, extra);
  return { activity, result: ApiClient.result<Record<string, unknown>>(activity, resultKey) };
}

async function firstSuborg(
  ctx: EndpointContext,
  query: "list_suborgs" | "list_verified_suborgs",
  filterType: string,
  filterValue: string,
): Promise<string | undefined> {
  const r = await ctx.api.query<{ organizationIds?: string[] }>(keyOf(ctx.entry), query, {
    organizationId: ctx.entry.config.organizationId,
    filterType,
    filterValue,
  });
  return Array.isArray(r.organizationIds) ? r.organizationIds[0] : undefined;
}

const sessionSeconds = (e: ConfigEntry) => String(e.config.sessionExpirationSeconds ?? DEFAULT_SESSION_SECONDS);

/** Lower-case method names a config allows: allowedAuthMethods (any AUTH_METHOD_ prefix dropped) or the default. */
export function authMethods(e: ConfigEntry): string[] {
  const listed = e.config.allowedAuthMethods;
  if (!listed || listed.length === 0) return DEFAULT_AUTH_METHODS;
  return listed.map((m) => m.replace(/^(PROXY_)?AUTH_METHOD_/i, "").toLowerCase());
}

/** The app name OTP messages carry: emailCustomizationParams.appName, else the organization's name, else "Sigil". */
function appName(ctx: EndpointContext): string {
  const configured = ctx.entry.config.emailCustomizationParams?.appName;
  if (typeof configured === "string" && configured !== "") return configured;
  return ctx.entry.organizationName || "Sigil";
}

async function captchaIfEnabled(ctx: EndpointContext): Promise<void> {
  if (ctx.entry.config.captchaEnabled) await verifyCaptcha(ctx.settings.captcha, ctx.captchaToken, ctx.clientIp);
}

// --- signup -----------------------------------------------------------------------------

function signup(version: 7 | 8): Endpoint {
  return {
    body: B.SIGNUP,
    async run(ctx, b) {
      await captchaIfEnabled(ctx);
      await ctx.limiter.signup(ctx.entry.config.configId, ctx.clientIp);
      // Our choice: never name the sub-organization or user after a contact (a NAME or USERNAME
      // look-up would otherwise find by email what verificationTokenRequiredForGetAccountPii guards).
      const rootUser = {
        userName: nameOtherThanContact(b.userName, b.userEmail, b.userPhoneNumber) ?? "User",
        ...opt(b.userEmail, { userEmail: b.userEmail }),
        ...opt(b.userPhoneNumber, { userPhoneNumber: b.userPhoneNumber }),
        apiKeys: b.apiKeys,
        authenticators: b.authenticators,
        oauthProviders: b.oauthProviders,
      };
      const parameters = {
        subOrganizationName:
          nameOtherThanContact(b.organizationName, b.userEmail, b.userPhoneNumber) ?? `Sub-organization ${new Date().toISOString()}`,
        rootUsers: [rootUser],
        rootQuorumThreshold: 1,
        ...opt(b.wallet, { wallet: b.wallet }),
        ...opt(b.verificationToken, { verificationToken: b.verificationToken }),
        ...opt(b.clientSignature, { clientSignature: b.clientSignature }),
      };
      const type = version === 8 ? "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8" : "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7";
      const { activity, result } = await submit(
        ctx,
        type,
        ctx.entry.config.organizationId,
        parameters,
        `createSubOrganizationResultV${version}`,
        { generateAppProofs: true },
      );
      const r = result as { subOrganizationId: string; rootUserIds?: string[]; wallet?: unknown };
      return {
        organizationId: r.subOrganizationId,
        userId: r.rootUserIds?.[0] ?? "",
        ...opt(r.wallet, { wallet: r.wallet }),
        // Passed on unverified: the browser verifies app proofs (docs/auth-proxy-service.md §2.1).
        ...opt(activity.appProofs, { appProofs: activity.appProofs }),
      };
    },
  };
}

// --- OTP --------------------------------------------------------------------------------

function otpInit(v2: boolean): Endpoint {
  return {
    body: B.OTP_INIT,
    async run(ctx, b) {
      const otpType = s(b.otpType);
      if (otpType !== "OTP_TYPE_EMAIL" && otpType !== "OTP_TYPE_SMS") {
        throw invalid("otpType must be OTP_TYPE_EMAIL or OTP_TYPE_SMS", [
          { field: "otpType", description: "OTP_TYPE_EMAIL or OTP_TYPE_SMS" },
        ]);
      }
      const method = otpType === "OTP_TYPE_EMAIL" ? "email" : "sms";
      if (!authMethods(ctx.entry).includes(method)) throw permissionDenied(`this auth proxy configuration does not allow ${method} OTP`);
      await captchaIfEnabled(ctx);
      await ctx.limiter.otpInit(otpType, s(b.contact));
      const c = ctx.entry.config;
      // The config's customization only; the browser's emailCustomization is ignored (docs/auth-proxy-service.md §5).
      const { appName: _ignored, ...emailCustomization } = (c.emailCustomizationParams ?? {}) as Record<string, unknown>;
      const parameters = {
        otpType,
        contact: b.contact,
        appName: appName(ctx),
        ...opt(c.otpLength, { otpLength: c.otpLength }),
        ...opt(c.otpAlphanumeric, { alphanumeric: c.otpAlphanumeric }),
        ...opt(c.otpExpirationSeconds, { expirationSeconds: String(c.otpExpirationSeconds) }),
        ...opt(c.sendFromEmailAddress, { sendFromEmailAddress: c.sendFromEmailAddress }),
        ...opt(c.sendFromEmailSenderName, { sendFromEmailSenderName: c.sendFromEmailSenderName }),
        ...opt(c.replyToEmailAddress, { replyToEmailAddress: c.replyToEmailAddress }),
        ...(otpType === "OTP_TYPE_EMAIL" && Object.keys(emailCustomization).length ? { emailCustomization } : {}),
        ...(otpType === "OTP_TYPE_SMS" && c.smsCustomizationParams?.template
          ? { smsCustomization: { template: c.smsCustomizationParams.template } }
          : {}),
      };
      const { result } = await submit(ctx, "ACTIVITY_TYPE_INIT_OTP_V3", c.organizationId, parameters, "initOtpResultV2");
      return v2 ? { otpId: result.otpId, otpEncryptionTargetBundle: result.otpEncryptionTargetBundle } : { otpId: result.otpId };
    },
  };
}

const tokenSeconds = (e: ConfigEntry) =>
  opt(e.config.verificationTokenExpirationSeconds, { expirationSeconds: String(e.config.verificationTokenExpirationSeconds) });

const otpVerify: Endpoint = {
  body: B.OTP_VERIFY,
  async run(ctx, b) {
    const parameters = { otpId: b.otpId, otpCode: b.otpCode, ...opt(b.publicKey, { publicKey: b.publicKey }), ...tokenSeconds(ctx.entry) };
    const { result } = await submit(ctx, "ACTIVITY_TYPE_VERIFY_OTP", ctx.entry.config.organizationId, parameters, "verifyOtpResult");
    return { verificationToken: result.verificationToken };
  },
};

const otpVerifyV2: Endpoint = {
  body: B.OTP_VERIFY_V2,
  async run(ctx, b) {
    const parameters = { otpId: b.otpId, encryptedOtpBundle: b.encryptedOtpBundle, ...tokenSeconds(ctx.entry) };
    const { result } = await submit(ctx, "ACTIVITY_TYPE_VERIFY_OTP_V2", ctx.entry.config.organizationId, parameters, "verifyOtpResult");
    return { verificationToken: result.verificationToken };
  },
};

/** The claims a verification token carries (read, not verified: the API verifies it when it is used). */
function tokenContact(token: string): { type: "OTP_TYPE_EMAIL" | "OTP_TYPE_SMS"; contact: string } {
  const parts = token.split(".");
  let c: { verification_type?: unknown; contact?: unknown } | undefined;
  try {
    c = parts.length === 3 ? (JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as typeof c) : undefined;
  } catch {
    c = undefined;
  }
  if (!c || (c.verification_type !== "OTP_TYPE_EMAIL" && c.verification_type !== "OTP_TYPE_SMS") || typeof c.contact !== "string") {
    throw invalid("verificationToken is not a verification token", [
      { field: "verificationToken", description: "the token otp_verify returned" },
    ]);
  }
  return { type: c.verification_type, contact: c.contact };
}

/** The organization a login runs in: the one the request names, or the first the look-up finds. */
async function loginOrganization(given: unknown, lookup: () => Promise<string | undefined>, missing: string): Promise<string> {
  if (typeof given === "string" && given !== "") return given;
  const found = await lookup();
  if (!found) throw notFound(missing);
  return found;
}

/** otp_login / oauth_login with the config's session lifetime (browsers send none); answers {session}. */
async function login(
  ctx: EndpointContext,
  type: ForwardedActivityType,
  organizationId: string,
  b: Record<string, unknown>,
  parameters: object,
): Promise<{ session: unknown }> {
  const all = {
    ...parameters,
    publicKey: b.publicKey,
    expirationSeconds: sessionSeconds(ctx.entry),
    ...opt(b.invalidateExisting, { invalidateExisting: b.invalidateExisting }),
  };
  const { result } = await submit(
    ctx,
    type,
    organizationId,
    all,
    type === "ACTIVITY_TYPE_OAUTH_LOGIN" ? "oauthLoginResult" : "otpLoginResult",
  );
  return { session: result.session };
}

function otpLogin(v2: boolean): Endpoint {
  return {
    body: v2 ? B.OTP_LOGIN_V2 : B.OTP_LOGIN,
    async run(ctx, b) {
      const organizationId = await loginOrganization(
        b.organizationId,
        () => {
          const t = tokenContact(s(b.verificationToken));
          return firstSuborg(ctx, "list_verified_suborgs", t.type === "OTP_TYPE_EMAIL" ? "EMAIL" : "PHONE_NUMBER", t.contact);
        },
        "no sub-organization has a user with this verified contact; sign up first",
      );
      const parameters = { verificationToken: b.verificationToken, ...opt(b.clientSignature, { clientSignature: b.clientSignature }) };
      return login(ctx, v2 ? "ACTIVITY_TYPE_OTP_LOGIN_V2" : "ACTIVITY_TYPE_OTP_LOGIN", organizationId, b, parameters);
    },
  };
}

// --- OAuth ------------------------------------------------------------------------------

const oauth2Authenticate: Endpoint = {
  body: B.OAUTH2_AUTHENTICATE,
  async run(ctx, b) {
    const org = ctx.entry.config.organizationId;
    const r = await ctx.api.query<{ oauth2Credentials?: { oauth2CredentialId: string; provider: string; clientId: string }[] }>(
      keyOf(ctx.entry),
      "list_oauth2_credentials",
      { organizationId: org },
    );
    const cred = (r.oauth2Credentials ?? []).find((c) => c.provider === b.provider && c.clientId === b.clientId);
    if (!cred) throw notFound("no OAuth2 credential of this organization has this provider and clientId", "REQUEST_INVALID");
    const parameters = {
      oauth2CredentialId: cred.oauth2CredentialId,
      authCode: b.authCode,
      redirectUri: b.redirectUri,
      codeVerifier: b.codeVerifier,
      nonce: b.nonce,
    };
    const { result } = await submit(ctx, "ACTIVITY_TYPE_OAUTH2_AUTHENTICATE", org, parameters, "oauth2AuthenticateResult");
    return { oidcToken: result.oidcToken };
  },
};

const oauthLogin: Endpoint = {
  body: B.OAUTH_LOGIN,
  async run(ctx, b) {
    const organizationId = await loginOrganization(
      b.organizationId,
      () => firstSuborg(ctx, "list_suborgs", "OIDC_TOKEN", s(b.oidcToken)),
      "no sub-organization has a user with this OAuth identity; sign up first",
    );
    return login(ctx, "ACTIVITY_TYPE_OAUTH_LOGIN", organizationId, b, { oidcToken: b.oidcToken });
  },
};

// --- account and wallet kit -------------------------------------------------------------

const account: Endpoint = {
  body: B.ACCOUNT,
  async run(ctx, b) {
    const token = b.verificationToken as string | undefined;
    const lookup = accountLookup(s(b.filterType), s(b.filterValue), token !== undefined);
    const c = ctx.entry.config;
    if (lookup.contact && c.verificationTokenRequiredForGetAccountPii) {
      if (token !== undefined) {
        await requireVerifiedContact(ctx.verificationKeys, token, lookup.contact, c.organizationId);
      } else if (typeof b.oidcToken === "string" && lookup.contact.type === "OTP_TYPE_EMAIL") {
        const email = oidcEmail(b.oidcToken);
        if (!email || !sameContact("OTP_TYPE_EMAIL", email, lookup.contact.value))
          throw permissionDenied("oidcToken does not carry this email address");
        // The API verifies the token in full (signature, issuer, expiry) for this look-up.
        await firstSuborg(ctx, "list_suborgs", "OIDC_TOKEN", b.oidcToken);
      } else {
        throw permissionDenied(
          "this auth proxy configuration requires a verificationToken (or an oidcToken) for EMAIL and PHONE_NUMBER look-ups",
        );
      }
    }
    const organizationId = await firstSuborg(ctx, lookup.query, lookup.filterType, lookup.filterValue);
    return organizationId ? { organizationId } : {};
  },
};

/** Methods the kit offers that need nothing but the browser: passkeys, and wallets signing their own stamps. */
const BROWSER_METHODS: ReadonlySet<string> = new Set(["passkey", "wallet"]);
/** The social providers the kit offers (each needs its client id) — as update_auth_proxy_config accepts them. */
const KIT_SOCIAL_PROVIDERS: ReadonlySet<string> = new Set(["google", "apple", "facebook", "x", "discord"]);

/**
 * wallet_kit_config.enabledProviders (docs/auth-proxy-service.md §5.1): only what the server can
 * deliver. Email and SMS when the API can deliver that channel (a transport, the feature on);
 * passkey and wallet as allowed; a social provider when enabled and given its client id (the
 * kit cannot start its flow without one); any other name is dropped (the kit reads none).
 */
export function deliverableProviders(e: ConfigEntry): string[] {
  const out = new Set<string>();
  const channels: ReadonlySet<string> = new Set(e.otpChannels);
  for (const m of authMethods(e)) if (BROWSER_METHODS.has(m) || channels.has(m)) out.add(m);
  const w = e.config.walletKitSettings ?? {};
  const ids = w.oauthClientIds ?? {};
  for (const p of (w.enabledSocialProviders ?? []).map((x) => x.toLowerCase())) {
    const id = Object.hasOwn(ids, p) ? ids[p] : undefined;
    if (KIT_SOCIAL_PROVIDERS.has(p) && typeof id === "string" && id !== "") out.add(p);
  }
  return [...out];
}

const walletKitConfig: Endpoint = {
  body: B.EMPTY,
  async run(ctx) {
    const c = ctx.entry.config;
    const w = c.walletKitSettings ?? {};
    return {
      enabledProviders: deliverableProviders(ctx.entry),
      sessionExpirationSeconds: sessionSeconds(ctx.entry),
      organizationId: c.organizationId,
      ...opt(w.oauthClientIds, { oauthClientIds: w.oauthClientIds }),
      ...opt(w.oauthRedirectUrl, { oauthRedirectUrl: w.oauthRedirectUrl }),
      otpAlphanumeric: c.otpAlphanumeric ?? API_OTP_ALPHANUMERIC,
      otpLength: String(c.otpLength ?? API_OTP_LENGTH),
    };
  },
};

const walletKitClientParams: Endpoint = {
  body: B.EMPTY,
  async run(ctx) {
    // The site key only where the config asks for captcha: the kit shows the widget when it has one (our choice).
    const key = ctx.entry.config.captchaEnabled ? ctx.settings.captcha.siteKey : undefined;
    return key ? { turnstileSiteKey: key } : {};
  },
};

/** Every endpoint, by path. A Map: the path is request data. */
export const ENDPOINTS: ReadonlyMap<string, Endpoint> = new Map([
  ["/v1/signup", signup(7)],
  ["/v1/signup_v2", signup(8)],
  ["/v1/otp_init", otpInit(false)],
  ["/v1/otp_init_v2", otpInit(true)],
  ["/v1/otp_verify", otpVerify],
  ["/v1/otp_verify_v2", otpVerifyV2],
  ["/v1/otp_login", otpLogin(false)],
  ["/v1/otp_login_v2", otpLogin(true)],
  ["/v1/oauth2_authenticate", oauth2Authenticate],
  ["/v1/oauth_login", oauthLogin],
  ["/v1/account", account],
  ["/v1/wallet_kit_config", walletKitConfig],
  ["/v1/wallet_kit_client_params", walletKitClientParams],
]);
