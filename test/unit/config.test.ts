import { describe, it } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { loadConfig, DEFAULTS } from "../../src/config.ts";

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
});
