// Another process holding the SQLite write lock (an operator's shell, a backup, `sigil init`):
// the server keeps answering (/healthz, reads) while its writes wait asynchronously; a write
// completes once the lock is released, or is answered 503 UNAVAILABLE past the lock timeout.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { TurnkeyClient, TurnkeyRequestError } from "@turnkey/http";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const LOCK_TIMEOUT_MS = 2_500;

/** A separate process that takes the write lock (BEGIN IMMEDIATE) and holds it until released. */
async function holdWriteLock(file: string): Promise<{ release(): Promise<void>; proc: ChildProcess }> {
  const proc = spawn(
    process.execPath,
    [
      "-e",
      `const Database = require("better-sqlite3");
       const db = new Database(process.argv[1]);
       db.exec("BEGIN IMMEDIATE");
       process.stdout.write("locked\\n");
       process.stdin.once("data", () => { db.exec("COMMIT"); db.close(); process.exit(0); });`,
      file,
    ],
    { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] },
  );
  const reap = () => proc.kill("SIGKILL");
  process.once("exit", reap);
  let out = "";
  await new Promise<void>((resolve, reject) => {
    proc.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes("locked\n")) resolve();
    });
    proc.once("exit", (code) => reject(new Error(`lock holder exited with ${code}`)));
  });
  return {
    proc,
    async release() {
      const exited = once(proc, "exit");
      proc.stdin!.write("release\n");
      await exited;
      process.off("exit", reap);
    },
  };
}

async function healthzMs(url: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${url}/healthz`);
  assert.equal(res.status, 200);
  await res.arrayBuffer();
  return performance.now() - started;
}

/** Samples /healthz one after another until `done` settles; returns the latencies. */
async function sampleHealthz(url: string, done: Promise<unknown>): Promise<number[]> {
  let finished = false;
  void done.then(
    () => (finished = true),
    () => (finished = true),
  );
  const samples: number[] = [];
  while (!finished) samples.push(await healthzMs(url));
  return samples;
}

describe("SQLite write lock held by another process", { timeout: 120_000 }, () => {
  let inst: Instance;
  let init: InitResult;
  let server: RunningServer;
  let client: TurnkeyClient;

  before(async () => {
    inst = await newInstance("sqlite", { SIGIL_SQLITE_LOCK_TIMEOUT_MS: String(LOCK_TIMEOUT_MS) });
    init = await sigilInit(inst);
    server = await startServer(inst);
    client = new TurnkeyClient(
      { baseUrl: server.url },
      new ApiKeyStamper({ apiPublicKey: init.apiPublicKey, apiPrivateKey: init.apiPrivateKey }),
    );
    // Warm up (first requests compile code paths).
    await client.getWhoami({ organizationId: init.organizationId });
    await healthzMs(server.url);
  });
  after(async () => {
    await server?.stop();
    await inst?.cleanup();
  });

  const createTag = (name: string) =>
    client.createUserTag({
      type: "ACTIVITY_TYPE_CREATE_USER_TAG",
      timestampMs: String(Date.now()),
      organizationId: init.organizationId,
      parameters: { userTagName: name, userIds: [] },
    });

  it("keeps /healthz and reads fast while an activity waits, and completes the activity after release", async (t) => {
    const lock = await holdWriteLock(path.join(inst.dataDir, "sigil.db"));
    let answered = 0;
    const activity = createTag("waits-for-lock").finally(() => (answered = Date.now()));
    // About a second of /healthz samples while the activity is waiting (not answered).
    const heldFor = new Promise((resolve) => setTimeout(resolve, 1_000));
    const samples = await sampleHealthz(server.url, heldFor);
    assert.equal(answered, 0, "the activity must still be waiting for the lock");
    const readStarted = performance.now();
    await client.getWhoami({ organizationId: init.organizationId });
    const readMs = performance.now() - readStarted;
    // The moment the release starts: the server may commit and answer before the helper
    // process holding the lock has confirmed its release to this one.
    const released = Date.now();
    await lock.release();
    const { activity: a } = await activity;
    assert.equal(a.status, "ACTIVITY_STATUS_COMPLETED");
    assert.ok(answered >= released, "answered after the lock was released");
    const max = Math.max(...samples);
    t.diagnostic(`/healthz while the lock was held: ${samples.length} samples, max ${max.toFixed(1)} ms; whoami ${readMs.toFixed(1)} ms`);
    assert.ok(samples.length >= 5, `only ${samples.length} /healthz answers in a second`);
    assert.ok(max < 200, `/healthz took up to ${max.toFixed(0)} ms while the lock was held`);
    assert.ok(readMs < 500, `a query took ${readMs.toFixed(0)} ms while the lock was held`);
  });

  it("answers 503 UNAVAILABLE with the SDK body when the lock is held past the lock timeout, then recovers", async (t) => {
    const lock = await holdWriteLock(path.join(inst.dataDir, "sigil.db"));
    const started = Date.now();
    const activity = createTag("times-out");
    let samples: number[];
    try {
      samples = await sampleHealthz(server.url, activity);
      const err = await activity.then(
        () => assert.fail("the activity must not complete while the lock is held"),
        (e: unknown) => e,
      );
      const elapsed = Date.now() - started;
      assert.ok(err instanceof TurnkeyRequestError, String(err));
      assert.equal(err.code, 14);
      assert.equal((err.details?.[0] as { "@type"?: string } | undefined)?.["@type"], "type.googleapis.com/errors.v1.TurnkeyErrorDetail");
      assert.ok(elapsed >= LOCK_TIMEOUT_MS - 100 && elapsed < LOCK_TIMEOUT_MS + 2_000, `503 after ${elapsed} ms`);
      t.diagnostic(`503 after ${elapsed} ms; /healthz max ${Math.max(...samples).toFixed(1)} ms over ${samples.length} samples`);
    } finally {
      await lock.release();
    }
    assert.ok(Math.max(...samples) < 200);
    // Nothing was written, and the same write goes through now.
    const { activities } = await client.getActivities({ organizationId: init.organizationId });
    assert.equal(activities.filter((x) => JSON.stringify(x.intent).includes("times-out")).length, 0);
    const { activity: a } = await createTag("times-out");
    assert.equal(a.status, "ACTIVITY_STATUS_COMPLETED");
  });
});
