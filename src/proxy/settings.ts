// What the auth proxy runs with (docs/auth-proxy-service.md §1, §6), from the service's
// configuration: its port, the API it forwards to, the proxy secret, captcha and limits.
import type { Config } from "../config.ts";
import type { MasterKey } from "../crypto/envelope.ts";
import { masterKeySourceOf } from "../crypto/master-key-source.ts";
import { parseProxySecret, proxySecretFromMasterKey } from "../auth-proxy/channel.ts";
import type { TrustProxy } from "../network/trust-proxy.ts";

export interface ProxyLimits {
  otpInitsPerContactPerHour: number;
  signupsPerAddressPerHour: number;
  signupsPerConfigPerHour: number;
  requestsPerOriginPerMinute: number;
  requestsPerAddressPerMinute: number;
}

export interface ProxySettings {
  port: number;
  host: string;
  /** Base URL of the public API, no trailing slash. */
  apiUrl: string;
  /** The proxy secret (32 bytes): signs channel requests, opens proxy keys in transit. */
  secret: Buffer;
  captcha: { verifyUrl: string | undefined; secret: string | undefined; siteKey: string | undefined };
  limits: ProxyLimits;
  trustProxy: TrustProxy;
  redisUrl: string | undefined;
  /** Largest request body (bytes). */
  bodyLimitBytes: number;
  /** How long a configuration fetched from the API is kept (config-source.ts). */
  configTtlMs: number;
}

/** Request bodies the SDK sends are small; a sign-up with a few keys and authenticators is a few KiB. */
export const PROXY_BODY_LIMIT_BYTES = 64 * 1024;

/**
 * The proxy secret: SIGIL_AUTH_PROXY_SECRET when set; else derived from the master key — the
 * one given (`sigil serve` has it open), or the one SIGIL_MASTER_KEY / <data dir>/master.key
 * holds. Never generates a master key: a proxy without one is told to set the secret.
 */
export function proxySecretOf(config: Config, masterKey?: MasterKey): Buffer {
  if (config.authProxySecret) return parseProxySecret(config.authProxySecret);
  // A key on a PKCS#11 token gives nothing here: the proxy alone is then given the secret (docs/custody.md §1).
  const key = masterKey ?? masterKeySourceOf(config).read(config);
  if (!key) {
    throw new Error(
      `no proxy secret: set SIGIL_AUTH_PROXY_SECRET (run \`sigil proxy --print-secret\` where the master key is), or SIGIL_MASTER_KEY, or SIGIL_DATA_DIR to a directory holding master.key (${config.dataDir} has none)`,
    );
  }
  return proxySecretFromMasterKey(key);
}

/** `apiPort`: the port the API of this process listens on (the default API URL's). */
export function proxySettingsFrom(config: Config, opts: { apiPort?: number; masterKey?: MasterKey } = {}): ProxySettings {
  return {
    port: config.authProxyPort,
    host: config.host,
    apiUrl: config.authProxyApiUrl ?? `http://127.0.0.1:${opts.apiPort ?? config.port}`,
    secret: proxySecretOf(config, opts.masterKey),
    captcha: { verifyUrl: config.captchaVerifyUrl, secret: config.captchaSecret, siteKey: config.captchaSiteKey },
    limits: {
      otpInitsPerContactPerHour: config.authProxyOtpInitsPerContactPerHour,
      signupsPerAddressPerHour: config.authProxySignupsPerAddressPerHour,
      signupsPerConfigPerHour: config.authProxySignupsPerConfigPerHour,
      requestsPerOriginPerMinute: config.authProxyRequestsPerOriginPerMinute,
      requestsPerAddressPerMinute: config.authProxyRequestsPerAddressPerMinute,
    },
    trustProxy: config.trustProxy,
    redisUrl: config.redisUrl,
    bodyLimitBytes: PROXY_BODY_LIMIT_BYTES,
    configTtlMs: config.authProxyConfigTtlMs,
  };
}
