// Configuration comes from the environment, and `--flag value` on the command line wins over
// it. KNOBS below is the one list of knobs (docs/configuration.md §2): the Config type, the
// defaults, the flags, the env-only rule for secrets and the table of docs/configuration.md §1
// (`npm run docs:config`) are all derived from it. The login methods declare their own knobs
// (src/logins/, docs/logins.md §8.2); KNOBS takes them in where the login rows stand.
import fs from "node:fs";
import path from "node:path";
import { DEFAULT_DISABLE_AFTER_MS, DEFAULT_RETRY_SCHEDULE_MS, parseDuration, parseSchedule } from "./webhooks/retry-schedule.ts";
import { parseTrustProxy } from "./network/trust-proxy.ts";
import { DEFAULT_RATE_LIMITS } from "./network/rate-limit.ts";
import { parseCorsOrigins } from "./network/cors.ts";
import { DEFAULT_CONFIG_TTL_MS, parseProxySecret } from "./auth-proxy/channel.ts";
import { LOGIN_KNOBS } from "./logins/index.ts";
import { originOf } from "./frames/origins.ts";
import { DEFAULT_LIMITS } from "./policy/budget.ts";
import { MASTER_KEY_SOURCE_NAMES } from "./crypto/master-key-source-names.ts";
import { bool, defaultsOf, defineKnob, int, list, readKnobs, secondsAsMs, str, url, type ConfigOf } from "./config/define.ts";

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

/** One of the given names. */
function oneOf<const N extends string>(name: string, names: readonly N[]) {
  return (v: string): N => {
    if ((names as readonly string[]).includes(v)) return v as N;
    throw new Error(`${name} must be one of ${names.join(", ")}, got ${JSON.stringify(v.slice(0, 100))}`);
  };
}

/** `on` / `off` (also true/false, 1/0). */
function onOff(name: string) {
  return (v: string): boolean => {
    if (v === "on" || v === "true" || v === "1") return true;
    if (v === "off" || v === "false" || v === "0") return false;
    throw new Error(`${name} must be on or off, got ${JSON.stringify(v.slice(0, 100))}`);
  };
}

/** An http(s) base URL with no path, query, fragment or credentials; kept without a trailing slash. */
function apiBaseUrl(v: string): string {
  url("SIGIL_AUTH_PROXY_API_URL", ["http:", "https:"])(v);
  const u = new URL(v);
  if (u.username || u.password || u.search || u.hash || (u.pathname !== "/" && u.pathname !== "")) {
    throw new Error("SIGIL_AUTH_PROXY_API_URL must be scheme://host[:port] with no path, query, fragment or credentials");
  }
  return u.origin;
}

/** The knobs, in the order of the table of docs/configuration.md §1. */
export const KNOBS = [
  defineKnob({
    env: "PORT",
    flag: "--port",
    key: "port",
    parse: int("PORT", 0, 65535),
    default: 8080,
    doc: { meaning: "API port (`0` picks a free one; the `sigil listening` log line gives it)" },
  }),
  defineKnob({ env: "HOST", flag: "--host", key: "host", parse: str, default: "0.0.0.0", doc: { meaning: "Listen address" } }),
  defineKnob({
    env: "SIGIL_DATA_DIR",
    flag: "--data-dir",
    key: "dataDir",
    parse: str,
    // Resolved against the working directory by loadConfig.
    default: "./data",
    doc: {
      meaning:
        "Embedded store (`sigil.db`, SQLite in WAL mode) and, when no master key is configured, `master.key`. Made 0700, its files 0600 (tightened on every start; docs/tvc-isolation.md §4)",
    },
  }),
  defineKnob({
    env: "DATABASE_URL",
    flag: "--database-url",
    key: "databaseUrl",
    parse: str,
    default: undefined,
    doc: { meaning: "PostgreSQL connection string; when set, PostgreSQL is the store instead of SQLite" },
  }),
  // Hex or base64 of 32 bytes, decoded by resolveMasterKey. No flag at all: `--master-key` is
  // not even looked at.
  defineKnob({
    env: "SIGIL_MASTER_KEY",
    secret: true,
    key: "masterKey",
    parse: str,
    default: undefined,
    computedBy: "resolveMasterKey (src/crypto/master-key-source.ts): generated once into <data dir>/master.key",
    doc: {
      meaning:
        "32-byte key-encryption key, 64 hex chars or base64. Secrets at rest are envelope-encrypted under it. When absent, a key is generated once into `<data dir>/master.key` (mode 0600) with a warning. Set it in production and on every node of a multi-node deployment. A key that does not match the database is refused at startup. Never accepted as a flag (command lines are visible in `ps`).",
      default: "generated",
    },
  }),
  defineKnob({
    env: "SIGIL_MASTER_KEY_PREVIOUS",
    secret: true,
    key: "masterKeyPrevious",
    parse: str,
    default: undefined,
    doc: {
      meaning:
        "During a rotation ([docs/custody.md §4](custody.md#4-rotation)): the previous key held in memory (hex or base64 of 32 bytes; for `file` → `pkcs11`, the content of `master.key`). Values sealed under it keep opening; `sigil master-key rotate` re-wraps them under the current key; then unset it",
    },
  }),
  defineKnob({
    env: "SIGIL_PKCS11_PREVIOUS_KEY_LABEL",
    flag: "--pkcs11-previous-key-label",
    key: "pkcs11PreviousKeyLabel",
    parse: str,
    default: undefined,
    doc: {
      meaning:
        "During a rotation on a PKCS#11 token ([docs/custody.md §4](custody.md#4-rotation)): the label of the previous key on the same token; values wrapped by it keep opening until `sigil master-key rotate` has re-wrapped them",
    },
  }),
  defineKnob({
    env: "SIGIL_MASTER_KEY_SOURCE",
    flag: "--master-key-source",
    key: "masterKeySource",
    parse: oneOf("SIGIL_MASTER_KEY_SOURCE", MASTER_KEY_SOURCE_NAMES),
    default: undefined,
    doc: {
      meaning:
        "Where the key-encryption key lives ([docs/custody.md §1](custody.md#1-the-sources)): `env` (SIGIL_MASTER_KEY), `file` (`<data dir>/master.key`) or `pkcs11` (a non-extractable AES-256 key on a PKCS#11 token; SIGIL_MASTER_KEY must then be unset)",
      default: "`env` when SIGIL_MASTER_KEY is set, else `file`",
    },
  }),
  defineKnob({
    env: "SIGIL_PKCS11_LIBRARY",
    flag: "--pkcs11-library",
    key: "pkcs11Library",
    parse: str,
    default: undefined,
    doc: { meaning: "`pkcs11`: path of the token's PKCS#11 library (SoftHSM2: `/usr/lib/softhsm/libsofthsm2.so`)" },
  }),
  defineKnob({
    env: "SIGIL_PKCS11_TOKEN_LABEL",
    flag: "--pkcs11-token-label",
    key: "pkcs11TokenLabel",
    parse: str,
    default: undefined,
    doc: { meaning: "`pkcs11`: the label of the token holding the key" },
  }),
  defineKnob({
    env: "SIGIL_PKCS11_KEY_LABEL",
    flag: "--pkcs11-key-label",
    key: "pkcs11KeyLabel",
    parse: str,
    default: "sigil-kek",
    doc: { meaning: "`pkcs11`: the label (CKA_LABEL) of the AES-256 key-encryption key on the token; unique among its AES keys" },
  }),
  defineKnob({
    env: "SIGIL_PKCS11_PIN",
    secret: true,
    key: "pkcs11Pin",
    parse: str,
    default: undefined,
    doc: { meaning: "`pkcs11`: the token's user PIN. Environment only, never a flag; or use SIGIL_PKCS11_PIN_FILE" },
  }),
  defineKnob({
    env: "SIGIL_PKCS11_PIN_FILE",
    flag: "--pkcs11-pin-file",
    key: "pkcs11PinFile",
    parse: str,
    default: undefined,
    doc: { meaning: "`pkcs11`: a file holding the user PIN (its first line; keep it 0600), instead of SIGIL_PKCS11_PIN" },
  }),
  defineKnob({
    env: "SIGIL_PKCS11_MECHANISM",
    flag: "--pkcs11-mechanism",
    key: "pkcs11Mechanism",
    parse: oneOf("SIGIL_PKCS11_MECHANISM", ["auto", "aes-gcm", "aes-kw"] as const),
    default: "auto",
    doc: {
      meaning:
        "`pkcs11`: what wraps new data keys: `aes-gcm` (CKM_AES_GCM, bound to the row), `aes-kw` (CKM_AES_KEY_WRAP_PAD) or `auto` (GCM when the token offers it); values wrapped either way keep opening ([docs/custody.md §1](custody.md#1-the-sources))",
    },
  }),
  defineKnob({
    env: "SIGIL_PKCS11_TIMEOUT_MS",
    flag: "--pkcs11-timeout-ms",
    key: "pkcs11TimeoutMs",
    parse: int("SIGIL_PKCS11_TIMEOUT_MS", 50, 60_000),
    default: 2_000,
    doc: {
      meaning:
        "`pkcs11`: how long one token call may take; past it the request needing the secret is answered 503 and the token's thread is replaced ([docs/custody.md §3](custody.md#3-when-the-token-is-away))",
    },
  }),
  defineKnob({
    env: "LOG_LEVEL",
    flag: "--log-level",
    key: "logLevel",
    parse: str,
    default: "info",
    doc: {
      meaning: "pino level (`fatal` … `trace`); request logs carry request id, organization id, activity id — never stamps or secrets",
    },
  }),
  defineKnob({
    env: "SIGIL_TIMESTAMP_MAX_AGE_SECONDS",
    flag: "--timestamp-max-age-seconds",
    key: "timestampMaxAgeMs",
    parse: secondsAsMs("SIGIL_TIMESTAMP_MAX_AGE_SECONDS", 1, 7 * 86400),
    default: 300_000,
    doc: { meaning: "How old a submit's `timestampMs` may be", default: "`300`" },
  }),
  defineKnob({
    env: "SIGIL_TIMESTAMP_MAX_FUTURE_SECONDS",
    flag: "--timestamp-max-future-seconds",
    key: "timestampMaxFutureMs",
    parse: secondsAsMs("SIGIL_TIMESTAMP_MAX_FUTURE_SECONDS", 0, 3600),
    default: 60_000,
    doc: { meaning: "How far ahead of server time `timestampMs` may be", default: "`60`" },
  }),
  defineKnob({
    env: "SIGIL_BODY_LIMIT_BYTES",
    flag: "--body-limit-bytes",
    key: "bodyLimitBytes",
    parse: int("SIGIL_BODY_LIMIT_BYTES", 1024, 64 * 1024 * 1024),
    default: 1024 * 1024,
    doc: { meaning: "Largest request body (larger → HTTP 413)" },
  }),
  defineKnob({
    env: "SIGIL_SHUTDOWN_GRACE_MS",
    flag: "--shutdown-grace-ms",
    key: "shutdownGraceMs",
    parse: int("SIGIL_SHUTDOWN_GRACE_MS", 0, 3_600_000),
    default: 10_000,
    doc: {
      meaning:
        "On SIGTERM/SIGINT, how long requests in flight may take to finish; then remaining connections are closed and the process exits with code 1 ([docs/operations.md §1](operations.md#1-shutdown))",
    },
  }),
  defineKnob({
    env: "SIGIL_DB_CONNECT_TIMEOUT_MS",
    flag: "--db-connect-timeout-ms",
    key: "dbConnectTimeoutMs",
    parse: int("SIGIL_DB_CONNECT_TIMEOUT_MS", 100, 600_000),
    default: 5_000,
    doc: { meaning: "PostgreSQL: opening a connection, and waiting for a free pooled one; also the longest `/readyz` takes" },
  }),
  defineKnob({
    env: "SIGIL_DB_STATEMENT_TIMEOUT_MS",
    flag: "--db-statement-timeout-ms",
    key: "dbStatementTimeoutMs",
    parse: int("SIGIL_DB_STATEMENT_TIMEOUT_MS", 100, 3_600_000),
    default: 30_000,
    doc: { meaning: "PostgreSQL `statement_timeout`; a database that does not answer at all is given up 1 s later" },
  }),
  defineKnob({
    env: "SIGIL_DB_POOL_SIZE",
    flag: "--db-pool-size",
    key: "dbPoolSize",
    parse: int("SIGIL_DB_POOL_SIZE", 1, 1000),
    default: undefined,
    computedBy: "defaultPoolSize (src/store/postgres/index.ts): sized for the machine's cores",
    doc: {
      meaning:
        "PostgreSQL connections per process (1–1000). With N API nodes keep N × this (plus one per node for webhook change notices) under `max_connections`",
      default: "4 per core, 8–20",
    },
  }),
  defineKnob({
    env: "SIGIL_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS",
    flag: "--db-idle-in-transaction-timeout-ms",
    key: "dbIdleInTransactionTimeoutMs",
    parse: int("SIGIL_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS", 100, 3_600_000),
    default: 60_000,
    doc: { meaning: "PostgreSQL `idle_in_transaction_session_timeout`" },
  }),
  defineKnob({
    env: "SIGIL_SQLITE_LOCK_TIMEOUT_MS",
    flag: "--sqlite-lock-timeout-ms",
    key: "sqliteLockTimeoutMs",
    parse: int("SIGIL_SQLITE_LOCK_TIMEOUT_MS", 0, 600_000),
    default: 5_000,
    doc: {
      meaning:
        "SQLite: how long a write waits for a lock held by another process (`sigil init`, a backup) before answering 503; the wait does not block the server",
    },
  }),
  defineKnob({
    env: "SIGIL_WEBHOOKS_ALLOW_LOOPBACK",
    flag: "--webhooks-allow-loopback",
    key: "webhooksAllowLoopback",
    parse: bool("SIGIL_WEBHOOKS_ALLOW_LOOPBACK"),
    default: false,
    doc: {
      meaning:
        "**Development only.** Webhook URLs may be `http://` or `https://` on loopback addresses (127.0.0.0/8, ::1, `localhost`) — and only there; everything else still needs https to a public address. Logged as a warning at startup.",
    },
  }),
  defineKnob({
    env: "SIGIL_WEBHOOK_WORKER",
    flag: "--webhook-worker",
    key: "webhookWorker",
    parse: bool("SIGIL_WEBHOOK_WORKER"),
    default: true,
    doc: {
      meaning:
        "Sign and send webhook deliveries on a worker thread (its own event loop; claims and records stay on the main thread). `false`: send on the main thread. A worker that dies is replaced (lanes given back, sent again with the same event ids)",
    },
  }),
  defineKnob({
    env: "SIGIL_WEBHOOKS_TIMEOUT_MS",
    flag: "--webhooks-timeout-ms",
    key: "webhooksTimeoutMs",
    parse: int("SIGIL_WEBHOOKS_TIMEOUT_MS", 100, 120_000),
    default: 10_000,
    doc: {
      meaning:
        "Total deadline of one delivery attempt: name resolution, connect, headers and the whole answer (a receiver that trickles bytes is cut at it, and the attempt is retried). A claimed delivery's lease is this plus 5 s, so no other worker can take it while an attempt runs",
    },
  }),
  defineKnob({
    env: "SIGIL_WEBHOOKS_RETRY_SCHEDULE",
    flag: "--webhooks-retry-schedule",
    key: "webhooksRetrySchedule",
    parse: (v) => parseSchedule(v, "SIGIL_WEBHOOKS_RETRY_SCHEDULE"),
    default: [...DEFAULT_RETRY_SCHEDULE_MS],
    doc: {
      meaning:
        "Delay before each attempt of a delivery, comma-separated (`ms` `s` `m` `h` `d`, bare numbers are ms; 1–50 entries, each ≤ 7 d), each jittered to 80–120 %. The default spans ~27.6 h; its length is the number of attempts",
      default: "`0,5s,5m,30m,2h,5h,10h,10h`",
    },
  }),
  defineKnob({
    env: "SIGIL_WEBHOOKS_MAX_ATTEMPTS",
    flag: "--webhooks-max-attempts",
    key: "webhooksMaxAttempts",
    parse: int("SIGIL_WEBHOOKS_MAX_ATTEMPTS", 1, 50),
    default: undefined,
    computedBy: "effectiveSchedule (src/webhooks/dispatcher.ts): the retry schedule's length",
    doc: { meaning: "Attempts per delivery: cuts the schedule short, or repeats its last delay (1–50)", default: "the schedule's length" },
  }),
  defineKnob({
    env: "SIGIL_WEBHOOKS_DISABLE_AFTER",
    flag: "--webhooks-disable-after",
    key: "webhooksDisableAfterMs",
    parse: (v) => {
      const ms = parseDuration(v, "SIGIL_WEBHOOKS_DISABLE_AFTER");
      if (ms < 1000 || ms > 365 * 86_400_000) throw new Error("SIGIL_WEBHOOKS_DISABLE_AFTER must be between 1s and 365d");
      return ms;
    },
    default: DEFAULT_DISABLE_AFTER_MS,
    doc: {
      meaning: "An endpoint whose every attempt has failed for this long (no success in between) is disabled, with its reason (1s–365d)",
      default: "`5d`",
    },
  }),
  defineKnob({
    env: "SIGIL_TRUST_PROXY",
    flag: "--trust-proxy",
    key: "trustProxy",
    parse: parseTrustProxy,
    default: false,
    doc: {
      meaning:
        "Whose `X-Forwarded-For` is believed for the client address: off (`false`/`0`: the socket peer), a number of hops (`1`: the nearest proxy; the client is the address it forwarded), or comma-separated proxy addresses/CIDRs (only hops from these are believed). Needed behind a load balancer, or every client appears as the balancer (allowlists and the per-address limit then see one address)",
      default: "off",
    },
  }),
  // The URL may carry a password.
  defineKnob({
    env: "REDIS_URL",
    flag: "--redis-url",
    secret: true,
    key: "redisUrl",
    parse: url("REDIS_URL", ["redis:", "rediss:"]),
    default: undefined,
    doc: {
      meaning:
        "`redis://…` / `rediss://…`: rate-limit buckets shared by every process. Without it each process counts alone (N processes admit up to N× the limits). If Redis is unreachable, each process falls back to its own buckets and logs a warning (at most every 10 s)",
    },
  }),
  defineKnob({
    env: "SIGIL_CORS_ORIGINS",
    flag: "--cors-origins",
    key: "corsOrigins",
    parse: parseCorsOrigins,
    default: [],
    doc: {
      meaning:
        "Comma-separated exact origins (`https://app.example.com`) allowed to call the API from a browser; the preflight allows `content-type`, `x-client-version`, `x-stamp`, `x-stamp-webauthn`, `x-stamp-attested`, `x-session` (every stamp header), methods GET and POST, no credentials, max-age 600",
      default: "none",
    },
  }),
  defineKnob({
    env: "SIGIL_RATE_LIMIT_CREDENTIAL",
    flag: "--rate-limit-credential",
    key: "rateLimitCredential",
    parse: int("SIGIL_RATE_LIMIT_CREDENTIAL", 0, 1_000_000),
    default: DEFAULT_RATE_LIMITS.credential,
    doc: { meaning: "Requests per second per credential (API key, session key, passkey), bursts of twice that; `0` off" },
  }),
  defineKnob({
    env: "SIGIL_RATE_LIMIT_ORGANIZATION",
    flag: "--rate-limit-organization",
    key: "rateLimitOrganization",
    parse: int("SIGIL_RATE_LIMIT_ORGANIZATION", 0, 1_000_000),
    default: DEFAULT_RATE_LIMITS.organization,
    doc: { meaning: "Requests per second per organization of the signing credential, bursts ×2; `0` off" },
  }),
  defineKnob({
    env: "SIGIL_RATE_LIMIT_ADDRESS",
    flag: "--rate-limit-address",
    key: "rateLimitAddress",
    parse: int("SIGIL_RATE_LIMIT_ADDRESS", 0, 1_000_000),
    default: DEFAULT_RATE_LIMITS.address,
    doc: {
      meaning:
        "Requests per second per client address (IPv4: per address; IPv6: per /64 — docs/sessions-and-network.md), checked before anything else (unauthenticated requests included; not `/healthz`, `/readyz`, `/metrics`), bursts ×2; `0` off",
    },
  }),
  defineKnob({
    env: "SIGIL_POLICY_MAX_STEPS",
    flag: "--policy-max-steps",
    key: "policyMaxSteps",
    parse: int("SIGIL_POLICY_MAX_STEPS", 1_000, 100_000_000),
    default: DEFAULT_LIMITS.steps,
    doc: {
      meaning:
        "Evaluation budget of one policy, session scope or MFA condition, in steps (nodes evaluated, list elements scanned); past it the policy's outcome is `OUTCOME_ERROR` and the activity is refused (docs/policy-language.md §11)",
    },
  }),
  defineKnob({
    env: "SIGIL_POLICY_MAX_PASS_STEPS",
    flag: "--policy-max-pass-steps",
    key: "policyMaxPassSteps",
    parse: int("SIGIL_POLICY_MAX_PASS_STEPS", 1_000, 1_000_000_000),
    default: DEFAULT_LIMITS.passSteps,
    doc: {
      meaning:
        "Evaluation budget of a whole pass (every policy of an activity's organization, every MFA condition of a user), in steps (docs/policy-language.md §11)",
    },
  }),
  defineKnob({
    env: "SIGIL_POLICY_MAX_ITERATIONS",
    flag: "--policy-max-iterations",
    key: "policyMaxIterations",
    parse: int("SIGIL_POLICY_MAX_ITERATIONS", 1, 1_000_000_000),
    default: DEFAULT_LIMITS.iterations,
    doc: {
      meaning:
        "Static bound on a submitted expression (policy field, session scope, MFA condition): worst-case lambda iterations and list comparisons, the product of list lengths along nested lambdas; past it the activity is refused with 400 (docs/policy-language.md §11.3)",
    },
  }),
  // The login methods' knobs, in LOGIN_METHODS order (src/logins/index.ts; docs/configuration.md §2).
  ...LOGIN_KNOBS,
  defineKnob({
    env: "SIGIL_TVC_RUNTIME",
    flag: "--tvc-runtime",
    key: "tvcRuntime",
    parse: (v): "local" => {
      if (v !== "local") throw new Error(`SIGIL_TVC_RUNTIME must be "local" (the only TVC runtime built in), got ${JSON.stringify(v)}`);
      return v;
    },
    default: "local",
    doc: {
      meaning: "What runs TVC deployments: `local` (child processes of the service) is the only one built in; anything else stops startup",
    },
  }),
  defineKnob({
    env: "SIGIL_TVC_INGRESS_PORT",
    flag: "--tvc-ingress-port",
    key: "tvcIngressPort",
    parse: int("SIGIL_TVC_INGRESS_PORT", 0, 65535),
    default: 8082,
    doc: {
      meaning:
        "Port of the TVC ingress (on `HOST`), `http://<host>:<port>/apps/<appId>/…`; `0` = any free port (logged as `tvcIngressPort`). A taken port is logged and the API runs without the ingress",
    },
  }),
  defineKnob({
    env: "SIGIL_TVC_RECONCILE_MS",
    flag: "--tvc-reconcile-ms",
    key: "tvcReconcileMs",
    parse: int("SIGIL_TVC_RECONCILE_MS", 100, 60_000),
    default: 1000,
    doc: { meaning: "Pause between TVC reconcile passes (100–60000)" },
  }),
  defineKnob({
    env: "SIGIL_TVC_PUBLIC_ADDRESS",
    flag: "--tvc-public-address",
    key: "tvcPublicAddress",
    parse: tvcPublicAddress,
    default: undefined,
    // The ingress port is known only once it listens (SIGIL_TVC_INGRESS_PORT may be 0).
    computedBy: "startTvc (src/tvc/service.ts): localhost and the port the ingress listens on",
    doc: {
      meaning: "`host[:port]` clients reach the ingress at: the start of every app's `publicDomain`",
      default: "`localhost:<ingress port>`",
    },
  }),
  // Unset: TVC is off — every TVC activity is refused and nothing runs (docs/tvc-isolation.md §1).
  defineKnob({
    env: "SIGIL_TVC_IMAGE_ROOT",
    flag: "--tvc-image-root",
    key: "tvcImageRoot",
    parse: tvcImageRoot,
    default: undefined,
    doc: {
      meaning:
        "The only directory TVC images (`pivotContainerImageUrl`) may come from, links resolved. Unset: every TVC activity is refused (403) and nothing runs. Must exist, must not be `/`, must not contain or lie in `SIGIL_DATA_DIR`. Only top-level organizations may use TVC (docs/tvc-isolation.md)",
      default: "unset (TVC off)",
    },
  }),
  defineKnob({
    env: "SIGIL_TVC_USER",
    flag: "--tvc-user",
    key: "tvcUser",
    parse: (v) => {
      if (!/^[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?$|^\d{1,10}(:\d{1,10})?$/.test(v))
        throw new Error(`SIGIL_TVC_USER must be a user name or uid[:gid], got ${JSON.stringify(v.slice(0, 100))}`);
      return v;
    },
    default: "nobody",
    doc: { meaning: "The user (name or `uid[:gid]`, not root) replicas run as when the service runs as root" },
  }),
  defineKnob({
    env: "SIGIL_TVC_SANDBOX",
    flag: "--tvc-sandbox",
    key: "tvcSandbox",
    parse: (v) => {
      if (v !== "auto" && v !== "bwrap" && v !== "none")
        throw new Error(`SIGIL_TVC_SANDBOX must be auto, bwrap or none, got ${JSON.stringify(v.slice(0, 100))}`);
      return v;
    },
    default: "auto",
    doc: {
      meaning:
        "How replicas are confined: `bwrap` (bubblewrap: read-only system dirs and image, no data dir, own `/tmp`, `/proc`, pid/ipc/uts namespaces; startup fails if it does not work here), `none` (only the user switch and file modes; needs the service to run as root), `auto` (`bwrap` when it works here, else `none`)",
    },
  }),
  // The auth proxy (docs/auth-proxy-service.md §1): `sigil proxy`, and `sigil serve` next to the API.
  defineKnob({
    env: "SIGIL_AUTH_PROXY",
    flag: "--auth-proxy",
    key: "authProxy",
    parse: onOff("SIGIL_AUTH_PROXY"),
    default: true,
    doc: {
      meaning:
        "`on`: `sigil serve` also runs the auth proxy on `AUTH_PROXY_PORT`, in the same process, once the API listens; `off`: only the API (run `sigil proxy` elsewhere)",
      default: "`on`",
    },
  }),
  defineKnob({
    env: "AUTH_PROXY_PORT",
    flag: "--auth-proxy-port",
    key: "authProxyPort",
    parse: int("AUTH_PROXY_PORT", 0, 65535),
    default: 8081,
    doc: { meaning: "Auth proxy port (on `HOST`; `0` picks a free one; the `sigil auth proxy listening` log line gives it)" },
  }),
  defineKnob({
    env: "SIGIL_AUTH_PROXY_API_URL",
    flag: "--auth-proxy-api-url",
    key: "authProxyApiUrl",
    parse: apiBaseUrl,
    default: undefined,
    computedBy: "proxySettingsFrom (src/proxy/settings.ts): http://127.0.0.1:<port the API listens on>",
    doc: {
      meaning: "Base URL of the public API the proxy forwards to and reads its configuration from (http/https, no path)",
      default: "`http://127.0.0.1:<PORT>`",
    },
  }),
  defineKnob({
    env: "SIGIL_AUTH_PROXY_SECRET",
    secret: true,
    key: "authProxySecret",
    parse: (v) => {
      parseProxySecret(v);
      return v.trim();
    },
    default: undefined,
    computedBy: "proxySecretOf (src/proxy/settings.ts): derived from the master key",
    doc: {
      meaning:
        "The proxy secret (64 hex; `sigil proxy --print-secret` prints it on a host with the master key). Unset: derived from `SIGIL_MASTER_KEY` or `<data dir>/master.key` (the proxy never creates a master key)",
      default: "derived",
    },
  }),
  defineKnob({
    env: "SIGIL_CAPTCHA_VERIFY_URL",
    flag: "--captcha-verify-url",
    key: "captchaVerifyUrl",
    parse: url("SIGIL_CAPTCHA_VERIFY_URL", ["http:", "https:"]),
    default: undefined,
    doc: {
      meaning:
        "Turnstile-compatible siteverify URL (form `secret`, `response`, `remoteip` → JSON `success`) the proxy checks `X-Captcha-Token` with when a config has `captchaEnabled`; loopback allowed (operator setting). Unset while a config asks for captcha: those requests are 503",
    },
  }),
  defineKnob({
    env: "SIGIL_CAPTCHA_SECRET",
    secret: true,
    key: "captchaSecret",
    parse: str,
    default: undefined,
    doc: { meaning: "The secret sent to `SIGIL_CAPTCHA_VERIFY_URL`" },
  }),
  defineKnob({
    env: "SIGIL_CAPTCHA_SITE_KEY",
    flag: "--captcha-site-key",
    key: "captchaSiteKey",
    parse: str,
    default: undefined,
    doc: { meaning: "Public site key the proxy returns from `/v1/wallet_kit_client_params` (`turnstileSiteKey`)" },
  }),
  defineKnob({
    env: "SIGIL_AUTH_PROXY_CONFIG_TTL_MS",
    flag: "--auth-proxy-config-ttl-ms",
    key: "authProxyConfigTtlMs",
    parse: int("SIGIL_AUTH_PROXY_CONFIG_TTL_MS", 0, 300_000),
    default: DEFAULT_CONFIG_TTL_MS,
    doc: {
      meaning:
        "Auth proxy configurations: how long the proxy keeps one fetched from the API, and the public API's CORS the enabled ones' origins — a change (disabled, origins, settings) applies within this time; unknown ids are kept 2 s whatever this says",
    },
  }),
  defineKnob({
    env: "SIGIL_AUTH_PROXY_OTP_INITS_PER_CONTACT_PER_HOUR",
    flag: "--auth-proxy-otp-inits-per-contact-per-hour",
    key: "authProxyOtpInitsPerContactPerHour",
    parse: int("SIGIL_AUTH_PROXY_OTP_INITS_PER_CONTACT_PER_HOUR", 0, 100_000),
    default: 10,
    doc: {
      meaning:
        "Auth proxy: `otp_init` per contact (email in any case, phone number) per hour, whatever the config; past it 429 with `Retry-After`; `0` off",
    },
  }),
  defineKnob({
    env: "SIGIL_AUTH_PROXY_SIGNUPS_PER_ADDRESS_PER_HOUR",
    flag: "--auth-proxy-signups-per-address-per-hour",
    key: "authProxySignupsPerAddressPerHour",
    parse: int("SIGIL_AUTH_PROXY_SIGNUPS_PER_ADDRESS_PER_HOUR", 0, 1_000_000),
    default: 30,
    doc: { meaning: "Auth proxy: sign-ups per client address (IPv6 per /64; `SIGIL_TRUST_PROXY` applies) per hour; `0` off" },
  }),
  defineKnob({
    env: "SIGIL_AUTH_PROXY_SIGNUPS_PER_CONFIG_PER_HOUR",
    flag: "--auth-proxy-signups-per-config-per-hour",
    key: "authProxySignupsPerConfigPerHour",
    parse: int("SIGIL_AUTH_PROXY_SIGNUPS_PER_CONFIG_PER_HOUR", 0, 10_000_000),
    default: 1000,
    doc: { meaning: "Auth proxy: sign-ups per proxy config per hour; `0` off" },
  }),
  defineKnob({
    env: "SIGIL_AUTH_PROXY_REQUESTS_PER_ORIGIN_PER_MINUTE",
    flag: "--auth-proxy-requests-per-origin-per-minute",
    key: "authProxyRequestsPerOriginPerMinute",
    parse: int("SIGIL_AUTH_PROXY_REQUESTS_PER_ORIGIN_PER_MINUTE", 0, 10_000_000),
    default: 600,
    doc: {
      meaning:
        "Auth proxy: requests per config and listed origin per minute (every endpoint); origins the config does not list — every origin, absent included, for a config that lists none — share one count per config (docs/auth-proxy-service.md §4.1); `0` off",
    },
  }),
  defineKnob({
    env: "SIGIL_AUTH_PROXY_REQUESTS_PER_ADDRESS_PER_MINUTE",
    flag: "--auth-proxy-requests-per-address-per-minute",
    key: "authProxyRequestsPerAddressPerMinute",
    parse: int("SIGIL_AUTH_PROXY_REQUESTS_PER_ADDRESS_PER_MINUTE", 0, 10_000_000),
    default: 120,
    doc: {
      meaning:
        "Auth proxy: requests per client address (IPv6 per /64; `SIGIL_TRUST_PROXY` applies) per minute, every endpoint and config, counted first; past it 429 with `Retry-After`; `0` off",
    },
  }),
  // The export and import frames (docs/frames.md §5.1): `sigil serve` next to the API.
  defineKnob({
    env: "SIGIL_FRAMES_PORT",
    flag: "--frames-port",
    key: "framesPort",
    parse: int("SIGIL_FRAMES_PORT", 0, 65535),
    default: undefined,
    doc: {
      meaning:
        "Port (on `HOST`) of the export and import frames, the pages `@turnkey/react-wallet-kit`'s `exportIframeUrl` / `importIframeUrl` name (`/export.html`, `/import.html`); `0` = any free port (the `sigil frames listening` log line gives it). Unset: no frames server (the same pages are in `dist/frames` after `npm run build`). A taken port is logged and the API runs without the frames",
      default: "unset (off)",
    },
  }),
  defineKnob({
    env: "SIGIL_FRAMES_API_URL",
    flag: "--frames-api-url",
    key: "framesApiUrl",
    parse: (v: string) => originOf(v, "SIGIL_FRAMES_API_URL"),
    default: undefined,
    computedBy: "framesSettingsFrom (src/frames/settings.ts): http://<HOST, or 127.0.0.1 for 0.0.0.0>:<API port>",
    doc: {
      meaning:
        "The API as browsers reach it (scheme://host[:port]): where the frames read the `BUNDLE_SIGNER` keys, and their CSP's only `connect-src`. The discovery endpoint answers any origin (docs/network.md §4.1)",
      default: "`http://<HOST>:<PORT>`",
    },
  }),
  defineKnob({
    env: "SIGIL_FRAMES_PARENT_ORIGINS",
    flag: "--frames-parent-origins",
    key: "framesParentOrigins",
    parse: (v: string) => list(v).map((o) => originOf(o, "SIGIL_FRAMES_PARENT_ORIGINS")),
    default: undefined,
    computedBy:
      "framesSettingsFrom (src/frames/settings.ts): SIGIL_CORS_ORIGINS and the origins enabled auth proxy configurations list, read at start",
    doc: {
      meaning:
        "Comma-separated exact origins of the apps that may embed and drive the frames (their CSP `frame-ancestors`, and the origin their channel must come from)",
      default: "`SIGIL_CORS_ORIGINS` + auth proxy `allowedOrigins`",
    },
  }),
  // The operator console (docs/console.md §2), on the API's own origin.
  defineKnob({
    env: "SIGIL_CONSOLE",
    flag: "--console",
    key: "console",
    parse: onOff("SIGIL_CONSOLE"),
    default: true,
    doc: {
      meaning:
        "`on`: `sigil serve` serves the operator console at `/console` on the API's port (static files; every request it makes is stamped by the user's own credential, docs/console.md); `off`: `/console` is not found",
      default: "`on`",
    },
  }),
] as const;

/** The service's configuration: each knob's field, with the type its `parse` returns. */
export type Config = ConfigOf<typeof KNOBS>;

export const DEFAULTS: Config = defaultsOf(KNOBS);

/** `inner` is `outer` or lies below it (both absolute, normalised). */
export function isWithin(outer: string, inner: string): boolean {
  const r = path.relative(outer, inner);
  return r === "" || (r !== ".." && !r.startsWith(".." + path.sep) && !path.isAbsolute(r));
}

/**
 * Builds the configuration. `argv` may hold other flags and positionals (the CLI's own);
 * only the knobs' flags are read here. Rules that tie several knobs together follow the list.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, argv: string[] = []): Config {
  const out = readKnobs(KNOBS, { ...DEFAULTS }, env, argv);
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
