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
