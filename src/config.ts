// Configuration comes from the environment, and `--flag value` on the command line wins over
// it. Every knob is listed in the README's configuration table; keep the two in step.
import path from "node:path";

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
  /** Per delivery attempt. */
  webhooksTimeoutMs: number;
  /** Attempts before a delivery is recorded as failed. */
  webhooksMaxAttempts: number;
  /** First retry delay (doubles per attempt, capped at 5 minutes, jittered). */
  webhooksRetryBaseMs: number;
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
function bool(name: string) {
  return (v: string): boolean => {
    if (v === "true" || v === "1") return true;
    if (v === "false" || v === "0") return false;
    throw new Error(`${name} must be true or false, got ${JSON.stringify(v)}`);
  };
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
  { env: "SIGIL_WEBHOOKS_TIMEOUT_MS", flag: "--webhooks-timeout-ms", key: "webhooksTimeoutMs", parse: int("SIGIL_WEBHOOKS_TIMEOUT_MS", 100, 120_000) },
  { env: "SIGIL_WEBHOOKS_MAX_ATTEMPTS", flag: "--webhooks-max-attempts", key: "webhooksMaxAttempts", parse: int("SIGIL_WEBHOOKS_MAX_ATTEMPTS", 1, 50) },
  { env: "SIGIL_WEBHOOKS_RETRY_BASE_MS", flag: "--webhooks-retry-base-ms", key: "webhooksRetryBaseMs", parse: int("SIGIL_WEBHOOKS_RETRY_BASE_MS", 10, 600_000) },
];

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
  webhooksMaxAttempts: 10,
  webhooksRetryBaseMs: 1_000,
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
      const v = argv[i + 1];
      if (v === undefined) throw new Error(`${knob.flag} needs a value`);
      cfg[knob.key] = knob.parse(v);
    }
  }
  const masterKey = env.SIGIL_MASTER_KEY;
  cfg.masterKey = masterKey && masterKey !== "" ? masterKey : undefined;
  const out = cfg as unknown as Config;
  out.dataDir = path.resolve(out.dataDir);
  return out;
}
