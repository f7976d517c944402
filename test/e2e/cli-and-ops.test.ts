// The bootstrap contract (`sigil init`), startup checks, and the operational endpoints.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { TurnkeyClient } from "@turnkey/http";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { engines, newInstance, sigilInit, startServer, type Instance, type RunningServer } from "../helpers/server.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { ACTIVITIES, VOTES } from "../../src/activities/registry.ts";
import { QUERIES } from "../../src/queries/registry.ts";

const run = promisify(execFile);
const BIN = path.resolve(import.meta.dirname, "../../bin/sigil.mjs");

for (const engine of engines()) {
  describe(`sigil init and operations (${engine.name})`, { skip: engine.skip, timeout: 120_000 }, () => {
    let inst: Instance;
    let server: RunningServer;

    before(async () => {
      // An empty database: `sigil init` runs every migration on it, as on a first install.
      inst = await newInstance(engine.name, {}, { emptyDatabase: true });
    });
    after(async () => {
      await server?.stop();
      await inst?.cleanup();
    });

    it("init --json works before the server ever ran and prints exactly the contract's fields", async () => {
      const out = await sigilInit(inst, ["--name", "Acme"]);
      assert.deepEqual(Object.keys(out).sort(), ["apiKeyId", "apiPrivateKey", "apiPublicKey", "organizationId", "userId"]);
      assert.match(out.apiPublicKey, /^0[23][0-9a-f]{64}$/);
      assert.match(out.apiPrivateKey, /^[0-9a-f]{64}$/);
      server = await startServer(inst);
      const client = new TurnkeyClient(
        { baseUrl: server.url },
        new ApiKeyStamper({ apiPublicKey: out.apiPublicKey, apiPrivateKey: out.apiPrivateKey }),
      );
      const me = await client.getWhoami({ organizationId: out.organizationId });
      assert.deepEqual(me, { organizationId: out.organizationId, organizationName: "Acme", userId: out.userId, username: "root" });
    });

    it("init --api-public-key registers the given key, prints no private key, and works while the server runs", async () => {
      const kp = generateP256KeyPair();
      const out = await sigilInit(inst, ["--name", "Second", "--api-public-key", kp.publicKey]);
      assert.equal(out.apiPublicKey, kp.publicKey);
      assert.equal("apiPrivateKey" in out, false);
      const client = new TurnkeyClient(
        { baseUrl: server.url },
        new ApiKeyStamper({ apiPublicKey: kp.publicKey, apiPrivateKey: kp.privateKey }),
      );
      const me = await client.getWhoami({ organizationId: out.organizationId });
      assert.equal(me.userId, out.userId);
      const keys = await client.getApiKeys({ organizationId: out.organizationId, userId: out.userId });
      assert.equal(keys.apiKeys.length, 1);
      assert.equal(keys.apiKeys[0]!.apiKeyId, out.apiKeyId);
    });

    it("init refuses bad input with a message and a non-zero exit", async () => {
      await assert.rejects(run(process.execPath, [BIN, "init", "--json"], { env: inst.env }), (e: { code: number; stderr: string }) => {
        assert.equal(e.code, 1);
        assert.match(e.stderr, /--name/);
        return true;
      });
      await assert.rejects(
        run(process.execPath, [BIN, "init", "--json", "--name", "x", "--api-public-key", "02abcd"], { env: inst.env }),
        (e: { stderr: string }) => /--api-public-key/.test(e.stderr),
      );
    });

    it("refuses to start with a master key other than the one the database was created with", async () => {
      const wrong = { ...inst, env: { ...inst.env, SIGIL_MASTER_KEY: randomBytes(32).toString("hex") } };
      await assert.rejects(run(process.execPath, [BIN, "init", "--json", "--name", "x"], { env: wrong.env }), (e: { stderr: string }) =>
        /master key does not match/.test(e.stderr),
      );
    });

    it("a port already taken: serve says so on stderr and exits with code 1, nothing left holding the process", async () => {
      // On PostgreSQL the webhook listener's connection is open by then: it must be closed too,
      // or the process would live on without ever listening.
      const { createServer } = await import("node:net");
      const blocker = createServer();
      await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
      const port = (blocker.address() as { port: number }).port;
      try {
        const started = Date.now();
        await assert.rejects(
          run(process.execPath, [BIN, "serve", "--port", String(port), "--host", "127.0.0.1"], { env: inst.env, timeout: 60_000 }),
          (e: { code: number; signal: string | null; stderr: string }) => {
            assert.equal(e.signal, null, "exited by itself, not killed at the timeout");
            assert.equal(e.code, 1);
            assert.match(e.stderr, /sigil serve: .*EADDRINUSE/);
            return true;
          },
        );
        // Closing what startup opened, not the 10 s backstop, ended it.
        assert.ok(Date.now() - started < 9_000, `exited after ${Date.now() - started} ms`);
      } finally {
        await new Promise<void>((resolve) => blocker.close(() => resolve()));
      }
    });

    it("serves health, readiness, metrics and an OpenAPI document derived from the registry", async () => {
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
      const ready = await fetch(`${server.url}/readyz`);
      assert.equal(ready.status, 200);
      assert.equal(((await ready.json()) as { engine: string }).engine, engine.name);
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      assert.match(metrics, /sigil_http_request_duration_seconds_bucket/);
      const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { openapi: string; paths: Record<string, unknown> };
      assert.equal(doc.openapi, "3.1.0");
      const expected = new Set([
        ...[...ACTIVITIES, ...VOTES].map((a) => `/public/v1/submit/${a.op}`),
        ...QUERIES.map((q) => `/public/v1/query/${q.op}`),
      ]);
      assert.deepEqual(new Set(Object.keys(doc.paths)), expected);
    });

    it("publishes the service keys without authentication; service-keys rotate keeps the old key published, retire removes it", async () => {
      type Doc = { keys: { keyId: string; purpose: string; publicKey: string; createdAt: string; status: string }[] };
      const discover = async () => {
        const res = await fetch(`${server.url}/public/v1/discovery/keys`);
        assert.equal(res.status, 200);
        return (await res.json()) as Doc;
      };
      const first = await discover();
      assert.deepEqual(first.keys.map((k) => k.purpose).sort(), [
        "BUNDLE_SIGNER",
        "OAUTH2_CLIENT_SECRET",
        "OIDC_TOKEN",
        "OTP_ENCRYPTION_TARGET",
        "SESSION_JWT",
        "VERIFICATION_TOKEN",
      ]);
      for (const k of first.keys) {
        assert.match(k.publicKey, /^04[0-9a-f]{128}$/);
        assert.match(k.createdAt, /^\d+$/);
      }
      const rotated = JSON.parse(
        (await run(process.execPath, [BIN, "service-keys", "rotate", "SESSION_JWT"], { env: inst.env })).stdout,
      ) as {
        rotated: { purpose: string; keyId: string }[];
      };
      assert.equal(rotated.rotated.length, 1);
      const old = first.keys.find((k) => k.purpose === "SESSION_JWT")!;
      const second = await discover();
      const sessionKeys = second.keys.filter((k) => k.purpose === "SESSION_JWT");
      assert.deepEqual(
        sessionKeys.map((k) => [k.keyId, k.status]),
        [
          [rotated.rotated[0]!.keyId, "active"],
          [old.keyId, "published"],
        ],
      );
      await assert.rejects(
        run(process.execPath, [BIN, "service-keys", "retire", rotated.rotated[0]!.keyId], { env: inst.env }),
        (e: { stderr: string }) => /rotate first/.test(e.stderr),
      );
      await run(process.execPath, [BIN, "service-keys", "retire", old.keyId], { env: inst.env });
      assert.ok(!(await discover()).keys.some((k) => k.keyId === old.keyId));
      const listed = JSON.parse((await run(process.execPath, [BIN, "service-keys", "list"], { env: inst.env })).stdout) as {
        keys: { keyId: string; status: string }[];
      };
      assert.equal(listed.keys.find((k) => k.keyId === old.keyId)?.status, "retired");
      assert.ok(!JSON.stringify(listed).includes("sealed"), "the list never shows private material");
    });

    it("answers unknown routes with the SDK error shape", async () => {
      const res = await fetch(`${server.url}/public/v2/nope`, { method: "POST", body: "{}" });
      assert.equal(res.status, 404);
      const body = (await res.json()) as { code: number; message: string; details: unknown[] };
      assert.equal(body.code, 5);
      assert.ok(Array.isArray(body.details));
    });
  });
}

describe("embedded default without SIGIL_MASTER_KEY", { timeout: 60_000 }, () => {
  let inst: Instance;
  before(async () => {
    inst = await newInstance("sqlite", { SIGIL_MASTER_KEY: "" });
  });
  after(async () => inst?.cleanup());

  it("generates a master key into the data dir once, with a warning, and reuses it", async () => {
    const first = await run(process.execPath, [BIN, "init", "--name", "A"], { env: inst.env });
    assert.match(first.stderr, /generated a new master key/);
    const second = await run(process.execPath, [BIN, "init", "--name", "B"], { env: inst.env });
    assert.match(second.stderr, /using the key kept in/);
    const { statSync } = await import("node:fs");
    assert.equal(statSync(path.join(inst.dataDir, "master.key")).mode & 0o777, 0o600);
  });
});
