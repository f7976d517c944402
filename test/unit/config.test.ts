import { describe, it } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { loadConfig, DEFAULTS, KNOBS } from "../../src/config.ts";
import { knobsUsage } from "../../src/config/define.ts";

describe("configuration", () => {
  it("has the documented defaults", () => {
    const c = loadConfig({}, []);
    assert.equal(c.port, 8080);
    assert.equal(c.dataDir, path.resolve("./data"));
    assert.equal(c.databaseUrl, undefined);
    assert.equal(c.timestampMaxAgeMs, DEFAULTS.timestampMaxAgeMs);
  });

  it("reads the environment, and flags win over it", () => {
    const env = { PORT: "9000", DATABASE_URL: "postgres://x/y", SIGIL_TIMESTAMP_MAX_AGE_SECONDS: "60", SIGIL_MASTER_KEY: "k" };
    const c = loadConfig(env, ["serve", "--port", "9001", "--data-dir", "/tmp/sigil-x"]);
    assert.equal(c.port, 9001);
    assert.equal(c.dataDir, "/tmp/sigil-x");
    assert.equal(c.databaseUrl, "postgres://x/y");
    assert.equal(c.timestampMaxAgeMs, 60_000);
    assert.equal(c.masterKey, "k");
  });

  it("rejects bad values with the variable's name", () => {
    assert.throws(() => loadConfig({ PORT: "eighty" }, []), /PORT must be an integer/);
    assert.throws(() => loadConfig({ PORT: "70000" }, []), /PORT must be between/);
    assert.throws(() => loadConfig({}, ["--port"]), /--port needs a value/);
  });

  it("never takes the master key from the command line", () => {
    assert.equal(loadConfig({}, ["--master-key", "abc"]).masterKey, undefined);
  });

  it("has database timeouts and a shutdown grace period, from the environment or flags", () => {
    const d = loadConfig({}, []);
    assert.equal(d.dbConnectTimeoutMs, 5_000);
    assert.equal(d.dbStatementTimeoutMs, 30_000);
    assert.equal(d.dbIdleInTransactionTimeoutMs, 60_000);
    assert.equal(d.sqliteLockTimeoutMs, 5_000);
    assert.equal(d.shutdownGraceMs, 10_000);
    const env = {
      SIGIL_DB_CONNECT_TIMEOUT_MS: "1500",
      SIGIL_DB_STATEMENT_TIMEOUT_MS: "2500",
      SIGIL_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: "9000",
      SIGIL_SQLITE_LOCK_TIMEOUT_MS: "250",
      SIGIL_SHUTDOWN_GRACE_MS: "3000",
    };
    const c = loadConfig(env, ["serve", "--shutdown-grace-ms", "4000", "--db-statement-timeout-ms", "7000"]);
    assert.equal(c.dbConnectTimeoutMs, 1_500);
    assert.equal(c.dbStatementTimeoutMs, 7_000);
    assert.equal(c.dbIdleInTransactionTimeoutMs, 9_000);
    assert.equal(c.sqliteLockTimeoutMs, 250);
    assert.equal(c.shutdownGraceMs, 4_000);
    assert.throws(() => loadConfig({ SIGIL_DB_CONNECT_TIMEOUT_MS: "5" }, []), /SIGIL_DB_CONNECT_TIMEOUT_MS must be between/);
    assert.throws(() => loadConfig({ SIGIL_SHUTDOWN_GRACE_MS: "soon" }, []), /SIGIL_SHUTDOWN_GRACE_MS must be an integer/);
  });

  it("has a webhook retry schedule spanning more than a day, a disable-after period, and reads both", () => {
    const d = loadConfig({}, []);
    assert.deepEqual(d.webhooksRetrySchedule, [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    assert.equal(d.webhooksMaxAttempts, undefined, "the schedule's length");
    assert.equal(d.webhooksDisableAfterMs, 5 * 86_400_000);
    assert.equal(d.webhooksTimeoutMs, 10_000);
    const c = loadConfig(
      { SIGIL_WEBHOOKS_RETRY_SCHEDULE: "0,50ms,2s", SIGIL_WEBHOOKS_DISABLE_AFTER: "2d", SIGIL_WEBHOOKS_MAX_ATTEMPTS: "4" },
      ["serve", "--webhooks-disable-after", "36h"],
    );
    assert.deepEqual(c.webhooksRetrySchedule, [0, 50, 2_000]);
    assert.equal(c.webhooksDisableAfterMs, 36 * 3_600_000);
    assert.equal(c.webhooksMaxAttempts, 4);
    assert.throws(
      () => loadConfig({ SIGIL_WEBHOOKS_RETRY_SCHEDULE: "0,soon" }, []),
      /SIGIL_WEBHOOKS_RETRY_SCHEDULE: "soon" is not a duration/,
    );
    assert.throws(
      () => loadConfig({ SIGIL_WEBHOOKS_DISABLE_AFTER: "10ms" }, []),
      /SIGIL_WEBHOOKS_DISABLE_AFTER must be between 1s and 365d/,
    );
  });

  it("`sigil serve --help` lists every flag with its variable, and the env-only variables", () => {
    const usage = knobsUsage(KNOBS);
    assert.match(usage, /^ {2}--port <value> +PORT$/m);
    assert.match(usage, /^ {2}--tvc-sandbox <value> +SIGIL_TVC_SANDBOX$/m);
    // No flag for a secret (a flag shows in the process list): the key, the previous key, the token's PIN.
    assert.doesNotMatch(usage, /--redis-url |--master-key |--master-key-previous |--pkcs11-pin /);
    assert.match(usage, /^ {2}--master-key-source <value> +SIGIL_MASTER_KEY_SOURCE$/m);
    assert.match(usage, /Environment only \(may hold a secret\): .*SIGIL_MASTER_KEY.*REDIS_URL/);
    const envOnly = usage.slice(usage.indexOf("Environment only"));
    for (const name of ["SIGIL_MASTER_KEY_PREVIOUS", "SIGIL_PKCS11_PIN"]) assert.match(envOnly, new RegExp(`\\b${name}\\b`));
  });
});
