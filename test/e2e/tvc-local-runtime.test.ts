// The TVC local process runtime, controller and ingress with real processes: the fixture app
// (test/fixtures/tvc-app/server.mjs) copied into a scratch image directory per test, so the
// digest tests can change "the binary" without touching the repository.
import { after, afterEach, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import client from "prom-client";
import { LocalRuntime, Refusal, resolveExecutable, type RuntimeLog } from "../../src/tvc/local-runtime.ts";
import { startController, type TvcController } from "../../src/tvc/controller.ts";
import { startIngress, type TvcIngress } from "../../src/tvc/ingress.ts";
import { TvcMetrics } from "../../src/tvc/metrics.ts";
import { TvcObservations } from "../../src/tvc/observed.ts";
import type { DeploymentSpec, DesiredDeployment } from "../../src/tvc/spec.ts";
import { openService, type Service } from "../../src/service.ts";
import { newId } from "../../src/store/util.ts";
import { newInstance, type Instance } from "../helpers/server.ts";
import { plainIsolation } from "../helpers/tvc.ts";
import { freePort } from "../helpers/ports.ts";
import { pollUntil } from "../helpers/raw-http.ts";

const FIXTURE = path.resolve(import.meta.dirname, "../fixtures/tvc-app/server.mjs");
const DEADLINE = 15_000;

/** Log lines kept for assertions (the runtime must say what it does). */
class MemoryLog implements RuntimeLog {
  lines: { level: string; obj: object; msg: string }[] = [];
  info = (obj: object, msg: string) => void this.lines.push({ level: "info", obj, msg });
  warn = (obj: object, msg: string) => void this.lines.push({ level: "warn", obj, msg });
  error = (obj: object, msg: string) => void this.lines.push({ level: "error", obj, msg });
  debug = (obj: object, msg: string) => void this.lines.push({ level: "debug", obj, msg });
}

/** Running (a zombie — exited, waiting for PID 1 to reap it — is not). */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "")[0] !== "Z";
  } catch {
    return false;
  }
};

/** Every pid a test saw, killed in `after` whatever happened. */
const seen = new Set<number>();
const remember = (pids: number[]) => pids.forEach((p) => seen.add(p));

let scratch: string;
function imageDir(): { dir: string; url: string; digest: string; file: string } {
  const dir = mkdtempSync(path.join(scratch, "image-"));
  mkdirSync(path.join(dir, "bin"));
  const file = path.join(dir, "bin", "server.mjs");
  copyFileSync(FIXTURE, file);
  return { dir, url: pathToFileURL(dir).href, digest: createHash("sha256").update(readFileSync(file)).digest("hex"), file };
}

function spec(image: { url: string; digest: string }, over: Partial<DeploymentSpec> = {}): DeploymentSpec {
  return {
    qosVersion: "test",
    pivotContainerImageUrl: image.url,
    pivotPath: "/bin/server.mjs",
    pivotArgs: [],
    expectedPivotDigest: image.digest,
    healthCheckType: "TVC_HEALTH_CHECK_TYPE_HTTP",
    healthCheckPort: 3000,
    publicIngressPort: 3000,
    replicas: 2,
    debugMode: false,
    nonce: 1,
    hasPullSecret: false,
    ...over,
  };
}

const desired = (s: DeploymentSpec, over: Partial<DesiredDeployment> = {}): DesiredDeployment => ({
  deploymentId: newId(),
  appId: newId(),
  organizationId: newId(),
  spec: s,
  live: true,
  ...over,
});

const fast = { healthIntervalMs: 100, healthTimeoutMs: 500, backoffBaseMs: 100, backoffCapMs: 800, stopGraceMs: 2_000 };

async function getJson(url: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url);
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

before(() => {
  // The image root (SIGIL_TVC_IMAGE_ROOT) of these runtimes: every image directory is made in it.
  scratch = realpathSync(mkdtempSync(path.join(tmpdir(), "sigil-tvc-")));
});
after(() => {
  for (const pid of seen) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  rmSync(scratch, { recursive: true, force: true });
});

describe("local runtime", () => {
  let runtime: LocalRuntime;
  let log: MemoryLog;
  let registry: client.Registry;
  let metrics: TvcMetrics;
  const make = (extra: Partial<ConstructorParameters<typeof LocalRuntime>[0]> = {}) => {
    log = new MemoryLog();
    registry = new client.Registry();
    metrics = new TvcMetrics(registry);
    runtime = new LocalRuntime({ log, metrics, imageRoot: scratch, isolation: plainIsolation(), ...fast, ...extra });
    metrics.observeFrom(() => runtime.observe());
    return runtime;
  };
  afterEach(async () => {
    await runtime?.stop();
  });

  it("the fixture is an executable script", () => {
    assert.equal(readFileSync(FIXTURE, "utf8").split("\n", 1)[0], "#!/usr/bin/env node");
    assert.ok((statSync(FIXTURE).mode & 0o111) !== 0, "executable bit");
  });

  it("runs 2 replicas on their own ports with a clean environment; a killed replica is restarted", async () => {
    // Things the service has that a replica must never see.
    process.env.SIGIL_TEST_SECRET = "do-not-leak";
    make();
    const d = desired(spec(imageDir()));
    await runtime.apply([d]);
    await pollUntil("2 ready replicas", DEADLINE, 50, async () => (runtime.observe()[0]?.readyReplicas === 2 ? true : undefined));
    const [obs] = runtime.observe();
    assert.equal(obs!.desiredReplicas, 2);
    assert.equal(obs!.refusal, undefined);
    const ends = runtime.endpoints(d.deploymentId);
    assert.equal(ends.length, 2);
    assert.notEqual(ends[0]!.port, ends[1]!.port);
    const pids = runtime.pids(d.deploymentId);
    remember(pids);
    assert.equal(pids.length, 2);

    const echo = await getJson(`http://127.0.0.1:${ends[0]!.port}/some/path?q=1`);
    assert.equal(echo.json.port, ends[0]!.port);
    assert.equal(echo.json.path, "/some/path");
    const env = await getJson(`http://127.0.0.1:${ends[1]!.port}/env`);
    assert.deepEqual(env.json.keys, ["HOME", "PATH", "PORT"]);

    // Kill one replica: it is restarted (a new pid) and both are ready again.
    const victim = echo.json.pid as number;
    assert.ok(pids.includes(victim));
    process.kill(victim, "SIGKILL");
    await pollUntil("the killed replica back", DEADLINE, 50, async () => {
      const now = runtime.pids(d.deploymentId);
      return now.length === 2 && !now.includes(victim) && runtime.observe()[0]?.readyReplicas === 2 ? now : undefined;
    }).then(remember);
    assert.equal(alive(victim), false);
    const text = await registry.metrics();
    assert.match(text, new RegExp(`sigil_tvc_replica_restarts_total\\{app_id="${d.appId}",deployment_id="${d.deploymentId}"\\} 1`));
    assert.match(text, new RegExp(`sigil_tvc_replicas_ready\\{app_id="${d.appId}",deployment_id="${d.deploymentId}"\\} 2`));
    assert.ok(
      log.lines.some((l) => l.level === "warn" && /killed by SIGKILL; restarting/.test(l.msg)),
      "the crash is logged",
    );
    delete process.env.SIGIL_TEST_SECRET;
  });

  it("refuses an executable whose sha256 is not expectedPivotDigest, before the first start and before a restart", async () => {
    make();
    const image = imageDir();
    const wrong = desired(spec(image, { expectedPivotDigest: "0".repeat(64), replicas: 1 }));
    const good = desired(spec(image, { replicas: 1 }));
    await runtime.apply([wrong, good]);
    await pollUntil("the refusal", DEADLINE, 50, async () => runtime.observe().find((o) => o.deploymentId === wrong.deploymentId)?.refusal);
    const refused = runtime.observe().find((o) => o.deploymentId === wrong.deploymentId)!;
    assert.match(refused.refusal!, /sha256 is [0-9a-f]{64}, not the expectedPivotDigest 0{64}/);
    assert.equal(refused.readyReplicas, 0);
    assert.deepEqual(runtime.pids(wrong.deploymentId), []);
    assert.ok(log.lines.some((l) => l.level === "warn" && l.msg === "tvc replica start refused"));
    assert.match(
      await registry.metrics(),
      new RegExp(`sigil_tvc_deployment_refused\\{app_id="${wrong.appId}",deployment_id="${wrong.deploymentId}"\\} 1`),
    );

    // The good one runs; then its binary changes and its process dies: the restart is refused.
    await pollUntil("the good replica ready", DEADLINE, 50, async () =>
      runtime.endpoints(good.deploymentId).length === 1 ? true : undefined,
    );
    const [pid] = runtime.pids(good.deploymentId);
    remember([pid!]);
    const original = readFileSync(image.file);
    appendFileSync(image.file, "\n// changed\n");
    process.kill(pid!, "SIGKILL");
    await pollUntil(
      "the restart refused",
      DEADLINE,
      50,
      async () => runtime.observe().find((o) => o.deploymentId === good.deploymentId)?.refusal,
    );
    assert.deepEqual(runtime.pids(good.deploymentId), []);
    const refusals = /sigil_tvc_start_refusals_total\{app_id="[^"]+",deployment_id="([^"]+)"\} (\d+)/g;
    const counted = new Map([...(await registry.metrics()).matchAll(refusals)].map((m) => [m[1], Number(m[2])]));
    assert.ok((counted.get(good.deploymentId) ?? 0) >= 1);

    // Restored: the retry (with backoff) starts it.
    writeFileSync(image.file, original);
    await pollUntil("the restored replica ready", DEADLINE, 50, async () => {
      const o = runtime.observe().find((x) => x.deploymentId === good.deploymentId);
      return o?.readyReplicas === 1 && !o.refusal ? true : undefined;
    });
    remember(runtime.pids(good.deploymentId));
  });

  it("stops a removed deployment's processes, grandchildren included, and scales down", async () => {
    make();
    const d = desired(spec(imageDir(), { pivotArgs: ["--spawn-child"], replicas: 2 }));
    await runtime.apply([d]);
    await pollUntil("2 ready", DEADLINE, 50, async () => (runtime.endpoints(d.deploymentId).length === 2 ? true : undefined));
    const echoes = await Promise.all(runtime.endpoints(d.deploymentId).map((e) => getJson(`http://127.0.0.1:${e.port}/`)));
    const pids = echoes.map((e) => e.json.pid as number);
    const children = echoes.map((e) => e.json.childPid as number);
    remember(pids);
    assert.ok(children.every((c) => Number.isInteger(c) && alive(c)));

    // Scale to 1: one replica (and its child) goes.
    await runtime.apply([{ ...d, spec: { ...d.spec, replicas: 1 } }]);
    assert.equal(runtime.observe()[0]!.desiredReplicas, 1);
    await pollUntil("one replica left", DEADLINE, 50, async () =>
      pids.filter(alive).length === 1 && children.filter(alive).length === 1 ? true : undefined,
    );

    await runtime.apply([]);
    assert.deepEqual(runtime.observe(), []);
    assert.deepEqual(runtime.endpoints(d.deploymentId), []);
    await pollUntil("every process gone", DEADLINE, 50, async () => ([...pids, ...children].some(alive) ? undefined : true));
  });

  it("a replica that ignores SIGTERM is killed after the grace period", async () => {
    make({ stopGraceMs: 300 });
    const image = imageDir();
    // The same fixture, but deaf to SIGTERM.
    const deaf = path.join(image.dir, "bin", "deaf.mjs");
    writeFileSync(deaf, readFileSync(image.file, "utf8").replace("process.on('SIGTERM', shutdown);", "process.on('SIGTERM', () => {});"), {
      mode: 0o755,
    });
    const digest = createHash("sha256").update(readFileSync(deaf)).digest("hex");
    const d = desired(spec(image, { pivotPath: "bin/deaf.mjs", expectedPivotDigest: digest, replicas: 1 }));
    await runtime.apply([d]);
    await pollUntil("ready", DEADLINE, 50, async () => (runtime.endpoints(d.deploymentId).length === 1 ? true : undefined));
    const pids = runtime.pids(d.deploymentId);
    remember(pids);
    const started = Date.now();
    await runtime.stop();
    assert.ok(Date.now() - started >= 250, "waited for the grace period");
    assert.equal(alive(pids[0]!), false);
    assert.ok(log.lines.some((l) => /did not stop after SIGTERM: SIGKILL/.test(l.msg)));
  });

  it("GRPC health checks are TCP connects", async () => {
    make();
    const d = desired(spec(imageDir(), { healthCheckType: "TVC_HEALTH_CHECK_TYPE_GRPC", replicas: 1 }));
    await runtime.apply([d]);
    await pollUntil("ready by TCP", DEADLINE, 50, async () => (runtime.observe()[0]?.readyReplicas === 1 ? true : undefined));
    remember(runtime.pids(d.deploymentId));
  });

  it("ends processes a killed predecessor left behind (pid records), and only those", async () => {
    const pidDir = path.join(scratch, `pids-${newId()}`);
    make({ pidDir });
    const image = imageDir();
    const file = realpathSync(image.file);
    // A replica "left behind": running the recorded executable, in its own group.
    // (A real port: the fixture refuses PORT=0 and exits at once, which left the test racing
    // the orphan's own exit.)
    const orphan = spawn(file, [], { env: { PATH: process.env.PATH, PORT: String(await freePort()) }, detached: true, stdio: "ignore" });
    remember([orphan.pid!]);
    // A record whose pid runs something else (a reused pid): left alone.
    const bystander = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { detached: true, stdio: "ignore" });
    remember([bystander.pid!]);
    mkdirSync(pidDir, { recursive: true });
    writeFileSync(path.join(pidDir, `${orphan.pid}.json`), JSON.stringify({ pid: orphan.pid, file, deploymentId: "x" }));
    writeFileSync(path.join(pidDir, `${bystander.pid}.json`), JSON.stringify({ pid: bystander.pid, file, deploymentId: "y" }));
    await pollUntil("the orphan runs", DEADLINE, 20, async () =>
      readFileSync(`/proc/${orphan.pid}/cmdline`, "utf8").includes(file) ? true : undefined,
    );
    const ended = await runtime.reapStale();
    assert.deepEqual(ended, [orphan.pid]);
    await pollUntil("the orphan gone", DEADLINE, 20, async () => (alive(orphan.pid!) ? undefined : true));
    assert.equal(alive(bystander.pid!), true);
    process.kill(-bystander.pid!, "SIGKILL");
  });

  it("pivotPath stays inside the image directory", async () => {
    const image = imageDir();
    await assert.rejects(resolveExecutable({ pivotContainerImageUrl: image.url, pivotPath: "../../etc/passwd" }, scratch), Refusal);
    await assert.rejects(resolveExecutable({ pivotContainerImageUrl: image.url, pivotPath: "bin/../../x" }, scratch), /outside the image/);
    await assert.rejects(
      resolveExecutable({ pivotContainerImageUrl: "https://example.com/image", pivotPath: "x" }, scratch),
      /file:\/\/ images only/,
    );
    await assert.rejects(resolveExecutable({ pivotContainerImageUrl: image.url, pivotPath: "bin/missing" }, scratch), /does not exist/);
    // A symlink out of the image is refused too.
    const { symlinkSync } = await import("node:fs");
    symlinkSync("/bin/sh", path.join(image.dir, "bin", "escape"));
    await assert.rejects(resolveExecutable({ pivotContainerImageUrl: image.url, pivotPath: "bin/escape" }, scratch), /through a symlink/);
    const ok = await resolveExecutable({ pivotContainerImageUrl: image.url, pivotPath: "/bin/../bin/server.mjs" }, scratch);
    // The image directory itself must lie under the image root, links resolved (docs/tvc-isolation.md §2).
    await assert.rejects(
      resolveExecutable({ pivotContainerImageUrl: "file:///usr/bin", pivotPath: "dash" }, scratch),
      /not under the TVC image root/,
    );
    symlinkSync("/usr/bin", path.join(scratch, "linked-out"));
    await assert.rejects(
      resolveExecutable({ pivotContainerImageUrl: pathToFileURL(path.join(scratch, "linked-out")).href, pivotPath: "dash" }, scratch),
      /not under the TVC image root/,
    );
    assert.equal(ok.file, realpathSync(image.file));
  });
});

describe("controller and ingress over the database", () => {
  let inst: Instance;
  let service: Service;
  let controller: TvcController | undefined;
  let ingress: TvcIngress | undefined;
  let observations: TvcObservations;
  const log = new MemoryLog();

  before(async () => {
    inst = await newInstance("sqlite");
    service = await openService([], inst.env);
  });
  after(async () => {
    await ingress?.close();
    await controller?.stop();
    await service.store.close();
    await inst.cleanup();
  });

  const now = Date.now();
  async function insertApp(): Promise<{ orgId: string; appId: string }> {
    const db = service.store.db;
    const orgId = newId();
    const setId = newId();
    const appId = newId();
    await db
      .insertInto("organizations")
      .values({
        id: orgId,
        name: "tvc",
        parent_id: null,
        root_quorum_threshold: 1,
        policy_version: 0,
        settings: "{}",
        created_at: now,
        updated_at: now,
      })
      .execute();
    await db
      .insertInto("tvc_operator_sets")
      .values({ id: setId, organization_id: orgId, name: "s", threshold: 1, identity: newId(), created_at: now, updated_at: now })
      .execute();
    await db
      .insertInto("tvc_apps")
      .values({
        id: appId,
        organization_id: orgId,
        name: "a",
        quorum_public_key: "02" + "11".repeat(32),
        manifest_set_id: setId,
        share_set_id: setId,
        enable_egress: 0,
        enable_debug_mode_deployments: 0,
        live_deployment_id: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    return { orgId, appId };
  }
  async function insertDeployment(orgId: string, appId: string, s: DeploymentSpec, approved = true): Promise<string> {
    const id = newId();
    await service.store.db
      .insertInto("tvc_deployments")
      .values({
        id,
        organization_id: orgId,
        app_id: appId,
        manifest_id: newId(),
        manifest: "",
        manifest_digest: "",
        spec: JSON.stringify(s),
        replicas: s.replicas,
        approved_at: approved ? now : null,
        deleted_at: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    return id;
  }
  const setLive = (appId: string, deploymentId: string | null) =>
    service.store.db.updateTable("tvc_apps").set({ live_deployment_id: deploymentId }).where("id", "=", appId).execute();
  const start = async () => {
    observations = new TvcObservations();
    const runtime = new LocalRuntime({ log, imageRoot: scratch, isolation: plainIsolation(), ...fast });
    controller = startController({ db: service.store.db, runtime, observations, log, intervalMs: 100 });
    ingress = await startIngress({ db: service.store.db, runtime, log, host: "127.0.0.1", port: 0 });
    return runtime;
  };

  it("runs approved deployments, routes the app's traffic to the live one only, stops deleted ones, and starts the same after a restart", async () => {
    const { orgId, appId } = await insertApp();
    const image = imageDir();
    const a = await insertDeployment(orgId, appId, spec(image, { pivotArgs: ["--label", "A"] }));
    const b = await insertDeployment(orgId, appId, spec(image, { pivotArgs: ["--label", "B"], replicas: 1 }));
    const unapproved = await insertDeployment(orgId, appId, spec(image, { pivotArgs: ["--label", "C"] }), false);
    await setLive(appId, a);
    let runtime = await start();
    const base = `${ingress!.url}/apps/${appId}`;

    await pollUntil("A and B ready", DEADLINE, 50, async () =>
      observations.get(a)?.readyReplicas === 2 && observations.get(b)?.readyReplicas === 1 ? true : undefined,
    );
    assert.equal(observations.get(unapproved), undefined, "an unapproved deployment does not run");
    remember([...runtime.pids(a), ...runtime.pids(b)]);

    // Live = A: round robin over A's two replicas, the path after the prefix forwarded.
    const answers = await Promise.all([1, 2, 3, 4].map(() => getJson(`${base}/hello/world?x=1`)));
    assert.ok(answers.every((r) => r.status === 200 && r.json.label === "A" && r.json.path === "/hello/world" && r.json.query === "?x=1"));
    assert.equal(new Set(answers.map((r) => r.json.port)).size, 2);
    const root = await getJson(base);
    assert.equal(root.json.path, "/");
    // Bodies are forwarded.
    const posted = await fetch(`${base}/echo`, { method: "POST", body: "hello body" });
    assert.equal(((await posted.json()) as { body: string }).body, "hello body");

    // Switch live: the next request goes to B.
    await setLive(appId, b);
    const fromB = await getJson(`${base}/x`);
    assert.equal(fromB.json.label, "B");

    // Unknown app → 404; an app without a live deployment → 503.
    const unknown = await getJson(`${ingress!.url}/apps/${newId()}/x`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.error, "no such app");
    assert.equal((await getJson(`${ingress!.url}/elsewhere`)).status, 404);
    await setLive(appId, null);
    const none = await getJson(`${base}/x`);
    assert.equal(none.status, 503);
    assert.equal(none.json.error, "the app has no live deployment");
    await setLive(appId, b);

    // Delete A: its processes go, B keeps running.
    const aPids = runtime.pids(a);
    await service.store.db.updateTable("tvc_deployments").set({ deleted_at: Date.now() }).where("id", "=", a).execute();
    await pollUntil("A's processes gone", DEADLINE, 50, async () => (aPids.some(alive) ? undefined : true));
    await pollUntil("A's observation gone", DEADLINE, 50, async () => (observations.get(a) ? undefined : true));
    assert.equal(observations.get(b)?.readyReplicas, 1);

    // Restart: stopping ends everything; a new controller starts what the database desires.
    const bPids = runtime.pids(b);
    await ingress!.close();
    await controller!.stop();
    assert.equal(bPids.some(alive), false);
    assert.equal(observations.get(b), undefined);
    runtime = await start();
    await pollUntil("B ready again", DEADLINE, 50, async () => (observations.get(b)?.readyReplicas === 1 ? true : undefined));
    const again = runtime.pids(b);
    remember(again);
    assert.ok(
      again.every((p) => !bPids.includes(p)),
      "new processes",
    );
    assert.equal((await getJson(`${ingress!.url}/apps/${appId}/y`)).json.label, "B");
    // A stays deleted.
    assert.equal(observations.get(a), undefined);
  });

  it("a failing pass is logged once and counted; the loop goes on", async () => {
    const { orgId, appId } = await insertApp();
    const dep = await insertDeployment(orgId, appId, spec(imageDir()));
    const seenApply: string[][] = [];
    let failures = 2;
    // A runtime that fails its first two applies (the adapter seam, not the controller, is faked).
    const flaky = {
      name: "flaky",
      apply: async (d: readonly DesiredDeployment[]) => {
        seenApply.push(d.map((x) => x.deploymentId));
        if (failures-- > 0) throw new Error("runtime hiccup");
      },
      observe: () => [],
      endpoints: () => [],
      onEvent: () => () => {},
      stop: async () => {},
    };
    const flakyLog = new MemoryLog();
    const registry = new client.Registry();
    const metrics = new TvcMetrics(registry);
    const c = startController({
      db: service.store.db,
      runtime: flaky,
      observations: new TvcObservations(),
      log: flakyLog,
      metrics,
      intervalMs: 100,
    });
    try {
      await pollUntil("passes after the failures", DEADLINE, 20, async () => (seenApply.length >= 4 ? true : undefined));
    } finally {
      await c.stop();
    }
    assert.ok(seenApply.every((ids) => ids.includes(dep)));
    assert.equal(
      flakyLog.lines.filter((l) => l.level === "error" && /reconcile pass failed/.test(l.msg)).length,
      1,
      "logged once per run of failures",
    );
    assert.ok(flakyLog.lines.some((l) => l.msg === "tvc reconcile passes again"));
    const text = await registry.metrics();
    assert.match(text, /sigil_tvc_reconcile_passes_total\{outcome="error"\} 2/);
    assert.match(text, /sigil_tvc_reconcile_passes_total\{outcome="ok"\} [1-9]/);
  });

  it("a replica that does not answer in time is a 504; a dead port a 502", async () => {
    // The ingress against a runtime whose endpoints are a silent socket and a closed port.
    const net = await import("node:net");
    const silent = net.createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const silentPort = (silent.address() as { port: number }).port;
    const { orgId, appId } = await insertApp();
    const dep = await insertDeployment(orgId, appId, spec(imageDir()), false);
    await setLive(appId, dep);
    let endpoints = [{ host: "127.0.0.1", port: silentPort }];
    const fake = {
      name: "fixed",
      apply: async () => {},
      observe: () => [],
      endpoints: () => endpoints,
      onEvent: () => () => {},
      stop: async () => {},
    };
    const ing = await startIngress({ db: service.store.db, runtime: fake, log, host: "127.0.0.1", port: 0, upstreamTimeoutMs: 300 });
    try {
      const slow = await getJson(`${ing.url}/apps/${appId}/`);
      assert.equal(slow.status, 504);
      silent.close();
      endpoints = [{ host: "127.0.0.1", port: silentPort }];
      const dead = await getJson(`${ing.url}/apps/${appId}/`);
      assert.equal(dead.status, 502);
    } finally {
      await ing.close();
      silent.close();
    }
  });
});
