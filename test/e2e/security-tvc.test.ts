// TVC must never become code execution on the host (docs/tvc-isolation.md). The real service as
// a child process on both engines, driven through the official @turnkey/sdk-server client:
//
// 1. The attack as reported: a sub-organization's root user — her own key only — creates a TVC
//    app with operator keys she made, deploys `file:///usr/bin` + `dash -c …` with dash's digest
//    and approves it with her operator key. Every TVC activity is refused with 403 / code 7
//    ("TVC is not enabled for organization …"), nothing is recorded, and nothing runs.
// 2. Without SIGIL_TVC_IMAGE_ROOT even a top-level organization is refused the same way, while
//    the TVC queries still answer (empty lists).
// 3. A top-level organization may deploy only from under the image root: a directory outside it,
//    or a link inside it leading out, is a 400 naming parameters.pivotContainerImageUrl.
// 4. A legitimate replica (the fixture app, under the image root) of a service running as root
//    runs as the unprivileged replica user, in a private 0700 working directory, sees none of the
//    service's settings, and can read neither the data directory (master.key, SQLite files) nor
//    a file only the service's user may read — with the bwrap sandbox and without one.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createHash, createSign, generateKeyPairSync, type KeyObject } from "node:crypto";
import { Turnkey } from "@turnkey/sdk-server";
import {
  engines,
  freePort,
  newInstance,
  sigilInit,
  startServer,
  type InitResult,
  type Instance,
  type RunningServer,
} from "../helpers/server.ts";
import { pollUntil } from "../helpers/raw-http.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";

const FIXTURE = path.resolve(import.meta.dirname, "../fixtures/tvc-app/server.mjs");
const NOT_ENABLED = /TVC is not enabled for organization/;
const asRoot = process.getuid?.() === 0;
/** Whether bubblewrap is installed (the service finds it the same way: PATH, then /usr/bin). */
const bwrap = [...(process.env.PATH ?? "").split(":"), "/usr/bin"].some((d) => d !== "" && existsSync(path.join(d, "bwrap")));

/** The image root of this file's servers, and one image directory with the fixture, readable by the replica user. */
const IMAGE_ROOT = realpathSync(mkdtempSync(path.join(tmpdir(), "sigil-sec-tvc-root-")));
chmodSync(IMAGE_ROOT, 0o755);
const IMAGE = path.join(IMAGE_ROOT, "fixture");
mkdirSync(IMAGE, { mode: 0o755 });
chmodSync(IMAGE, 0o755);
copyFileSync(FIXTURE, path.join(IMAGE, "server.mjs"));
chmodSync(path.join(IMAGE, "server.mjs"), 0o755);
const DIGEST = createHash("sha256")
  .update(readFileSync(path.join(IMAGE, "server.mjs")))
  .digest("hex");
/** Something only the service's OS user may read, in a place a replica can see (its own image). */
const OWNER_ONLY = path.join(IMAGE, "owner-only.txt");
writeFileSync(OWNER_ONLY, "for the service's user only\n", { mode: 0o600 });
chmodSync(OWNER_ONLY, 0o600);
/** A link inside the root that leads out of it. */
symlinkSync("/usr/bin", path.join(IMAGE_ROOT, "escape"));
process.once("exit", () => rmSync(IMAGE_ROOT, { recursive: true, force: true }));

/** dash, as the attacker used it: the directory, the file and its digest. */
const DASH_DIR = existsSync("/usr/bin/dash") ? "/usr/bin" : "/bin";
const DASH_DIGEST = existsSync(path.join(DASH_DIR, "dash"))
  ? createHash("sha256")
      .update(readFileSync(path.join(DASH_DIR, "dash")))
      .digest("hex")
  : "0".repeat(64);

interface Operator {
  privateKey: KeyObject;
  publicKey: string;
}
function newOperator(): Operator {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const jwk = publicKey.export({ format: "jwk" });
  return {
    privateKey,
    publicKey: `04${Buffer.from(jwk.x!, "base64url").toString("hex")}${Buffer.from(jwk.y!, "base64url").toString("hex")}`,
  };
}
const derSign = (key: KeyObject, bytes: Buffer) => createSign("sha256").update(bytes).sign(key).toString("hex");

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Client = any;
const clientFor = (url: string, organizationId: string, key: { publicKey: string; privateKey: string }): Client =>
  new Turnkey({
    apiBaseUrl: url,
    apiPublicKey: key.publicKey,
    apiPrivateKey: key.privateKey,
    defaultOrganizationId: organizationId,
  }).apiClient();

/** The SDK's stamped request sent as is, so the HTTP status and the whole error body are seen. */
async function raw(
  client: Client,
  stamp: string,
  params: object,
): Promise<{ status: number; body: { code?: number; message?: string; details?: { fieldViolations?: { field: string }[] }[] } }> {
  const signed = await client[stamp](params);
  const res = await fetch(signed.url, {
    method: "POST",
    body: signed.body,
    headers: { "content-type": "application/json", [signed.stamp.stampHeaderName]: signed.stamp.stampHeaderValue },
  });
  return { status: res.status, body: (await res.json()) as never };
}

function refusedNotEnabled(res: { status: number; body: { code?: number; message?: string } }, what: string): void {
  assert.equal(res.status, 403, `${what}: ${JSON.stringify(res.body)}`);
  assert.equal(res.body.code, 7, `${what}: ${JSON.stringify(res.body)}`);
  assert.match(res.body.message ?? "", NOT_ENABLED, what);
}

const appParams = (ops: Operator[], shares: Operator[], name = "tvc-app") => ({
  name,
  quorumPublicKey: newOperator().publicKey,
  manifestSetParams: {
    name: `${name}-manifest`,
    threshold: 1,
    newOperators: ops.map((o, i) => ({ name: `${name}-op-${i}`, publicKey: o.publicKey })),
  },
  shareSetParams: {
    name: `${name}-share`,
    threshold: 2,
    newOperators: shares.map((o, i) => ({ name: `${name}-share-${i}`, publicKey: o.publicKey })),
  },
});

const deployParams = (appId: string, image: string, pivotPath: string, digest: string, pivotArgs: string[]) => ({
  appId,
  qosVersion: "sec",
  pivotContainerImageUrl: `file://${image}`,
  pivotPath,
  pivotArgs,
  expectedPivotDigest: digest,
  healthCheckType: "TVC_HEALTH_CHECK_TYPE_HTTP",
  healthCheckPort: 3000,
  publicIngressPort: 3000,
  replicas: 1,
});

/** Processes whose command line names `needle` (the host's view). */
function processesNaming(needle: string): number[] {
  return readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e) && Number(e) !== process.pid)
    .filter((e) => {
      try {
        return readFileSync(`/proc/${e}/cmdline`, "utf8").includes(needle);
      } catch {
        return false;
      }
    })
    .map(Number);
}

interface Running {
  inst: Instance;
  server: RunningServer;
  init: InitResult;
  client: Client;
  ingressPort: number;
}

async function startService(engine: "sqlite" | "postgres", env: NodeJS.ProcessEnv): Promise<Running> {
  const ingressPort = await freePort();
  // No SIGIL_MASTER_KEY: the key is generated into the data directory (master.key), as a replica must not read it.
  const inst = await newInstance(engine, {
    SIGIL_MASTER_KEY: "",
    SIGIL_TVC_INGRESS_PORT: String(ingressPort),
    SIGIL_TVC_RECONCILE_MS: "200",
    ...env,
  });
  const init = await sigilInit(inst);
  const server = await startServer(inst);
  return {
    inst,
    server,
    init,
    ingressPort,
    client: clientFor(server.url, init.organizationId, { publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey }),
  };
}

async function stopService(r: Running | undefined): Promise<void> {
  await r?.server.stop();
  await r?.inst.cleanup();
}

for (const spec of engines()) {
  // With TVC on, the service starts only if it can isolate replicas (root, or a working bwrap).
  const cannotIsolate = asRoot || bwrap ? undefined : "TVC needs a root service or bwrap to isolate replicas (docs/tvc-isolation.md §3)";
  describe(`TVC is an operator feature [${spec.name}]`, { skip: spec.skip ?? cannotIsolate }, () => {
    let on: Running;
    before(async () => {
      // The sandbox does not matter for what is refused; "none" also works where bwrap does not.
      on = await startService(spec.name, { SIGIL_TVC_IMAGE_ROOT: IMAGE_ROOT, SIGIL_TVC_SANDBOX: asRoot ? "none" : "auto" });
    });
    after(() => stopService(on));

    it("the reported attack: a sub-organization's own root user is refused every TVC activity (403, code 7); nothing is recorded and nothing runs", async () => {
      const mallory = generateP256KeyPair();
      const sub = await on.client.createSubOrganization({
        subOrganizationName: "mallory",
        rootQuorumThreshold: 1,
        rootUsers: [
          {
            userName: "mallory",
            apiKeys: [{ apiKeyName: "mallory", publicKey: mallory.publicKey, curveType: "API_KEY_CURVE_P256" }],
            authenticators: [],
            oauthProviders: [],
          },
        ],
      });
      const subId: string = sub.subOrganizationId;
      assert.ok(subId);
      const attacker = clientFor(on.server.url, subId, { publicKey: mallory.publicKey, privateKey: mallory.privateKey });
      const op = newOperator();
      const marker = path.join(tmpdir(), `sigil-sec-tvc-pwned-${process.pid}-${spec.name}`);
      rmSync(marker, { force: true });

      refusedNotEnabled(await raw(attacker, "stampCreateTvcApp", appParams([op], [newOperator(), newOperator()], "pwn")), "create_tvc_app");
      // Through the SDK's own call the refusal arrives as its error, with the gRPC code.
      await assert.rejects(
        attacker.createTvcApp(appParams([op], [newOperator(), newOperator()], "pwn2")),
        (err: { message: string; code?: number }) => {
          assert.match(err.message, NOT_ENABLED);
          assert.equal(err.code, 7);
          return true;
        },
      );
      const fakeId = crypto.randomUUID();
      const attack = deployParams(fakeId, DASH_DIR, "dash", DASH_DIGEST, ["-c", `cat master.key > ${marker}; id > ${marker}.id`]);
      refusedNotEnabled(await raw(attacker, "stampCreateTvcDeployment", attack), "create_tvc_deployment");
      refusedNotEnabled(
        await raw(attacker, "stampCreateTvcManifestApprovals", {
          manifestId: fakeId,
          approvals: [{ operatorId: fakeId, signature: derSign(op.privateKey, Buffer.from("x")) }],
        }),
        "create_tvc_manifest_approvals",
      );
      refusedNotEnabled(await raw(attacker, "stampUpdateTvcAppLiveDeployment", { deploymentId: fakeId }), "set_tvc_app_live_deployment");
      refusedNotEnabled(await raw(attacker, "stampDeleteTvcDeployment", { deploymentId: fakeId }), "delete_tvc_deployment");
      refusedNotEnabled(await raw(attacker, "stampDeleteTvcAppAndDeployments", { appId: fakeId }), "delete_tvc_app_and_deployments");

      // Nothing was recorded: no app, no activity of any TVC type.
      assert.deepEqual((await attacker.getTvcApps({})).tvcApps, []);
      const { activities } = await attacker.getActivities({});
      assert.deepEqual(
        activities.filter((a: { type: string }) => a.type.includes("TVC")).map((a: { type: string }) => a.type),
        [],
      );
      // Nothing ran: the controller passes over the database find nothing to start.
      const passes = async () => {
        const text = await (await fetch(`${on.server.url}/metrics`)).text();
        return text
          .split("\n")
          .filter((l) => l.startsWith("sigil_tvc_reconcile_passes_total"))
          .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
      };
      const at = await passes();
      await pollUntil("two reconcile passes after the attempts", 15_000, 100, async () => ((await passes()) >= at + 2 ? true : undefined));
      assert.equal(existsSync(marker) || existsSync(`${marker}.id`), false, "the attacker's command never ran");
      assert.deepEqual(processesNaming(`${marker}`), [], "no process runs the attacker's command");
    });

    it("a top-level organization deploys only from under SIGIL_TVC_IMAGE_ROOT: outside it, or through a link leading out, is 400 naming the field", async () => {
      const op = newOperator();
      const app = await on.client.createTvcApp(appParams([op], [newOperator(), newOperator()], "rooted"));
      for (const [what, dir] of [
        ["a system directory", DASH_DIR],
        ["a directory beside the root", path.dirname(IMAGE_ROOT)],
        ["a link inside the root leading out", path.join(IMAGE_ROOT, "escape")],
        ["under a link leading out", path.join(IMAGE_ROOT, "escape", "x")],
      ] as const) {
        const res = await raw(on.client, "stampCreateTvcDeployment", deployParams(app.appId, dir, "dash", DASH_DIGEST, ["-c", "true"]));
        assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.code, 3);
        assert.match(res.body.message ?? "", /parameters\.pivotContainerImageUrl/, what);
        const fields = (res.body.details ?? []).flatMap((d) => d.fieldViolations ?? []).map((v) => v.field);
        assert.ok(fields.includes("parameters.pivotContainerImageUrl"), `${what}: ${JSON.stringify(res.body)}`);
      }
      const { tvcDeployments } = await on.client.getTvcAppDeployments({ appId: app.appId });
      assert.deepEqual(tvcDeployments, [], "none of them was recorded");
      // Under the root is accepted.
      const ok = await on.client.createTvcDeployment(deployParams(app.appId, IMAGE, "server.mjs", DIGEST, []));
      assert.ok(ok.deploymentId);
    });
  });

  describe(`TVC off: no SIGIL_TVC_IMAGE_ROOT [${spec.name}]`, { skip: spec.skip }, () => {
    let off: Running;
    before(async () => {
      off = await startService(spec.name, { SIGIL_TVC_IMAGE_ROOT: "" });
    });
    after(() => stopService(off));

    it("a top-level organization is refused every TVC activity the same way; the TVC queries still answer", async () => {
      const op = newOperator();
      refusedNotEnabled(await raw(off.client, "stampCreateTvcApp", appParams([op], [newOperator(), newOperator()])), "create_tvc_app");
      refusedNotEnabled(
        await raw(off.client, "stampCreateTvcDeployment", deployParams(crypto.randomUUID(), IMAGE, "server.mjs", DIGEST, [])),
        "create_tvc_deployment",
      );
      refusedNotEnabled(
        await raw(off.client, "stampDeleteTvcAppAndDeployments", { appId: crypto.randomUUID() }),
        "delete_tvc_app_and_deployments",
      );
      assert.deepEqual((await off.client.getTvcApps({})).tvcApps, []);
      const { activities } = await off.client.getActivities({});
      assert.ok(!activities.some((a: { type: string }) => a.type.includes("TVC")), "no TVC activity recorded");
      assert.ok(off.server.output().includes("tvc is off"), "the log says TVC is off");
    });
  });

  const modes: { sandbox: "none" | "bwrap"; skip?: string }[] = [
    { sandbox: "none", skip: asRoot ? undefined : "the service must run as root to drop replicas to SIGIL_TVC_USER" },
    { sandbox: "bwrap", skip: bwrap ? undefined : "bwrap is not installed" },
  ];
  for (const mode of modes) {
    describe(
      `a replica cannot reach the service's files or settings [${spec.name}, sandbox ${mode.sandbox}]`,
      { skip: spec.skip ?? mode.skip },
      () => {
        let svc: Running;
        before(async () => {
          svc = await startService(spec.name, { SIGIL_TVC_IMAGE_ROOT: IMAGE_ROOT, SIGIL_TVC_SANDBOX: mode.sandbox });
        });
        after(() => stopService(svc));

        it("runs as the replica user in a private 0700 directory, without the service's environment, and reads neither the data directory nor owner-only files", async (t) => {
          const dataDir = svc.inst.dataDir;
          assert.ok(existsSync(path.join(dataDir, "master.key")), "the master key is kept in the data directory");

          const op = newOperator();
          const app = await svc.client.createTvcApp(appParams([op], [newOperator(), newOperator()], `probe-${mode.sandbox}`));
          const dep = await svc.client.createTvcDeployment(deployParams(app.appId, IMAGE, "server.mjs", DIGEST, ["--label", mode.sandbox]));
          const { tvcDeployment } = await svc.client.getTvcDeployment({ deploymentId: dep.deploymentId });
          const bytes = Buffer.from(tvcDeployment.manifest.manifest, "base64");
          await svc.client.createTvcManifestApprovals({
            manifestId: dep.manifestId,
            approvals: [{ operatorId: app.manifestSetOperatorIds[0], signature: derSign(op.privateKey, bytes) }],
          });
          const base = `http://127.0.0.1:${svc.ingressPort}/apps/${app.appId}`;
          const get = async (p: string) => {
            const res = await fetch(`${base}${p}`);
            return res.status === 200 ? ((await res.json()) as Record<string, unknown>) : undefined;
          };
          const who = await pollUntil("the replica answering through the ingress", 30_000, 100, () =>
            get("/whoami").catch(() => undefined),
          );
          t.diagnostic(`whoami: ${JSON.stringify(who)}`);
          if (asRoot) {
            assert.equal(who.uid, 65534, "not root: the replica user (nobody)");
            assert.equal(who.gid, 65534);
            assert.ok(!(who.groups as number[]).includes(0), "no root group");
          }
          assert.notEqual(who.uid, 0);
          assert.equal(who.home, who.cwd, "HOME is the private working directory");
          assert.equal(who.cwdMode, 0o700);
          assert.equal(who.cwdUid, who.uid, "owned by the replica user");
          assert.ok(!String(who.cwd).startsWith(IMAGE), "the working directory is not the image");

          const env = (await get("/env")) as { keys: string[] };
          for (const secret of [
            "SIGIL_MASTER_KEY",
            "DATABASE_URL",
            "SIGIL_DATA_DIR",
            "SIGIL_TVC_IMAGE_ROOT",
            "TEST_DATABASE_URL",
            "SMTP_URL",
            "REDIS_URL",
          ]) {
            assert.ok(!env.keys.includes(secret), `${secret} reached the replica`);
          }
          assert.ok(!env.keys.some((k) => k.startsWith("SIGIL_")), `no SIGIL_* setting: ${env.keys.join(",")}`);
          // bwrap adds PWD (the working directory it changed to).
          assert.deepEqual(
            env.keys.filter((k) => !["PATH", "HOME", "PORT", "PWD"].includes(k)),
            [],
            "PATH, HOME and PORT only (and PWD)",
          );

          const paths = [
            dataDir,
            path.join(dataDir, "master.key"),
            path.join(dataDir, "sigil.db"),
            path.join(dataDir, "sigil.db-wal"),
            path.join(dataDir, "tvc-replicas"),
            OWNER_ONLY,
            "/root",
            "/etc/shadow",
          ];
          const { results } = (await get(`/probe?${paths.map((p) => `path=${encodeURIComponent(p)}`).join("&")}`)) as {
            results: { path: string; read: boolean; error?: string }[];
          };
          t.diagnostic(`probes: ${JSON.stringify(results)}`);
          for (const r of results) assert.equal(r.read, false, `the replica read ${r.path}`);
          // The probe works: the replica reads its own image.
          const own = (await get(`/probe?path=${encodeURIComponent(path.join(IMAGE, "server.mjs"))}`)) as { results: { read: boolean }[] };
          assert.equal(own.results[0]!.read, true, "the replica reads its own image");

          // The service makes its data directory 0700 and its files 0600.
          assert.equal(statSync(dataDir).mode & 0o777, 0o700);
          assert.equal(statSync(path.join(dataDir, "master.key")).mode & 0o777, 0o600);
          if (spec.name === "sqlite")
            for (const f of ["sigil.db", "sigil.db-wal", "sigil.db-shm"])
              if (existsSync(path.join(dataDir, f))) assert.equal(statSync(path.join(dataDir, f)).mode & 0o777, 0o600, f);
          // The isolation asked for is the one in use.
          assert.match(svc.server.output(), new RegExp(`"sandbox":"${mode.sandbox}"`), "the log names the sandbox in use");

          // Deleting the app ends the replica (in the sandbox too).
          const before = processesNaming(path.join(IMAGE, "server.mjs"));
          assert.ok(before.length >= 1, "the replica runs");
          await svc.client.deleteTvcAppAndDeployments({ appId: app.appId });
          await pollUntil("the replica's processes gone", 15_000, 50, async () =>
            processesNaming(path.join(IMAGE, "server.mjs")).length === 0 ? true : undefined,
          );
        });
      },
    );
  }

  describe(`the data directory is tightened on start [${spec.name}]`, { skip: spec.skip }, () => {
    it("a data directory and master.key left with loose modes are 0700 / 0600 after the service started", async () => {
      const inst = await newInstance(spec.name, { SIGIL_MASTER_KEY: "" });
      try {
        await sigilInit(inst);
        chmodSync(inst.dataDir, 0o755);
        chmodSync(path.join(inst.dataDir, "master.key"), 0o644);
        if (existsSync(path.join(inst.dataDir, "sigil.db"))) chmodSync(path.join(inst.dataDir, "sigil.db"), 0o644);
        const server = await startServer(inst);
        try {
          assert.equal(statSync(inst.dataDir).mode & 0o777, 0o700);
          assert.equal(statSync(path.join(inst.dataDir, "master.key")).mode & 0o777, 0o600);
          if (spec.name === "sqlite") {
            for (const f of ["sigil.db", "sigil.db-wal", "sigil.db-shm"]) {
              if (existsSync(path.join(inst.dataDir, f))) assert.equal(statSync(path.join(inst.dataDir, f)).mode & 0o777, 0o600, f);
            }
          }
        } finally {
          await server.stop();
        }
      } finally {
        await inst.cleanup();
      }
    });
  });
}
