// The channel between the public API and the auth proxy (docs/auth-proxy.md §4). The proxy
// reaches the API over HTTP only; besides the stamped requests it forwards, it needs one
// thing the public API does not hand out: its configuration and the proxy key. Those come
// from two internal routes, authenticated by the proxy secret:
//
//   proxy secret = HMAC-SHA256(master key, "sigil auth-proxy secret v1")   (32 bytes)
//
// An API node derives it from the master key; a proxy on the same host derives it the same
// way, a proxy on another host is given only the secret (SIGIL_AUTH_PROXY_SECRET), which
// opens proxy keys in transit and nothing else. The proxy key is sealed with the master key
// at rest and re-sealed with the proxy secret for the trip; the proxy opens it in memory for
// each request it signs and keeps only the sealed form.
import { createHmac, timingSafeEqual } from "node:crypto";
import { LocalKey, type MasterKey } from "../crypto/envelope.ts";

/** Route the proxy fetches one configuration (and its key, sealed for transport) from. */
export const CONFIG_ROUTE = "/internal/v1/auth_proxy/config";
/** Route the proxy fetches the origins of every enabled configuration from (for preflights). */
export const ORIGINS_ROUTE = "/internal/v1/auth_proxy/origins";
/** Header carrying hex HMAC-SHA256(proxy secret, raw body). */
export const SIGNATURE_HEADER = "x-sigil-proxy-signature";
/** How far a request's timestampMs may be from the receiver's clock. */
export const MAX_SKEW_MS = 60_000;
/**
 * How long a configuration is kept once read — by the proxy (its copy of each configuration)
 * and by the public API's CORS (the enabled configurations' origins): the default of
 * SIGIL_AUTH_PROXY_CONFIG_TTL_MS (docs/auth-proxy-service.md §3).
 */
export const DEFAULT_CONFIG_TTL_MS = 5_000;

const SECRET_LABEL = "sigil auth-proxy secret v1";

/** The proxy secret of a master key (given as its 64 hex characters). */
export function proxySecretFromMasterKey(masterKey: MasterKey): Buffer {
  return createHmac("sha256", masterKey.rootSecret()).update(SECRET_LABEL).digest();
}

/** Accepts 64 hex characters (what `sigil proxy --print-secret` prints). */
export function parseProxySecret(text: string): Buffer {
  const t = text.trim();
  if (!/^[0-9a-fA-F]{64}$/.test(t)) throw new Error("SIGIL_AUTH_PROXY_SECRET must be 64 hex characters");
  return Buffer.from(t, "hex");
}

export function signChannelBody(secret: Buffer, rawBody: Buffer | string): string {
  return createHmac("sha256", secret).update(rawBody).digest("hex");
}

/** True when the header is the body's signature under the secret (constant time). */
export function channelSignatureValid(secret: Buffer, rawBody: Buffer | string, header: unknown): boolean {
  if (typeof header !== "string" || !/^[0-9a-f]{64}$/.test(header)) return false;
  return timingSafeEqual(Buffer.from(signChannelBody(secret, rawBody), "hex"), Buffer.from(header, "hex"));
}

const transportKey = (secret: Buffer) => new LocalKey(secret);
const transportAad = (configId: string) => `auth-proxy-transport:${configId}`;

/** The proxy key's PKCS#8 DER, sealed with the proxy secret for the trip to the proxy. */
export function sealForTransport(secret: Buffer, pkcs8: Buffer, configId: string): string {
  return transportKey(secret).sealSync(pkcs8, transportAad(configId));
}

/** Opens what sealForTransport sealed; the caller zeroes the result after use. */
export function openFromTransport(secret: Buffer, sealed: string, configId: string): Buffer {
  return transportKey(secret).openSync(sealed, transportAad(configId));
}

/** Body of CONFIG_ROUTE requests. */
export interface ConfigRequest {
  configId: string;
  /** Milliseconds since the epoch, as a string (as activity bodies carry it). */
  timestampMs: string;
}

/** Body of ORIGINS_ROUTE requests. */
export interface OriginsRequest {
  timestampMs: string;
}

/** An OTP channel: init_otp's OTP_TYPE_EMAIL or OTP_TYPE_SMS. */
export type OtpChannel = "email" | "sms";

/** What CONFIG_ROUTE answers (200). Unknown config: 404 with the SDK error body (code 5). */
export interface ConfigResponse {
  config: AuthProxyConfigView;
  /** The proxy key (PKCS#8 DER), sealed with sealForTransport. */
  sealedKey: string;
  /** The organization's name: the app name of OTP messages when the config names none (docs/auth-proxy-service.md §5). */
  organizationName?: string;
  /**
   * The OTP channels init_otp can deliver in the config's organization: the API has a transport
   * for it and the channel's feature is on (docs/auth-proxy-service.md §5.1). Absent (an older
   * API): none.
   */
  otpChannels?: OtpChannel[];
}

/** What ORIGINS_ROUTE answers: every origin some enabled config allows; anyOrigin when one allows all. */
export interface OriginsResponse {
  origins: string[];
  anyOrigin: boolean;
}

/**
 * One proxy configuration as get_auth_proxy_config returns it (authProxyConfig) and the
 * channel hands it to the proxy. Settings are the fields of the SDK's
 * v1UpdateAuthProxyConfigIntent; absent ones are absent.
 */
export interface AuthProxyConfigView {
  configId: string;
  organizationId: string;
  enabled: boolean;
  /** The proxy user (enableAuthProxyResult.userId). */
  userId: string;
  /** The proxy key's compressed P-256 public key (hex): the X-Stamp publicKey of forwarded requests. */
  publicKey: string;
  /** Exact origins; empty = every origin (the default). */
  allowedOrigins: string[];
  allowedAuthMethods?: string[];
  sendFromEmailAddress?: string;
  sendFromEmailSenderName?: string;
  replyToEmailAddress?: string;
  emailAuthTemplateId?: string;
  otpTemplateId?: string;
  emailCustomizationParams?: Record<string, unknown>;
  smsCustomizationParams?: { template?: string };
  walletKitSettings?: { enabledSocialProviders?: string[]; oauthClientIds?: Record<string, string>; oauthRedirectUrl?: string };
  otpExpirationSeconds?: number;
  verificationTokenExpirationSeconds?: number;
  /** Default 900 when absent. */
  sessionExpirationSeconds?: number;
  otpAlphanumeric?: boolean;
  otpLength?: number;
  verificationTokenRequiredForGetAccountPii?: boolean;
  socialLinkingClientIds?: string[];
  captchaEnabled?: boolean;
  createdAt: string;
  updatedAt: string;
}
