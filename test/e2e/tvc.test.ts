// TVC end to end (docs/tvc.md §9): the real service as a child process on both
// engines, driven only through the official @turnkey/sdk-server client, running the fixture app
// (test/fixtures/tvc-app/server.mjs) with the local process runtime. The fixture is copied into
// per-test image directories so one copy's binary can be changed for the digest check without
// touching the repository. Operators are three P-256 key pairs made here; approvals are DER
// ECDSA signatures over the manifest bytes get_tvc_deployment returns. Processes are observed
// from the outside: pids from the fixture's echo through the ingress, liveness from /proc.
//
// TVC is on because SIGIL_TVC_IMAGE_ROOT names a directory, and the image directories lie under
// it (readable by the replica user, `nobody` when this runs as root). The sandbox is off here
// (SIGIL_TVC_SANDBOX=none): in bwrap's pid namespace the fixture would echo pids of that
// namespace, not the host's this test signals and watches. test/e2e/security-tvc.test.ts runs
// replicas in both modes (docs/tvc-isolation.md §3).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, cpSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync, appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ECDH, createHash, createSign, generateKeyPairSync, type KeyObject } from "node:crypto";
import { Turnkey } from "@turnkey/sdk-server";
import { freePort } from "../helpers/ports.ts";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";

const FIXTURE_DIR = path.resolve(import.meta.dirname, "../fixtures/tvc-app");
const PIVOT = "server.mjs";

interface Operator {
  name: string;
  privateKey: KeyObject;
  /** Hex, compressed or uncompressed (both are accepted; the test uses both). */
  publicKey: string;
}

function newOperator(name: string, compressed = false): Operator {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const jwk = publicKey.export({ format: "jwk" });
  const uncompressed = `04${Buffer.from(jwk.x!, "base64url").toString("hex")}${Buffer.from(jwk.y!, "base64url").toString("hex")}`;
  const hex = compressed ? (ECDH.convertKey(uncompressed, "prime256v1", "hex", "hex", "compressed") as string) : uncompressed;
  return { name, privateKey, publicKey: hex };
}

/** DER hex ECDSA P-256 / SHA-256, what an approval's `signature` is. */
function derSign(key: KeyObject, bytes: Buffer): string {
  return createSign("sha256").update(bytes).sign(key).toString("hex");
}

function sha256File(file: string): string {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

/** SIGIL_TVC_IMAGE_ROOT of this file's servers: images come from under it only. */
const IMAGE_ROOT = realpathSync(mkdtempSync(path.join(tmpdir(), "sigil-tvc-root-")));
chmodSync(IMAGE_ROOT, 0o755);
process.once("exit", () => rmSync(IMAGE_ROOT, { recursive: true, force: true }));

/** A fresh copy of the fixture: an image directory of the test's own, under the image root, readable by the replica user. */
function newImageDir(): string {
  const dir = mkdtempSync(path.join(IMAGE_ROOT, "image-"));
  chmodSync(dir, 0o755);
  cpSync(FIXTURE_DIR, dir, { recursive: true });
  return dir;
}

/** Running and not a zombie (an unreaped zombie still answers kill(pid, 0)). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/**
 * Live processes whose command line names a file in one of `dirs` (the replicas), or with
 * `anyCwd` also those working there (the fixture's grandchildren inherit its directory).
 */
function processesIn(dirs: string[], anyCwd = false): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    let cmdline = "";
    let cwd = "";
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
    } catch {
      continue;
    }
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      /* gone, or not ours to read */
    }
    if (dirs.some((d) => cmdline.includes(`${d}/`) || (anyCwd && (cwd === d || cwd.startsWith(`${d}/`)))) && isAlive(pid)) found.push(pid);
  }
  return found;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns a value other than undefined; fails with `what` and the last state at the deadline. */
async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 30_000,
  everyMs = 100,
  detail?: () => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for: ${what}${lastErr ? `\nlast error: ${String(lastErr)}` : ""}${detail ? `\n${detail()}` : ""}`,
      );
    }
    await sleep(everyMs);
  }
}

interface Echo {
  port: number;
  pid: number;
  childPid: number | null;
  label: string;
  method: string;
  path: string;
}

interface DeploymentStatus {
  deploymentId: string;
  readyReplicas: number;
  desiredReplicas: number;
  lastUpdatedTime: { seconds: string; nanos?: string };
}

// Without a sandbox, replicas can only be kept out of the service's files by running as another
// user, which needs a root service (docs/tvc-isolation.md §3): elsewhere the service refuses to start TVC.
const notRoot =
  process.getuid?.() === 0 ? undefined : "replicas without a sandbox need the service to run as root (docs/tvc-isolation.md §3)";

for (const spec of engines()) {
  describe(`TVC apps end to end through the SDK [${spec.name}]`, { skip: spec.skip ?? notRoot }, () => {
    let inst: Instance;
    let server: RunningServer;
    let init: InitResult;
    let ingressPort: number;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let client: any;
    let imageA: string;
    let imageB: string;
    const ops = [newOperator("op one"), newOperator("op two", true), newOperator("op three")];
    const shareOps = [newOperator("share one"), newOperator("share two", true)];
    const quorum = newOperator("quorum");
    let appId: string;
    let manifestOperatorIds: string[];
    let shareOperatorIds: string[];
    let depA: string;
    let depB: string;
    let depC: string;
    /** Pids seen per deployment, and the fixture's grandchildren (process-group kills). */
    const pidsA = new Set<number>();
    const pidsC = new Set<number>();
    const grandchildren = new Set<number>();
    let started = 0;

    const clientFor = (url: string) =>
      new Turnkey({
        apiBaseUrl: url,
        apiPublicKey: init.apiPublicKey,
        apiPrivateKey: init.apiPrivateKey,
        defaultOrganizationId: init.organizationId,
      }).apiClient();
    const ingress = (sub = "hello") => `http://127.0.0.1:${ingressPort}/apps/${appId}/${sub}`;
    const logTail = () => `server log (tail):\n${server.output().slice(-4000)}`;

    async function echo(sub = "hello"): Promise<{ status: number; body?: Echo; text: string }> {
      const res = await fetch(ingress(sub));
      const text = await res.text();
      let body: Echo | undefined;
      try {
        body = JSON.parse(text) as Echo;
      } catch {
        /* not the fixture answering */
      }
      return { status: res.status, body, text };
    }
    async function appStatus(): Promise<{ appId: string; deployments: DeploymentStatus[]; targetedDeploymentId: string }> {
      return (await client.getAppStatus({ appId })).appStatus;
    }
    async function statusOf(deploymentId: string): Promise<DeploymentStatus | undefined> {
      return (await appStatus()).deployments.find((d) => d.deploymentId === deploymentId);
    }
    async function readyCount(deploymentId: string): Promise<number> {
      return (await statusOf(deploymentId))?.readyReplicas ?? 0;
    }
    async function manifestBytes(deploymentId: string): Promise<Buffer> {
      const { tvcDeployment } = await client.getTvcDeployment({ deploymentId });
      return Buffer.from(tvcDeployment.manifest.manifest, "base64");
    }
    /** An approvals request sent raw (stamped by the SDK) so the HTTP status itself is seen. */
    async function rawApprove(
      manifestId: string,
      approvals: { operatorId: string; signature: string }[],
    ): Promise<{ status: number; body: { message?: string } }> {
      const signed = await client.stampCreateTvcManifestApprovals({ manifestId, approvals });
      const res = await fetch(signed.url, {
        method: "POST",
        body: signed.body,
        headers: { "content-type": "application/json", [signed.stamp.stampHeaderName]: signed.stamp.stampHeaderValue },
      });
      return { status: res.status, body: (await res.json()) as { message?: string } };
    }
    async function deploy(
      imageDir: string,
      digest: string,
      label: string,
      extraArgs: string[] = [],
    ): Promise<{ deploymentId: string; manifestId: string }> {
      return client.createTvcDeployment({
        appId,
        qosVersion: "local-e2e",
        pivotContainerImageUrl: `file://${imageDir}`,
        pivotPath: PIVOT,
        pivotArgs: ["--label", label, ...extraArgs],
        expectedPivotDigest: digest,
        healthCheckType: "TVC_HEALTH_CHECK_TYPE_HTTP",
        healthCheckPort: 3000,
        publicIngressPort: 3000,
        replicas: 2,
      });
    }
    async function approveBy(deploymentId: string, manifestId: string, which: number[]): Promise<string[]> {
      const bytes = await manifestBytes(deploymentId);
      const r = await client.createTvcManifestApprovals({
        manifestId,
        approvals: which.map((i) => ({ operatorId: manifestOperatorIds[i]!, signature: derSign(ops[i]!.privateKey, bytes) })),
      });
      return r.approvalIds;
    }
    /** Pids of a deployment's replicas, as their echoes through the ingress report them. */
    async function pidsThroughIngress(label: string, want: number, into: Set<number>): Promise<Set<number>> {
      const seen = new Set<number>();
      await until(
        `${want} distinct ${label} replicas answering through the ingress`,
        async () => {
          const e = await echo();
          if (e.status === 200 && e.body?.label === label) {
            seen.add(e.body.pid);
            into.add(e.body.pid);
            if (e.body.childPid) grandchildren.add(e.body.childPid);
          }
          return seen.size >= want ? true : undefined;
        },
        15_000,
        20,
      );
      return seen;
    }
    async function metricsText(): Promise<string> {
      const res = await fetch(`${server.url}/metrics`);
      assert.equal(res.status, 200);
      return res.text();
    }
    function metricSum(text: string, re: RegExp): number {
      let sum = 0;
      for (const line of text.split("\n")) {
        if (line.startsWith("#")) continue;
        const name = line.split(/[{ ]/)[0]!;
        if (re.test(name)) sum += Number(line.slice(line.lastIndexOf(" ") + 1));
      }
      return sum;
    }

    before(async () => {
      started = Date.now();
      imageA = newImageDir();
      imageB = newImageDir();
      ingressPort = await freePort();
      inst = await newInstance(spec.name, {
        SIGIL_TVC_RUNTIME: "local",
        SIGIL_TVC_INGRESS_PORT: String(ingressPort),
        SIGIL_TVC_IMAGE_ROOT: IMAGE_ROOT,
        SIGIL_TVC_SANDBOX: "none",
      });
      init = await sigilInit(inst);
      server = await startServer(inst);
      client = clientFor(server.url);
    });
    after(async () => {
      const stopAt = Date.now();
      await server?.stop();
      console.log(`final service stop took ${Date.now() - stopAt} ms`);
      // Whatever a failed step left behind is ended here, by pid (only processes of our image dirs).
      for (const pid of [...processesIn([imageA, imageB].filter(Boolean), true), ...grandchildren]) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          /* already gone */
        }
      }
      await inst?.cleanup();
      for (const dir of [imageA, imageB]) if (dir) rmSync(dir, { recursive: true, force: true });
      console.log(`tvc e2e [${spec.name}] took ${Date.now() - started} ms`);
    });

    it("creates an app with a new 2-of-3 manifest set and a 2-of-2 share set; nothing runs yet", async () => {
      const created = await client.createTvcApp({
        name: "fixture app",
        quorumPublicKey: quorum.publicKey,
        manifestSetParams: {
          name: "manifest operators",
          threshold: 2,
          newOperators: ops.map((o) => ({ name: o.name, publicKey: o.publicKey })),
        },
        shareSetParams: {
          name: "share operators",
          threshold: 2,
          newOperators: shareOps.map((o) => ({ name: o.name, publicKey: o.publicKey })),
        },
      });
      appId = created.appId;
      assert.ok(appId);
      assert.equal(Number(created.manifestSetThreshold), 2);
      assert.equal(created.manifestSetOperatorIds.length, 3);
      manifestOperatorIds = created.manifestSetOperatorIds;
      shareOperatorIds = created.shareSetOperatorIds;
      assert.equal(shareOperatorIds.length, 2);
      // Operator ids in the order given: check by public key through get_tvc_app.
      const { tvcApp } = await client.getTvcApp({ tvcAppId: appId });
      assert.equal(tvcApp.id, appId);
      assert.equal(tvcApp.name, "fixture app");
      assert.ok(!tvcApp.liveDeploymentId, "no live deployment yet");
      // publicDomain names the ingress this server really listens on.
      assert.equal(tvcApp.publicDomain, `localhost:${ingressPort}/apps/${appId}`);
      const byId = new Map<string, string>(
        tvcApp.manifestSet.operators.map((o: { id: string; publicKey: string }) => [o.id, o.publicKey.toLowerCase()]),
      );
      const uncompressedOf = (hex: string) => ECDH.convertKey(hex, "prime256v1", "hex", "hex", "uncompressed") as string;
      manifestOperatorIds = ops.map((o) => {
        const id = [...byId].find(([, k]) => uncompressedOf(k) === uncompressedOf(o.publicKey))?.[0];
        assert.ok(id, `operator ${o.name} is in the manifest set`);
        return id;
      });
      assert.deepEqual(new Set(manifestOperatorIds), new Set(created.manifestSetOperatorIds));
      const status = await appStatus();
      assert.equal(status.appId, appId);
      assert.deepEqual(status.deployments, []);
    });

    it("one approval does not start a deployment; forged and duplicate approvals are refused (4xx) and not counted; the second valid one starts it", async (t) => {
      const digest = sha256File(path.join(imageA, PIVOT));
      const created = await deploy(imageA, digest, "A");
      depA = created.deploymentId;
      assert.ok(created.manifestId);
      const bytes = await manifestBytes(depA);
      assert.ok(bytes.length > 0);

      // One of two.
      assert.equal((await approveBy(depA, created.manifestId, [0])).length, 1);
      // Two complete reconcile passes after the approval (one may have read the database
      // before it): had one approval been enough, the controller would have started it.
      const passes = async () => metricSum(await metricsText(), /^sigil_tvc_reconcile_passes_total$/);
      const passesAtApproval = await passes();
      await until(
        "two reconcile passes after the first approval",
        async () => ((await passes()) >= passesAtApproval + 2 ? true : undefined),
        15_000,
        100,
        logTail,
      );
      assert.equal(await readyCount(depA), 0, "one approval must not start replicas");
      assert.equal(processesIn([imageA]).length, 0, "no fixture process after one approval");
      const before2 = await echo();
      assert.notEqual(before2.status, 200, `ingress must not answer before the app has a live deployment: ${before2.text}`);
      assert.ok(!(await client.getTvcApp({ tvcAppId: appId })).tvcApp.liveDeploymentId);

      // Forgeries, each refused with a 4xx.
      const stranger = newOperator("stranger");
      const forged: [string, { operatorId: string; signature: string }][] = [
        ["signed by a key that is not op three's", { operatorId: manifestOperatorIds[2]!, signature: derSign(stranger.privateKey, bytes) }],
        [
          "op three's key over other bytes",
          { operatorId: manifestOperatorIds[2]!, signature: derSign(ops[2]!.privateKey, Buffer.concat([bytes, Buffer.from(" ")])) },
        ],
        [
          "op three's signature as raw r||s, not DER",
          {
            operatorId: manifestOperatorIds[2]!,
            signature: createSign("sha256").update(bytes).sign({ key: ops[2]!.privateKey, dsaEncoding: "ieee-p1363" }).toString("hex"),
          },
        ],
        [
          "a share-set operator, not of the manifest set",
          { operatorId: shareOperatorIds[0]!, signature: derSign(shareOps[0]!.privateKey, bytes) },
        ],
        ["op one again (duplicate)", { operatorId: manifestOperatorIds[0]!, signature: derSign(ops[0]!.privateKey, bytes) }],
      ];
      for (const [what, approval] of forged) {
        const res = await rawApprove(created.manifestId, [approval]);
        assert.ok(res.status >= 400 && res.status < 500, `${what}: expected 4xx, got ${res.status} ${JSON.stringify(res.body)}`);
        assert.ok(res.body.message, `${what}: the refusal says why`);
        t.diagnostic(`${what}: ${res.status} ${res.body.message}`);
      }
      const { tvcDeployment } = await client.getTvcDeployment({ deploymentId: depA });
      assert.equal(
        tvcDeployment.manifestApprovals.length,
        1,
        `only op one's approval is recorded: ${JSON.stringify(tvcDeployment.manifestApprovals)}`,
      );
      assert.equal((tvcDeployment as { status?: string }).status, "awaiting approvals 1/2");
      assert.equal(await readyCount(depA), 0);

      // Two of two: it runs, and goes live because the app had no live deployment.
      assert.equal((await approveBy(depA, created.manifestId, [1])).length, 1);
      await until(
        "deployment A: 2 of 2 replicas ready",
        async () => {
          const s = await statusOf(depA);
          return s && s.readyReplicas === 2 && s.desiredReplicas === 2 ? s : undefined;
        },
        30_000,
        100,
        logTail,
      );
      const status = await appStatus();
      assert.equal(status.targetedDeploymentId, depA);
      const a = status.deployments.find((d) => d.deploymentId === depA)!;
      assert.ok(a.lastUpdatedTime && Number(a.lastUpdatedTime.seconds) > 0, `lastUpdatedTime: ${JSON.stringify(a.lastUpdatedTime)}`);
      assert.equal((await client.getTvcApp({ tvcAppId: appId })).tvcApp.liveDeploymentId, depA);
      assert.equal((await client.getTvcDeployment({ deploymentId: depA })).tvcDeployment.manifestApprovals.length, 2);

      const e = await until(
        "the ingress answering from deployment A",
        async () => {
          const r = await echo("hello");
          return r.status === 200 && r.body?.label === "A" ? r.body : undefined;
        },
        10_000,
        100,
        logTail,
      );
      assert.equal(e.method, "GET");
      assert.ok(e.path.endsWith("/hello"), `path arrived: ${e.path}`);
      await pidsThroughIngress("A", 2, pidsA);
      assert.equal(processesIn([imageA]).length, 2, "exactly the two replicas run");

      // Replicas get a clean environment: no service secrets.
      const envRes = await fetch(ingress("env"));
      assert.equal(envRes.status, 200);
      const { keys } = (await envRes.json()) as { keys: string[] };
      assert.ok(keys.includes("PORT"));
      for (const secret of ["SIGIL_MASTER_KEY", "DATABASE_URL", "SIGIL_DATA_DIR", "TEST_DATABASE_URL"])
        assert.ok(!keys.includes(secret), `${secret} leaked to a replica`);
    });

    it("a killed replica is seen not ready, restarted with a new pid, and counted in sigil_tvc_* metrics", async () => {
      const restartsBefore = metricSum(await metricsText(), /^sigil_tvc_.*restart/);
      const victim = [...pidsA][0]!;
      process.kill(victim, "SIGKILL");
      await until("the killed replica gone", () => (isAlive(victim) ? undefined : true), 5_000, 20);
      await until(
        "readyReplicas of A dropping below 2",
        async () => ((await readyCount(depA)) < 2 ? true : undefined),
        10_000,
        20,
        logTail,
      );
      await until("readyReplicas of A back at 2", async () => ((await readyCount(depA)) === 2 ? true : undefined), 30_000, 100, logTail);
      const now = new Set(processesIn([imageA]));
      assert.equal(now.size, 2, "two replicas again");
      assert.ok(
        server
          .output()
          .split("\n")
          .some((l) => l.includes(depA) && l.includes(`"pid":${victim}`) && /restart/i.test(l)),
        `the log tells of the replica's exit and restart:\n${logTail()}`,
      );
      assert.ok(!now.has(victim));
      for (const p of now) pidsA.add(p);
      const text = await metricsText();
      assert.ok(
        metricSum(text, /^sigil_tvc_.*restart/) > restartsBefore,
        `a restart is counted:\n${text
          .split("\n")
          .filter((l) => l.includes("sigil_tvc_"))
          .join("\n")}`,
      );
      assert.match(text, /^sigil_tvc_\w*replicas\w*(\{[^}]*\})? 2$/m, "a replicas series shows 2");
    });

    it("a deployment whose binary no longer has the expected digest is refused: no process, and get_tvc_deployment, get_app_status and the log say so", async () => {
      const file = path.join(imageB, PIVOT);
      const digest = sha256File(file);
      appendFileSync(file, "\n// changed after the digest was taken\n");
      assert.notEqual(sha256File(file), digest);
      const created = await deploy(imageB, digest, "B");
      depB = created.deploymentId;
      await approveBy(depB, created.manifestId, [0, 2]);
      // Sigil's additions to the records: tvcDeployment.status and the app status entry's refusal.
      await until(
        "the digest refusal reported by get_tvc_deployment and get_app_status",
        async () => {
          const dep = (await client.getTvcDeployment({ deploymentId: depB })).tvcDeployment as { status?: string };
          const st = (await statusOf(depB)) as (DeploymentStatus & { refusal?: string }) | undefined;
          return /^refused: .*digest/i.test(dep.status ?? "") && /digest/i.test(st?.refusal ?? "") && st?.desiredReplicas === 2
            ? true
            : undefined;
        },
        20_000,
        200,
        logTail,
      );
      assert.equal(await readyCount(depB), 0);
      assert.deepEqual(processesIn([imageB]), [], "the changed binary never ran");
      assert.ok(
        server
          .output()
          .split("\n")
          .some((l) => l.includes(depB) && /digest/i.test(l)),
        `the log names the deployment and the digest:\n${logTail()}`,
      );
      const refusedSeries = (await metricsText())
        .split("\n")
        .filter((l) => l.startsWith("sigil_tvc_") && l.includes(depB) && /refus/.test(l));
      assert.ok(
        refusedSeries.some((l) => Number(l.slice(l.lastIndexOf(" ") + 1)) >= 1),
        `a sigil_tvc_* refusal series for B: ${refusedSeries.join("\n")}`,
      );
      // A is still live and answering.
      const e = await echo();
      assert.equal(e.status, 200);
      assert.equal(e.body?.label, "A");
      assert.equal((await appStatus()).targetedDeploymentId, depA);
    });

    it("a second good deployment runs before it is live, takes the ingress when set live, and the deleted one's processes are gone", async () => {
      const created = await deploy(imageA, sha256File(path.join(imageA, PIVOT)), "C", ["--spawn-child"]);
      depC = created.deploymentId;
      await approveBy(depC, created.manifestId, [1, 2]);
      await until(
        "deployment C: 2 replicas ready (not live)",
        async () => ((await readyCount(depC)) === 2 ? true : undefined),
        30_000,
        100,
        logTail,
      );
      // Only the live deployment gets traffic.
      for (let i = 0; i < 5; i++) assert.equal((await echo()).body?.label, "A");
      assert.equal((await appStatus()).targetedDeploymentId, depA);

      await client.updateTvcAppLiveDeployment({ deploymentId: depC });
      assert.equal((await client.getTvcApp({ tvcAppId: appId })).tvcApp.liveDeploymentId, depC);
      assert.equal((await appStatus()).targetedDeploymentId, depC);
      await until("the ingress answering from C", async () => ((await echo()).body?.label === "C" ? true : undefined), 5_000, 50, logTail);
      await pidsThroughIngress("C", 2, pidsC);
      for (let i = 0; i < 5; i++) assert.equal((await echo()).body?.label, "C", "every request goes to the live deployment");
      assert.ok(grandchildren.size > 0, "C's replicas report their grandchildren");

      const aPidsNow = [...pidsA].filter(isAlive);
      assert.equal(aPidsNow.length, 2, "A still runs while not live");
      const deleted = await client.deleteTvcDeployment({ deploymentId: depA });
      assert.equal(deleted.deploymentId, depA);
      await until("A's processes gone", () => (aPidsNow.some(isAlive) ? undefined : true), 15_000, 50, logTail);
      await until(
        "A gone from get_app_status (or desired 0)",
        async () => {
          const s = await statusOf(depA);
          return !s || s.desiredReplicas === 0 ? true : undefined;
        },
        10_000,
      );
      assert.equal((await client.getTvcDeployment({ deploymentId: depA })).tvcDeployment.delete, true);
      assert.equal((await echo()).body?.label, "C");
      assert.equal(processesIn([imageA]).length, 2, "only C's two replicas run from image A");
    });

    it("restart (stop → start): replicas stop with the service and the desired state is reconciled with new pids", async (t) => {
      const old = new Set([...pidsC].filter(isAlive));
      assert.equal(old.size, 2);
      const oldGrandchildren = [...grandchildren];
      const stopAt = Date.now();
      await server.stop();
      t.diagnostic(
        `service stop took ${Date.now() - stopAt} ms; ${
          server
            .output()
            .split("\n")
            .find((l) => l.includes('"stopped"')) ?? "no 'stopped' line"
        }`,
      );
      await until(
        "C's replicas and their grandchildren stopped with the service",
        () => ([...old, ...oldGrandchildren].some(isAlive) ? undefined : true),
        15_000,
        50,
      );
      server = await startServer(inst);
      client = clientFor(server.url);
      await until(
        "C: 2 replicas ready after the restart",
        async () => ((await readyCount(depC)) === 2 ? true : undefined),
        30_000,
        100,
        logTail,
      );
      const st = await appStatus();
      assert.equal(st.targetedDeploymentId, depC);
      assert.ok(!st.deployments.some((d) => d.deploymentId === depA && d.desiredReplicas > 0), "deleted A stays deleted");
      const fresh = await pidsThroughIngress("C", 2, pidsC);
      for (const p of fresh) assert.ok(!old.has(p), `pid ${p} is new`);
      assert.equal(processesIn([imageA]).length, 2);
      assert.deepEqual(processesIn([imageB]), [], "B is still refused after the restart");
      await until(
        "B still reported refused after the restart",
        async () => (/digest/i.test(((await statusOf(depB)) as { refusal?: string } | undefined)?.refusal ?? "") ? true : undefined),
        15_000,
        200,
        logTail,
      );
      const text = await metricsText();
      assert.ok(
        text.split("\n").some((l) => l.startsWith("sigil_tvc_")),
        "sigil_tvc_* series exported after the restart",
      );
    });

    it("a killed service (SIGKILL, no shutdown) leaves no duplicates: the next start ends the leftovers and runs the desired replicas", async () => {
      const old = new Set(processesIn([imageA]));
      assert.equal(old.size, 2);
      await server.kill();
      server = await startServer(inst);
      client = clientFor(server.url);
      await until("the killed service's replicas ended", () => ([...old].some(isAlive) ? undefined : true), 15_000, 50, logTail);
      await until(
        "C: 2 replicas ready after the kill and start",
        async () => ((await readyCount(depC)) === 2 ? true : undefined),
        30_000,
        100,
        logTail,
      );
      const fresh = await pidsThroughIngress("C", 2, pidsC);
      for (const p of fresh) assert.ok(!old.has(p), `pid ${p} is new`);
      assert.equal(processesIn([imageA]).length, 2, "exactly two replicas, no leftovers beside them");
    });

    it("deleting the app stops everything; no fixture process is left", async () => {
      const running = [...processesIn([imageA, imageB], true), ...[...grandchildren].filter(isAlive)];
      assert.ok(running.length >= 2);
      const r = await client.deleteTvcAppAndDeployments({ appId });
      assert.equal(r.appId, appId);
      await until(
        "every fixture process stopped",
        () => (running.some(isAlive) || processesIn([imageA, imageB], true).length > 0 ? undefined : true),
        15_000,
        50,
        logTail,
      );
      const { tvcApps } = await client.getTvcApps({});
      assert.ok(!tvcApps.some((a: { id: string }) => a.id === appId), "the app is gone from list_tvc_apps");
      assert.notEqual((await echo()).status, 200, "the ingress no longer answers for the app");
      assert.deepEqual([...grandchildren].filter(isAlive), []);
      assert.deepEqual(processesIn([imageA, imageB], true), [], "no process runs from or in the image directories");
    });
  });
}
