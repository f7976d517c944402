// Configuration comes from the environment, and `--flag value` on the command line wins over
// it. Every knob is listed in docs/configuration.md §1; test/unit/config-docs.test.ts keeps the
// two in step (CONFIG_KNOBS below).
import fs from "node:fs";
import path from "node:path";
import { DEFAULT_DISABLE_AFTER_MS, DEFAULT_RETRY_SCHEDULE_MS, parseDuration, parseSchedule } from "./webhooks/retry-schedule.ts";
import { parseTrustProxy, type TrustProxy } from "./network/trust-proxy.ts";
import { DEFAULT_RATE_LIMITS } from "./network/rate-limit.ts";
import { parseCorsOrigins } from "./network/cors.ts";
import { DEFAULT_OTP_LIMITS } from "./auth/login-settings.ts";

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** PostgreSQL connection string; when absent the embedded SQLite file is used. */
  databaseUrl: string | undefined;
  /** Raw master key text from the environment (hex or base64 of 32 bytes), if given. */
  masterKey: string | undefined;
  logLevel: string;
  /** How old a submit's timestampMs may be. */
  timestampMaxAgeMs: number;
  /** How far in the future a submit's timestampMs may be (clock skew). */
  timestampMaxFutureMs: number;
  /** Largest accepted request body. */
  bodyLimitBytes: number;
  /** Development only: webhook URLs may be http(s) on loopback addresses (and only there). */
  webhooksAllowLoopback: boolean;
  /** Total deadline of one delivery attempt (connect, headers and whole answer). */
  webhooksTimeoutMs: number;
  /** Webhook deliveries are sent on a worker thread (false: on the main thread). */
  webhookWorker: boolean;
  /** Delay before each attempt of a delivery (jittered 80–120 %); its length is the attempt count. */
  webhooksRetrySchedule: number[];
  /** Attempts per delivery when set: cuts the schedule short or repeats its last delay. */
  webhooksMaxAttempts: number | undefined;
  /** An endpoint failing continuously this long is disabled. */
  webhooksDisableAfterMs: number;
  /** PostgreSQL: connecting, and waiting for a pooled connection; also bounds /readyz. */
  dbConnectTimeoutMs: number;
  /** PostgreSQL statement_timeout (the client itself gives up 1 s later). */
  dbStatementTimeoutMs: number;
  /** PostgreSQL: connections this process keeps (undefined: sized for the machine, store/db.ts). */
  dbPoolSize: number | undefined;
  /** PostgreSQL idle_in_transaction_session_timeout. */
  dbIdleInTransactionTimeoutMs: number;
  /** SQLite: how long a write waits (asynchronously) for a lock held by another process. */
  sqliteLockTimeoutMs: number;
  /** SIGTERM/SIGINT: how long in-flight requests may take before connections are cut. */
  shutdownGraceMs: number;
  /** OTP mail: an smtp:// or smtps:// URL (credentials in the URL are secrets: env only). */
  smtpUrl: string | undefined;
  /** The From address of OTP mail when the request names none. */
  smtpFrom: string;
  /** OTP SMS: a Twilio-compatible Messages endpoint (form POST To/From/Body, basic auth). */
  smsUrl: string | undefined;
  smsFrom: string | undefined;
  /** Basic-auth user and password for the SMS endpoint (env only). */
  smsUsername: string | undefined;
  smsPassword: string | undefined;
  /** Development only: "log" writes OTP messages to the service log instead of sending them. */
  otpDevTransport: "log" | undefined;
  /** Domains a top-level organization may send OTP mail From / Reply-To (undefined: the domain of smtpFrom). */
  mailSenderDomains: string[] | undefined;
  /** Wrong OTP codes per contact per guess window, across codes and organizations. */
  otpGuessesPerContact: number;
  otpGuessWindowSeconds: number;
  /** init_otp per contact per hour, across organizations. */
  otpInitiationsPerContactPerHour: number;
  /** OTP messages per recipient per hour, and per organization tree per hour. */
  otpSendsPerRecipientPerHour: number;
  otpSendsPerOrganizationPerHour: number;
  /** WebAuthn relying party id expected in passkey assertions (e.g. "example.com"); unset = any. */
  webauthnRpId: string | undefined;
  /** Exact origins accepted in passkey clientDataJSON; empty = any. */
  webauthnOrigins: string[];
  /** The longest session (login expirationSeconds) granted. */
  sessionMaxSeconds: number;
  /** Whose X-Forwarded-For is believed: off, a number of hops, or proxy addresses/CIDRs (network/trust-proxy.ts). */
  trustProxy: TrustProxy;
  /** Shares rate-limit buckets between processes (redis://…); unset: each process counts alone. */
  redisUrl: string | undefined;
  /** Exact browser origins allowed by CORS; empty: none. */
  corsOrigins: string[];
  /** Requests per second (bursts of twice that); 0 switches the limit off. */
  rateLimitCredential: number;
  rateLimitOrganization: number;
  rateLimitAddress: number;
  /** What runs TVC deployments: "local" (child processes of this service) is the only one built in. */
  tvcRuntime: "local";
  /** The TVC ingress (http://<host>:<port>/apps/<appId>/…); 0 = any free port. */
  tvcIngressPort: number;
  /** Between TVC reconcile passes. */
  tvcReconcileMs: number;
  /** host[:port] clients reach the TVC ingress at (publicDomain of apps); default: localhost and the ingress's port. */
  tvcPublicAddress: string | undefined;
  /**
   * The only directory TVC images may come from (its real path, links resolved). Unset: TVC is
   * off — every TVC activity is refused and nothing runs (docs/tvc-isolation.md §1).
   */
  tvcImageRoot: string | undefined;
  /** The unprivileged user replicas run as when the service runs as root: a name or uid[:gid]. */
  tvcUser: string;
  /** How replicas are confined: "auto" (bwrap when it works here), "bwrap", or "none" (docs/tvc-isolation.md §3). */
  tvcSandbox: "auto" | "bwrap" | "none";
  /** The issuer of Sigil's OIDC tokens and base of its discovery document (never the bind address); unset: http://localhost:<port>. */
  publicUrl: string | undefined;
  /** JSON file overriding OAuth provider endpoints and listing trusted OIDC issuers (auth/oauth/configure.ts). */
  oauthProvidersFile: string | undefined;
  /** Deadline of one OAuth provider or JWKS call. */
  oauthTimeoutMs: number;
  /** Development only: OAuth providers and issuers on loopback addresses (http allowed there). */
  oauthAllowLoopback: boolean;
}

interface Knob {
  env: string;
  flag: string;
  parse: (v: string) => unknown;
  key: keyof Config;
  secretFromFlag?: false;
}

function int(name: string, min: number, max: number) {
  return (v: string): number => {
    if (!/^\d+$/.test(v)) throw new Error(`${name} must be an integer, got ${JSON.stringify(v)}`);
    const n = Number(v);
    if (n < min || n > max) throw new Error(`${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  };
}
const str = (v: string) => v;
const list = (v: string): string[] => v.split(",").map((s) => s.trim()).filter((s) => s !== "");
function url(name: string, protocols: readonly string[]) {
  return (v: string): string => {
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      throw new Error(`${name} must be a URL`);
    }
    if (!protocols.includes(u.protocol)) throw new Error(`${name} must use ${protocols.join(" or ")}`);
    return v;
  };
}
function bool(name: string) {
  return (v: string): boolean => {
    if (v === "true" || v === "1") return true;
    if (v === "false" || v === "0") return false;
    throw new Error(`${name} must be true or false, got ${JSON.stringify(v)}`);
  };
}

/** An issuer URL: http(s), no credentials, query or fragment; kept without a trailing slash (it is compared as a string). */
function publicUrl(v: string): string {
  url("SIGIL_PUBLIC_URL", ["http:", "https:"])(v);
  const u = new URL(v);
  if (u.username || u.password || u.search || u.hash) throw new Error("SIGIL_PUBLIC_URL must not contain credentials, a query or a fragment");
  return v.replace(/\/+$/, "");
}

const KNOBS: Knob[] = [
  { env: "PORT", flag: "--port", key: "port", parse: int("PORT", 0, 65535) },
  { env: "HOST", flag: "--host", key: "host", parse: str },
  { env: "SIGIL_DATA_DIR", flag: "--data-dir", key: "dataDir", parse: str },
  { env: "DATABASE_URL", flag: "--database-url", key: "databaseUrl", parse: str },
  { env: "LOG_LEVEL", flag: "--log-level", key: "logLevel", parse: str },
  {
    env: "SIGIL_TIMESTAMP_MAX_AGE_SECONDS",
    flag: "--timestamp-max-age-seconds",
    key: "timestampMaxAgeMs",
    parse: (v) => int("SIGIL_TIMESTAMP_MAX_AGE_SECONDS", 1, 7 * 86400)(v) * 1000,
  },
  {
    env: "SIGIL_TIMESTAMP_MAX_FUTURE_SECONDS",
    flag: "--timestamp-max-future-seconds",
    key: "timestampMaxFutureMs",
    parse: (v) => int("SIGIL_TIMESTAMP_MAX_FUTURE_SECONDS", 0, 3600)(v) * 1000,
  },
  {
    env: "SIGIL_BODY_LIMIT_BYTES",
    flag: "--body-limit-bytes",
    key: "bodyLimitBytes",
    parse: int("SIGIL_BODY_LIMIT_BYTES", 1024, 64 * 1024 * 1024),
  },
  {
    env: "SIGIL_WEBHOOKS_ALLOW_LOOPBACK",
    flag: "--webhooks-allow-loopback",
    key: "webhooksAllowLoopback",
    parse: bool("SIGIL_WEBHOOKS_ALLOW_LOOPBACK"),
  },
  { env: "SIGIL_WEBHOOK_WORKER", flag: "--webhook-worker", key: "webhookWorker", parse: bool("SIGIL_WEBHOOK_WORKER") },
  { env: "SIGIL_WEBHOOKS_TIMEOUT_MS", flag: "--webhooks-timeout-ms", key: "webhooksTimeoutMs", parse: int("SIGIL_WEBHOOKS_TIMEOUT_MS", 100, 120_000) },
  {
    env: "SIGIL_WEBHOOKS_RETRY_SCHEDULE",
    flag: "--webhooks-retry-schedule",
    key: "webhooksRetrySchedule",
    parse: (v) => parseSchedule(v, "SIGIL_WEBHOOKS_RETRY_SCHEDULE"),
  },
  { env: "SIGIL_WEBHOOKS_MAX_ATTEMPTS", flag: "--webhooks-max-attempts", key: "webhooksMaxAttempts", parse: int("SIGIL_WEBHOOKS_MAX_ATTEMPTS", 1, 50) },
  {
    env: "SIGIL_WEBHOOKS_DISABLE_AFTER",
    flag: "--webhooks-disable-after",
    key: "webhooksDisableAfterMs",
    parse: (v) => {
      const ms = parseDuration(v, "SIGIL_WEBHOOKS_DISABLE_AFTER");
      if (ms < 1000 || ms > 365 * 86_400_000) throw new Error("SIGIL_WEBHOOKS_DISABLE_AFTER must be between 1s and 365d");
      return ms;
    },
  },
  { env: "SIGIL_DB_CONNECT_TIMEOUT_MS", flag: "--db-connect-timeout-ms", key: "dbConnectTimeoutMs", parse: int("SIGIL_DB_CONNECT_TIMEOUT_MS", 100, 600_000) },
  { env: "SIGIL_DB_STATEMENT_TIMEOUT_MS", flag: "--db-statement-timeout-ms", key: "dbStatementTimeoutMs", parse: int("SIGIL_DB_STATEMENT_TIMEOUT_MS", 100, 3_600_000) },
  { env: "SIGIL_DB_POOL_SIZE", flag: "--db-pool-size", key: "dbPoolSize", parse: int("SIGIL_DB_POOL_SIZE", 1, 1000) },
  {
    env: "SIGIL_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS",
    flag: "--db-idle-in-transaction-timeout-ms",
    key: "dbIdleInTransactionTimeoutMs",
    parse: int("SIGIL_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS", 100, 3_600_000),
  },
  { env: "SIGIL_SQLITE_LOCK_TIMEOUT_MS", flag: "--sqlite-lock-timeout-ms", key: "sqliteLockTimeoutMs", parse: int("SIGIL_SQLITE_LOCK_TIMEOUT_MS", 0, 600_000) },
  { env: "SIGIL_SHUTDOWN_GRACE_MS", flag: "--shutdown-grace-ms", key: "shutdownGraceMs", parse: int("SIGIL_SHUTDOWN_GRACE_MS", 0, 3_600_000) },
  { env: "SMTP_URL", flag: "--smtp-url", key: "smtpUrl", parse: url("SMTP_URL", ["smtp:", "smtps:"]), secretFromFlag: false },
  { env: "SIGIL_SMTP_FROM", flag: "--smtp-from", key: "smtpFrom", parse: str },
  { env: "SIGIL_SMS_URL", flag: "--sms-url", key: "smsUrl", parse: url("SIGIL_SMS_URL", ["http:", "https:"]) },
  { env: "SIGIL_SMS_FROM", flag: "--sms-from", key: "smsFrom", parse: str },
  { env: "SIGIL_SMS_USERNAME", flag: "--sms-username", key: "smsUsername", parse: str, secretFromFlag: false },
  { env: "SIGIL_SMS_PASSWORD", flag: "--sms-password", key: "smsPassword", parse: str, secretFromFlag: false },
  {
    env: "SIGIL_OTP_DEV_TRANSPORT",
    flag: "--otp-dev-transport",
    key: "otpDevTransport",
    parse: (v) => {
      if (v !== "log") throw new Error(`SIGIL_OTP_DEV_TRANSPORT must be "log", got ${JSON.stringify(v)}`);
      return v;
    },
  },
  { env: "SIGIL_MAIL_SENDER_DOMAINS", flag: "--mail-sender-domains", key: "mailSenderDomains", parse: senderDomains },
  { env: "SIGIL_OTP_GUESSES_PER_CONTACT", flag: "--otp-guesses-per-contact", key: "otpGuessesPerContact", parse: int("SIGIL_OTP_GUESSES_PER_CONTACT", 1, 1000) },
  { env: "SIGIL_OTP_GUESS_WINDOW_SECONDS", flag: "--otp-guess-window-seconds", key: "otpGuessWindowSeconds", parse: int("SIGIL_OTP_GUESS_WINDOW_SECONDS", 1, 86400) },
  {
    env: "SIGIL_OTP_INITIATIONS_PER_CONTACT_PER_HOUR",
    flag: "--otp-initiations-per-contact-per-hour",
    key: "otpInitiationsPerContactPerHour",
    parse: int("SIGIL_OTP_INITIATIONS_PER_CONTACT_PER_HOUR", 1, 1000),
  },
  {
    env: "SIGIL_OTP_SENDS_PER_RECIPIENT_PER_HOUR",
    flag: "--otp-sends-per-recipient-per-hour",
    key: "otpSendsPerRecipientPerHour",
    parse: int("SIGIL_OTP_SENDS_PER_RECIPIENT_PER_HOUR", 1, 1000),
  },
  {
    env: "SIGIL_OTP_SENDS_PER_ORGANIZATION_PER_HOUR",
    flag: "--otp-sends-per-organization-per-hour",
    key: "otpSendsPerOrganizationPerHour",
    parse: int("SIGIL_OTP_SENDS_PER_ORGANIZATION_PER_HOUR", 1, 100_000),
  },
  { env: "SIGIL_WEBAUTHN_RP_ID", flag: "--webauthn-rp-id", key: "webauthnRpId", parse: str },
  { env: "SIGIL_WEBAUTHN_ORIGINS", flag: "--webauthn-origins", key: "webauthnOrigins", parse: list },
  { env: "SIGIL_SESSION_MAX_SECONDS", flag: "--session-max-seconds", key: "sessionMaxSeconds", parse: int("SIGIL_SESSION_MAX_SECONDS", 60, 365 * 86400) },
  { env: "SIGIL_TRUST_PROXY", flag: "--trust-proxy", key: "trustProxy", parse: parseTrustProxy },
  // The URL may carry a password: env only.
  { env: "REDIS_URL", flag: "--redis-url", key: "redisUrl", parse: url("REDIS_URL", ["redis:", "rediss:"]), secretFromFlag: false },
  { env: "SIGIL_CORS_ORIGINS", flag: "--cors-origins", key: "corsOrigins", parse: parseCorsOrigins },
  { env: "SIGIL_RATE_LIMIT_CREDENTIAL", flag: "--rate-limit-credential", key: "rateLimitCredential", parse: int("SIGIL_RATE_LIMIT_CREDENTIAL", 0, 1_000_000) },
  { env: "SIGIL_RATE_LIMIT_ORGANIZATION", flag: "--rate-limit-organization", key: "rateLimitOrganization", parse: int("SIGIL_RATE_LIMIT_ORGANIZATION", 0, 1_000_000) },
  { env: "SIGIL_RATE_LIMIT_ADDRESS", flag: "--rate-limit-address", key: "rateLimitAddress", parse: int("SIGIL_RATE_LIMIT_ADDRESS", 0, 1_000_000) },
  {
    env: "SIGIL_TVC_RUNTIME",
    flag: "--tvc-runtime",
    key: "tvcRuntime",
    parse: (v) => {
      if (v !== "local") throw new Error(`SIGIL_TVC_RUNTIME must be "local" (the only TVC runtime built in), got ${JSON.stringify(v)}`);
      return v;
    },
  },
  { env: "SIGIL_TVC_INGRESS_PORT", flag: "--tvc-ingress-port", key: "tvcIngressPort", parse: int("SIGIL_TVC_INGRESS_PORT", 0, 65535) },
  { env: "SIGIL_TVC_RECONCILE_MS", flag: "--tvc-reconcile-ms", key: "tvcReconcileMs", parse: int("SIGIL_TVC_RECONCILE_MS", 100, 60_000) },
  { env: "SIGIL_TVC_PUBLIC_ADDRESS", flag: "--tvc-public-address", key: "tvcPublicAddress", parse: tvcPublicAddress },
  { env: "SIGIL_TVC_IMAGE_ROOT", flag: "--tvc-image-root", key: "tvcImageRoot", parse: tvcImageRoot },
  {
    env: "SIGIL_TVC_USER",
    flag: "--tvc-user",
    key: "tvcUser",
    parse: (v) => {
      if (!/^[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?$|^\d{1,10}(:\d{1,10})?$/.test(v)) throw new Error(`SIGIL_TVC_USER must be a user name or uid[:gid], got ${JSON.stringify(v.slice(0, 100))}`);
      return v;
    },
  },
  {
    env: "SIGIL_TVC_SANDBOX",
    flag: "--tvc-sandbox",
    key: "tvcSandbox",
    parse: (v) => {
      if (v !== "auto" && v !== "bwrap" && v !== "none") throw new Error(`SIGIL_TVC_SANDBOX must be auto, bwrap or none, got ${JSON.stringify(v.slice(0, 100))}`);
      return v;
    },
  },
  { env: "SIGIL_PUBLIC_URL", flag: "--public-url", key: "publicUrl", parse: publicUrl },
  { env: "SIGIL_OAUTH_PROVIDERS_FILE", flag: "--oauth-providers-file", key: "oauthProvidersFile", parse: str },
  { env: "SIGIL_OAUTH_TIMEOUT_MS", flag: "--oauth-timeout-ms", key: "oauthTimeoutMs", parse: int("SIGIL_OAUTH_TIMEOUT_MS", 100, 120_000) },
  { env: "SIGIL_OAUTH_ALLOW_LOOPBACK", flag: "--oauth-allow-loopback", key: "oauthAllowLoopback", parse: bool("SIGIL_OAUTH_ALLOW_LOOPBACK") },
];

/**
 * Every knob as documented: its environment variable and its flag, `undefined` where only the
 * environment is read (a secret: command lines are visible through `ps`). The master key is
 * read apart from the others (loadConfig) and is env-only.
 */
export const CONFIG_KNOBS: readonly { env: string; flag: string | undefined }[] = [
  ...KNOBS.map((k) => ({ env: k.env, flag: k.secretFromFlag === false ? undefined : k.flag })),
  { env: "SIGIL_MASTER_KEY", flag: undefined },
];

/** Comma-separated mail domains (lower-cased; no addresses, no wildcards). */
function senderDomains(v: string): string[] {
  const domains = list(v).map((d) => d.toLowerCase());
  for (const d of domains) {
    if (!/^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(d)) {
      throw new Error(`SIGIL_MAIL_SENDER_DOMAINS must be comma-separated domain names such as example.com, got ${JSON.stringify(d.slice(0, 100))}`);
    }
  }
  return domains;
}

/** host[:port] with nothing else (no scheme, path or credentials): what an app's publicDomain starts with. */
function tvcPublicAddress(v: string): string {
  if (!/^[A-Za-z0-9.-]{1,253}(:\d{1,5})?$|^\[[0-9A-Fa-f:.]{2,45}\](:\d{1,5})?$/.test(v)) {
    throw new Error(`SIGIL_TVC_PUBLIC_ADDRESS must be host or host:port (no scheme or path), got ${JSON.stringify(v.slice(0, 100))}`);
  }
  return v;
}

/**
 * SIGIL_TVC_IMAGE_ROOT: an existing directory, kept as its real path so that every later
 * "is this image under the root" question compares real paths (docs/tvc-isolation.md §2).
 */
function tvcImageRoot(v: string): string {
  if (!path.isAbsolute(v)) throw new Error(`SIGIL_TVC_IMAGE_ROOT must be an absolute path, got ${JSON.stringify(v.slice(0, 200))}`);
  let real: string;
  try {
    real = fs.realpathSync(v);
  } catch {
    throw new Error(`SIGIL_TVC_IMAGE_ROOT names no existing directory: ${v}`);
  }
  if (!fs.statSync(real).isDirectory()) throw new Error(`SIGIL_TVC_IMAGE_ROOT is not a directory: ${v}`);
  if (real === "/") throw new Error("SIGIL_TVC_IMAGE_ROOT must not be / (every file of the host would be an image)");
  return real;
}

/** `inner` is `outer` or lies below it (both absolute, normalised). */
export function isWithin(outer: string, inner: string): boolean {
  const r = path.relative(outer, inner);
  return r === "" || (r !== ".." && !r.startsWith(".." + path.sep) && !path.isAbsolute(r));
}

export const DEFAULTS: Config = {
  port: 8080,
  host: "0.0.0.0",
  dataDir: "./data",
  databaseUrl: undefined,
  masterKey: undefined,
  logLevel: "info",
  timestampMaxAgeMs: 300_000,
  timestampMaxFutureMs: 60_000,
  bodyLimitBytes: 1024 * 1024,
  webhooksAllowLoopback: false,
  webhooksTimeoutMs: 10_000,
  webhookWorker: true,
  webhooksRetrySchedule: [...DEFAULT_RETRY_SCHEDULE_MS],
  webhooksMaxAttempts: undefined,
  webhooksDisableAfterMs: DEFAULT_DISABLE_AFTER_MS,
  dbConnectTimeoutMs: 5_000,
  dbStatementTimeoutMs: 30_000,
  dbPoolSize: undefined,
  dbIdleInTransactionTimeoutMs: 60_000,
  sqliteLockTimeoutMs: 5_000,
  shutdownGraceMs: 10_000,
  smtpUrl: undefined,
  smtpFrom: "Notifications <no-reply@localhost>",
  smsUrl: undefined,
  smsFrom: undefined,
  smsUsername: undefined,
  smsPassword: undefined,
  otpDevTransport: undefined,
  mailSenderDomains: undefined,
  otpGuessesPerContact: DEFAULT_OTP_LIMITS.guessesPerContact,
  otpGuessWindowSeconds: DEFAULT_OTP_LIMITS.guessWindowSeconds,
  otpInitiationsPerContactPerHour: DEFAULT_OTP_LIMITS.initiationsPerContactPerHour,
  otpSendsPerRecipientPerHour: DEFAULT_OTP_LIMITS.sendsPerRecipientPerHour,
  otpSendsPerOrganizationPerHour: DEFAULT_OTP_LIMITS.sendsPerOrganizationPerHour,
  webauthnRpId: undefined,
  webauthnOrigins: [],
  sessionMaxSeconds: 30 * 86400,
  trustProxy: false,
  redisUrl: undefined,
  corsOrigins: [],
  rateLimitCredential: DEFAULT_RATE_LIMITS.credential,
  rateLimitOrganization: DEFAULT_RATE_LIMITS.organization,
  rateLimitAddress: DEFAULT_RATE_LIMITS.address,
  tvcRuntime: "local",
  tvcIngressPort: 8082,
  tvcReconcileMs: 1000,
  tvcPublicAddress: undefined,
  tvcImageRoot: undefined,
  tvcUser: "nobody",
  tvcSandbox: "auto",
  publicUrl: undefined,
  oauthProvidersFile: undefined,
  oauthTimeoutMs: 10_000,
  oauthAllowLoopback: false,
};

/**
 * Builds the configuration. `argv` may hold other flags and positionals (the CLI's own);
 * only the flags above are read here. The master key is env-only on purpose: command lines
 * are visible to every user of the machine through `ps`.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, argv: string[] = []): Config {
  const cfg: Record<string, unknown> = { ...DEFAULTS };
  for (const knob of KNOBS) {
    const fromEnv = env[knob.env];
    if (fromEnv !== undefined && fromEnv !== "") cfg[knob.key] = knob.parse(fromEnv);
    const i = argv.indexOf(knob.flag);
    if (i >= 0) {
      if (knob.secretFromFlag === false) throw new Error(`${knob.flag}: ${knob.env} may hold a secret; set it in the environment, not on the command line`);
      const v = argv[i + 1];
      if (v === undefined) throw new Error(`${knob.flag} needs a value`);
      cfg[knob.key] = knob.parse(v);
    }
  }
  const masterKey = env.SIGIL_MASTER_KEY;
  cfg.masterKey = masterKey && masterKey !== "" ? masterKey : undefined;
  const out = cfg as unknown as Config;
  out.dataDir = path.resolve(out.dataDir);
  if (out.tvcImageRoot) {
    // A replica reads its image: the data directory must never be part of one (docs/tvc-isolation.md §2).
    let dataDir = out.dataDir;
    try {
      dataDir = fs.realpathSync(out.dataDir);
    } catch {
      /* not created yet: compare the path as given */
    }
    if (isWithin(out.tvcImageRoot, dataDir) || isWithin(dataDir, out.tvcImageRoot)) {
      throw new Error(`SIGIL_TVC_IMAGE_ROOT (${out.tvcImageRoot}) and SIGIL_DATA_DIR (${dataDir}) must not contain one another`);
    }
  }
  return out;
}
