// The local process runtime (SIGIL_TVC_RUNTIME=local, the default): every replica of a desired
// deployment is a child process of the service, running `<image dir>/<pivotPath> <pivotArgs…>`
// where the image directory is the deployment's `file://` pivotContainerImageUrl.
//
// - Before every start (first start, restart, scale-up) the executable is resolved inside the
//   image directory (symlinks followed, never outside it) and its sha256 must equal
//   expectedPivotDigest; otherwise the start is refused: the deployment reports the refusal,
//   it is logged and counted, and the check is retried with backoff (a fixed binary starts).
//   The executable runs in place, so a swap between the check and exec (a few ms) is not caught.
// - The image directory must lie under the image root (SIGIL_TVC_IMAGE_ROOT), links resolved,
//   checked before every start like the digest (docs/tvc-isolation.md §2).
// - Each replica gets a free port in PORT and a clean environment (PATH, HOME, PORT only):
//   nothing of the service's (SIGIL_*, DATABASE_URL, SMTP_URL…) reaches the app. It runs as the
//   unprivileged replica user when the service is root, in a private working directory (also
//   its HOME, 0700), inside bwrap when that sandbox is on (tvc/isolation.ts,
//   docs/tvc-isolation.md §3).
// - Readiness: TVC_HEALTH_CHECK_TYPE_HTTP = GET /health on the replica's port answering 2xx;
//   TVC_HEALTH_CHECK_TYPE_GRPC = a TCP connect to that port (no gRPC health protocol here).
//   Ready after one success, not ready after `unhealthyAfter` failures in a row. A starting
//   replica is checked every 200 ms for its first 30 s, then every healthIntervalMs.
// - A replica that exits unasked is restarted after an exponential backoff (base·2ⁿ, capped;
//   n resets once a replica has run for a while).
// - Each replica leads its own process group; stopping sends SIGTERM to the group, then
//   SIGKILL after a grace period, so grandchildren go too. When the service process exits
//   without stopping the runtime, the groups are SIGKILLed from the exit handler; if it is
//   killed outright, `reapStale` ends what the pid records left behind on the next start.
//
// What it cannot enforce (docs/tvc.md §5.4): egress, isolation between apps, resource limits, attestation.
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { access, chmod, chown, constants, mkdir, readdir, readFile, realpath, rm, stat, unlink, writeFile } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { DesiredDeployment, DeploymentSpec } from "./spec.ts";
import type { ObservedDeployment } from "./observed.ts";
import type { ReplicaEndpoint, RuntimeEvent, TvcRuntime } from "./runtime.ts";
import type { TvcMetrics } from "./metrics.ts";
import { bwrapArgs, type Isolation } from "./isolation.ts";
import { isWithin } from "../config.ts";

/** The logger calls the runtime makes (pino's shape). */
export interface RuntimeLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface LocalRuntimeOptions {
  log: RuntimeLog;
  metrics?: TvcMetrics;
  /** Where replicas listen and are health-checked. Default 127.0.0.1. */
  host?: string;
  /** Between health checks of one replica. Default 1000 ms. */
  healthIntervalMs?: number;
  /** One health check's deadline. Default 1000 ms. */
  healthTimeoutMs?: number;
  /** Failed checks in a row that make a ready replica not ready. Default 3. */
  unhealthyAfter?: number;
  /** First restart delay; doubles per crash in a row. Default 500 ms. */
  backoffBaseMs?: number;
  /** Longest restart (and refused-start retry) delay. Default 30 s. */
  backoffCapMs?: number;
  /** A replica that ran this long before exiting restarts at the base delay again. Default 10 s. */
  backoffResetMs?: number;
  /** SIGTERM → SIGKILL. Default 5 s. */
  stopGraceMs?: number;
  /** Directory for pid records (reapStale). Unset: none kept. */
  pidDir?: string;
  /** Longest replica output line logged. Default 2000 characters. */
  maxLogLine?: number;
  /** SIGIL_TVC_IMAGE_ROOT, a real path: no image from elsewhere runs. */
  imageRoot: string;
  /** Who replicas run as, the sandbox, and where their working directories are (tvc/isolation.ts). */
  isolation: Isolation;
}

export class Refusal extends Error {}

/** A deployment's executable, resolved inside its image directory. */
export async function resolveExecutable(
  spec: Pick<DeploymentSpec, "pivotContainerImageUrl" | "pivotPath">,
  imageRoot: string,
): Promise<{ dir: string; file: string }> {
  let url: URL;
  try {
    url = new URL(spec.pivotContainerImageUrl);
  } catch {
    throw new Refusal("pivotContainerImageUrl is not a URL");
  }
  if (url.protocol !== "file:") throw new Refusal(`the local runtime runs file:// images only, not ${url.protocol}`);
  let dir: string;
  try {
    dir = fileURLToPath(url);
  } catch (err) {
    throw new Refusal(`pivotContainerImageUrl: ${(err as Error).message}`);
  }
  // pivotPath is relative to the image; a leading "/" means the image's root.
  const rel = spec.pivotPath.replace(/^\/+/, "");
  if (rel === "") throw new Refusal("pivotPath names no file");
  const within = (root: string, p: string) => {
    const r = path.relative(root, p);
    return r !== "" && r !== ".." && !r.startsWith(".." + path.sep) && !path.isAbsolute(r);
  };
  if (!within(dir, path.resolve(dir, rel))) throw new Refusal("pivotPath leads outside the image directory");
  let realDir: string;
  let realFile: string;
  try {
    realDir = await realpath(dir);
  } catch {
    throw new Refusal(`image directory ${dir} does not exist`);
  }
  // Deployments recorded before the image root existed, or whose directory became a link
  // leading out of it, are refused here (docs/tvc-isolation.md §2).
  if (!isWithin(imageRoot, realDir))
    throw new Refusal(`image directory ${dir} is not under the TVC image root (SIGIL_TVC_IMAGE_ROOT), links resolved`);
  try {
    realFile = await realpath(path.resolve(realDir, rel));
  } catch {
    throw new Refusal(`executable ${rel} does not exist in the image directory`);
  }
  // Symlinks are followed, but only to files inside the image.
  if (!within(realDir, realFile)) throw new Refusal("pivotPath leads outside the image directory (through a symlink)");
  const st = await stat(realFile);
  if (!st.isFile()) throw new Refusal(`${rel} is not a regular file`);
  try {
    await access(realFile, constants.X_OK);
  } catch {
    throw new Refusal(`${rel} is not executable`);
  }
  return { dir: realDir, file: realFile };
}

export function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash("sha256");
    createReadStream(file)
      .on("error", reject)
      .on("data", (c) => h.update(c))
      .on("end", () => resolve(h.digest("hex")));
  });
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on("error", reject);
    s.listen(0, host, () => {
      const a = s.address();
      const port = typeof a === "object" && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** The whole environment a replica sees: nothing of the service's (docs/tvc-isolation.md §3). */
export function replicaEnv(port: number, home: string = os.tmpdir()): NodeJS.ProcessEnv {
  return { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: home, PORT: String(port) };
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is gone already.
  }
}

interface Replica {
  index: number;
  child?: ChildProcess;
  pid?: number;
  port?: number;
  ready: boolean;
  healthFailures: number;
  crashesInARow: number;
  startedAt: number;
  /** Set once the replica is asked to stop: its exit is not a crash. */
  stopping: boolean;
  timer?: NodeJS.Timeout;
  healthTimer?: NodeJS.Timeout;
  /** Resolves when the current process is gone. */
  exited?: Promise<void>;
}

interface Deployment {
  id: string;
  appId: string;
  spec: DeploymentSpec;
  /** The spec without replicas: a change means new processes. */
  specKey: string;
  replicas: Replica[];
  refusal?: string;
  lastUpdatedMs: number;
  removed: boolean;
}

const specKey = (s: DeploymentSpec) => JSON.stringify({ ...s, replicas: 0 });

export class LocalRuntime implements TvcRuntime {
  readonly name = "local";
  readonly #o: Required<Omit<LocalRuntimeOptions, "metrics" | "pidDir">> & Pick<LocalRuntimeOptions, "metrics" | "pidDir">;
  /** The working directories made, removed when their replica is stopped for good. */
  readonly #workDirs = new Set<string>();
  readonly #deployments = new Map<string, Deployment>();
  readonly #listeners = new Set<(e: RuntimeEvent) => void>();
  /** Stops under way (removed deployments, scaled-down replicas): stop() waits for them. */
  readonly #stopping = new Set<Promise<void>>();
  readonly #live = new Map<number, Replica>();
  #closed = false;
  readonly #onExit = () => {
    for (const pid of this.#live.keys()) killGroup(pid, "SIGKILL");
  };

  constructor(opts: LocalRuntimeOptions) {
    this.#o = {
      host: "127.0.0.1",
      healthIntervalMs: 1000,
      healthTimeoutMs: 1000,
      unhealthyAfter: 3,
      backoffBaseMs: 500,
      backoffCapMs: 30_000,
      backoffResetMs: 10_000,
      stopGraceMs: 5_000,
      maxLogLine: 2000,
      ...opts,
    };
    process.on("exit", this.#onExit);
  }

  onEvent(listener: (e: RuntimeEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(e: RuntimeEvent): void {
    for (const l of this.#listeners) {
      try {
        l(e);
      } catch (err) {
        this.#o.log.error({ err }, "tvc runtime event listener failed");
      }
    }
  }

  async apply(desired: readonly DesiredDeployment[]): Promise<void> {
    if (this.#closed) return;
    const want = new Map(desired.map((d) => [d.deploymentId, d]));
    for (const dep of [...this.#deployments.values()]) {
      const d = want.get(dep.id);
      if (!d) {
        this.#remove(dep, "no longer desired");
      } else if (specKey(d.spec) !== dep.specKey) {
        this.#remove(dep, "its spec changed");
      }
    }
    for (const d of desired) {
      let dep = this.#deployments.get(d.deploymentId);
      if (!dep) {
        dep = {
          id: d.deploymentId,
          appId: d.appId,
          spec: d.spec,
          specKey: specKey(d.spec),
          replicas: [],
          lastUpdatedMs: Date.now(),
          removed: false,
        };
        this.#deployments.set(dep.id, dep);
        this.#o.log.info(
          { tvc: { deploymentId: dep.id, appId: dep.appId, replicas: d.spec.replicas } },
          "tvc deployment desired: starting replicas",
        );
      }
      this.#scale(dep, Math.max(0, Math.floor(d.spec.replicas)));
    }
  }

  #scale(dep: Deployment, n: number): void {
    dep.spec = { ...dep.spec, replicas: n };
    while (dep.replicas.length < n) {
      const r: Replica = { index: dep.replicas.length, ready: false, healthFailures: 0, crashesInARow: 0, startedAt: 0, stopping: false };
      dep.replicas.push(r);
      this.#touch(dep);
      void this.#start(dep, r);
    }
    while (dep.replicas.length > n) {
      const r = dep.replicas.pop()!;
      this.#touch(dep);
      this.#track(this.#stopReplica(dep, r));
    }
  }

  #remove(dep: Deployment, why: string): void {
    dep.removed = true;
    this.#deployments.delete(dep.id);
    this.#o.log.info({ tvc: { deploymentId: dep.id, appId: dep.appId } }, `tvc deployment stopping: ${why}`);
    const all = Promise.all(dep.replicas.map((r) => this.#stopReplica(dep, r))).then(() => {
      this.#emit({ kind: "removed", deploymentId: dep.id, appId: dep.appId });
    });
    this.#track(all);
  }

  #track(p: Promise<unknown>): void {
    const done: Promise<void> = p.then(
      () => undefined,
      (err: unknown) => this.#o.log.error({ err }, "tvc replica stop failed"),
    );
    this.#stopping.add(done);
    void done.finally(() => this.#stopping.delete(done));
  }

  #touch(dep: Deployment): void {
    dep.lastUpdatedMs = Date.now();
  }

  #active(dep: Deployment, r: Replica): boolean {
    return !this.#closed && !dep.removed && !r.stopping;
  }

  #backoff(r: Replica): number {
    const n = Math.min(r.crashesInARow, 30);
    return Math.min(this.#o.backoffBaseMs * 2 ** Math.max(0, n - 1), this.#o.backoffCapMs);
  }

  #retryLater(dep: Deployment, r: Replica): void {
    const delayMs = this.#backoff(r);
    r.timer = setTimeout(() => {
      r.timer = undefined;
      void this.#start(dep, r);
    }, delayMs);
    r.timer.unref();
  }

  async #start(dep: Deployment, r: Replica): Promise<void> {
    if (!this.#active(dep, r)) return;
    const ids = { deploymentId: dep.id, appId: dep.appId, replica: r.index };
    let exe: { dir: string; file: string };
    try {
      exe = await resolveExecutable(dep.spec, this.#o.imageRoot);
      const digest = await sha256File(exe.file);
      if (digest !== dep.spec.expectedPivotDigest.toLowerCase()) {
        throw new Refusal(
          `the executable's sha256 is ${digest}, not the expectedPivotDigest ${dep.spec.expectedPivotDigest.toLowerCase()}`,
        );
      }
    } catch (err) {
      if (!this.#active(dep, r)) return;
      const reason = err instanceof Refusal ? err.message : `the executable cannot be checked: ${(err as Error).message}`;
      this.#o.metrics?.refusals.inc({ app_id: dep.appId, deployment_id: dep.id });
      r.crashesInARow++;
      if (dep.refusal !== reason) {
        dep.refusal = reason;
        this.#touch(dep);
        this.#o.log.warn({ tvc: ids, reason }, "tvc replica start refused");
        this.#emit({ kind: "refused", ...ids, detail: reason });
      }
      this.#retryLater(dep, r);
      return;
    }
    if (!this.#active(dep, r)) return;
    if (dep.refusal) {
      this.#o.log.info({ tvc: ids }, "tvc executable passes its digest check again");
      dep.refusal = undefined;
      this.#touch(dep);
    }
    let port: number;
    try {
      port = await freePort(this.#o.host);
    } catch (err) {
      this.#o.log.error({ tvc: ids, err }, "tvc: no free port for a replica");
      r.crashesInARow++;
      this.#retryLater(dep, r);
      return;
    }
    if (!this.#active(dep, r)) return;
    let child: ChildProcess;
    try {
      const iso = this.#o.isolation;
      const workDir = await this.#workDir(dep, r);
      if (!this.#active(dep, r)) return;
      const [command, args] =
        iso.sandbox === "bwrap" && iso.bwrap
          ? [iso.bwrap, [...bwrapArgs(exe.dir, workDir, iso.hide), "--", exe.file, ...dep.spec.pivotArgs]]
          : [exe.file, dep.spec.pivotArgs];
      child = spawn(command, args, {
        cwd: workDir,
        env: replicaEnv(port, workDir),
        // Never root: the replica user when the service is root (docs/tvc-isolation.md §3).
        ...(iso.uid !== undefined ? { uid: iso.uid, gid: iso.gid } : {}),
        // Its own process group (setsid): signals to -pid reach its children too.
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (err) {
      this.#o.log.error({ tvc: ids, err }, "tvc replica could not be spawned");
      r.crashesInARow++;
      this.#retryLater(dep, r);
      return;
    }
    r.child = child;
    r.pid = child.pid;
    r.port = port;
    r.ready = false;
    r.healthFailures = 0;
    r.startedAt = Date.now();
    let gone!: () => void;
    r.exited = new Promise<void>((res) => (gone = res));
    let ended = false;
    const onGone = (code: number | null, signal: NodeJS.Signals | null, error?: Error) => {
      if (ended) return;
      ended = true;
      this.#gone(dep, r, child, code, signal, error);
      gone();
    };
    child.once("error", (err) => onGone(null, null, err));
    child.once("exit", (code, signal) => onGone(code, signal));
    this.#pipe(child, ids);
    if (child.pid !== undefined) {
      this.#live.set(child.pid, r);
      void this.#recordPid(child.pid, exe.file, dep.id);
    }
    this.#touch(dep);
    this.#o.log.info({ tvc: { ...ids, pid: child.pid, port } }, "tvc replica started");
    this.#emit({ kind: "started", ...ids, pid: child.pid, port });
    this.#scheduleHealth(dep, r, child, Math.min(100, this.#o.healthIntervalMs));
  }

  /**
   * The replica's private working directory (its HOME): made on first start, owned by the
   * replica user, 0700 — also when it exists already with other owner or mode.
   */
  async #workDir(dep: Deployment, r: Replica): Promise<string> {
    const iso = this.#o.isolation;
    const dir = path.join(iso.workBase, `${dep.id}-${r.index}`);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (iso.uid !== undefined) await chown(dir, iso.uid, iso.gid ?? iso.uid);
    await chmod(dir, 0o700);
    this.#workDirs.add(dir);
    return dir;
  }

  #pipe(child: ChildProcess, ids: { deploymentId: string; appId: string; replica: number }): void {
    for (const [name, stream] of [
      ["stdout", child.stdout],
      ["stderr", child.stderr],
    ] as const) {
      if (!stream) continue;
      const lines = createInterface({ input: stream, crlfDelay: Infinity });
      lines.on("line", (line) => this.#o.log.info({ tvc: { ...ids, pid: child.pid, stream: name } }, line.slice(0, this.#o.maxLogLine)));
    }
  }

  #gone(dep: Deployment, r: Replica, child: ChildProcess, code: number | null, signal: NodeJS.Signals | null, error?: Error): void {
    const ids = { deploymentId: dep.id, appId: dep.appId, replica: r.index };
    if (r.healthTimer) clearTimeout(r.healthTimer);
    r.healthTimer = undefined;
    if (child.pid !== undefined) {
      // Grandchildren left in the group are ended with their parent.
      killGroup(child.pid, "SIGKILL");
      this.#live.delete(child.pid);
      void this.#forgetPid(child.pid);
    }
    const wasReady = r.ready;
    r.ready = false;
    r.child = undefined;
    r.port = undefined;
    const pid = r.pid;
    r.pid = undefined;
    this.#touch(dep);
    if (wasReady) this.#emit({ kind: "unready", ...ids, pid });
    const how = error ? `failed: ${error.message}` : signal ? `killed by ${signal}` : `exited with code ${code}`;
    if (!this.#active(dep, r)) {
      this.#o.log.info({ tvc: { ...ids, pid } }, `tvc replica stopped (${how})`);
      this.#emit({ kind: "stopped", ...ids, pid, detail: how });
      return;
    }
    if (Date.now() - r.startedAt >= this.#o.backoffResetMs) r.crashesInARow = 0;
    r.crashesInARow++;
    const delayMs = this.#backoff(r);
    this.#o.metrics?.restarts.inc({ app_id: dep.appId, deployment_id: dep.id });
    this.#o.log.warn({ tvc: { ...ids, pid, delayMs } }, `tvc replica ${how}; restarting`);
    this.#emit({ kind: "exited", ...ids, pid, detail: how });
    this.#emit({ kind: "restart-scheduled", ...ids, delayMs });
    this.#retryLater(dep, r);
  }

  #scheduleHealth(dep: Deployment, r: Replica, child: ChildProcess, delayMs: number): void {
    r.healthTimer = setTimeout(() => {
      r.healthTimer = undefined;
      if (r.child !== child || !this.#active(dep, r) || r.port === undefined) return;
      const port = r.port;
      const probe = dep.spec.healthCheckType === "TVC_HEALTH_CHECK_TYPE_GRPC" ? this.#tcpCheck(port) : this.#httpCheck(port);
      void probe.then((ok) => {
        if (r.child !== child || !this.#active(dep, r)) return;
        this.#healthResult(dep, r, ok);
        // A starting replica is checked often (like a startup probe), so it is ready soon after
        // it listens; after the first 30 s, or once ready, at the normal interval.
        const starting = !r.ready && Date.now() - r.startedAt < 30_000;
        this.#scheduleHealth(dep, r, child, starting ? Math.min(200, this.#o.healthIntervalMs) : this.#o.healthIntervalMs);
      });
    }, delayMs);
    r.healthTimer.unref();
  }

  #healthResult(dep: Deployment, r: Replica, ok: boolean): void {
    const ids = { deploymentId: dep.id, appId: dep.appId, replica: r.index, pid: r.pid, port: r.port };
    if (ok) {
      r.healthFailures = 0;
      if (!r.ready) {
        r.ready = true;
        this.#touch(dep);
        this.#o.log.info({ tvc: ids }, "tvc replica ready");
        this.#emit({ kind: "ready", ...ids });
      }
      return;
    }
    r.healthFailures++;
    if (r.ready && r.healthFailures >= this.#o.unhealthyAfter) {
      r.ready = false;
      this.#touch(dep);
      this.#o.log.warn({ tvc: { ...ids, failures: r.healthFailures } }, "tvc replica failing its health check: not ready");
      this.#emit({ kind: "unready", ...ids });
    }
  }

  #httpCheck(port: number): Promise<boolean> {
    return new Promise((resolve) => {
      const req = http.get({ host: this.#o.host, port, path: "/health", agent: false, timeout: this.#o.healthTimeoutMs }, (res) => {
        res.resume();
        resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300);
      });
      req.on("timeout", () => req.destroy(new Error("health check timed out")));
      req.on("error", () => resolve(false));
    });
  }

  #tcpCheck(port: number): Promise<boolean> {
    return new Promise((resolve) => {
      const s = net.connect({ host: this.#o.host, port });
      const t = setTimeout(() => s.destroy(), this.#o.healthTimeoutMs);
      s.once("connect", () => {
        clearTimeout(t);
        s.destroy();
        resolve(true);
      });
      s.once("error", () => {
        clearTimeout(t);
        resolve(false);
      });
      s.once("close", () => {
        clearTimeout(t);
        resolve(false);
      });
    });
  }

  /** Stops a replica for good: its process group, then its working directory. */
  async #stopReplica(dep: Deployment, r: Replica): Promise<void> {
    await this.#stopProcess(dep, r);
    const dir = path.join(this.#o.isolation.workBase, `${dep.id}-${r.index}`);
    if (this.#workDirs.delete(dir)) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }

  async #stopProcess(dep: Deployment, r: Replica): Promise<void> {
    r.stopping = true;
    if (r.timer) clearTimeout(r.timer);
    r.timer = undefined;
    if (r.healthTimer) clearTimeout(r.healthTimer);
    r.healthTimer = undefined;
    const child = r.child;
    const exited = r.exited;
    if (!child || child.pid === undefined || !exited) return;
    const pid = child.pid;
    if (r.ready) {
      r.ready = false;
      this.#touch(dep);
    }
    killGroup(pid, "SIGTERM");
    const graceful = await Promise.race([exited.then(() => true), delay(this.#o.stopGraceMs).then(() => false)]);
    if (!graceful) {
      this.#o.log.warn(
        { tvc: { deploymentId: dep.id, appId: dep.appId, replica: r.index, pid, graceMs: this.#o.stopGraceMs } },
        "tvc replica did not stop after SIGTERM: SIGKILL",
      );
      killGroup(pid, "SIGKILL");
      await Promise.race([exited, delay(5_000)]);
    }
  }

  observe(): ObservedDeployment[] {
    return [...this.#deployments.values()].map((d) => ({
      deploymentId: d.id,
      appId: d.appId,
      desiredReplicas: d.spec.replicas,
      readyReplicas: d.replicas.filter((r) => r.ready).length,
      lastUpdatedMs: d.lastUpdatedMs,
      ...(d.refusal ? { refusal: d.refusal } : {}),
    }));
  }

  endpoints(deploymentId: string): ReplicaEndpoint[] {
    const d = this.#deployments.get(deploymentId);
    if (!d) return [];
    return d.replicas.filter((r) => r.ready && r.port !== undefined).map((r) => ({ host: this.#o.host, port: r.port! }));
  }

  /** The pids of the running replicas of a deployment (tests, diagnostics). */
  pids(deploymentId: string): number[] {
    return (this.#deployments.get(deploymentId)?.replicas ?? []).flatMap((r) => (r.pid === undefined ? [] : [r.pid]));
  }

  async stop(): Promise<void> {
    if (this.#closed) {
      await Promise.all([...this.#stopping]);
      return;
    }
    this.#closed = true;
    for (const dep of [...this.#deployments.values()]) this.#remove(dep, "the runtime is stopping");
    while (this.#stopping.size > 0) await Promise.all([...this.#stopping]);
    await rm(this.#o.isolation.workBase, { recursive: true, force: true }).catch(() => undefined);
    process.off("exit", this.#onExit);
    this.#listeners.clear();
  }

  // Pid records: one file per running replica, so processes a killed service left behind are
  // ended on the next start (reapStale) instead of holding ports and running unobserved.
  async #recordPid(pid: number, file: string, deploymentId: string): Promise<void> {
    if (!this.#o.pidDir) return;
    try {
      await mkdir(this.#o.pidDir, { recursive: true, mode: 0o700 });
      await writeFile(path.join(this.#o.pidDir, `${pid}.json`), JSON.stringify({ pid, file, deploymentId }), { mode: 0o600 });
    } catch (err) {
      this.#o.log.warn({ err, pid }, "tvc: could not record a replica's pid");
    }
  }

  async #forgetPid(pid: number): Promise<void> {
    if (!this.#o.pidDir) return;
    await unlink(path.join(this.#o.pidDir, `${pid}.json`)).catch(() => undefined);
  }

  /**
   * Ends replica process groups recorded by an earlier run of the service that did not stop
   * them (it was killed). A record is acted on only when the process still runs the recorded
   * executable (Linux /proc), so a reused pid is never signalled. Returns the pids ended.
   */
  async reapStale(): Promise<number[]> {
    const dir = this.#o.pidDir;
    if (!dir) return [];
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return [];
    }
    const ended: number[] = [];
    for (const name of names) {
      if (!/^\d+\.json$/.test(name)) continue;
      const at = path.join(dir, name);
      try {
        const rec = JSON.parse(await readFile(at, "utf8")) as { pid: number; file: string };
        if (this.#live.has(rec.pid)) continue;
        const cmdline = await readFile(`/proc/${rec.pid}/cmdline`, "utf8").catch(() => "");
        if (cmdline !== "" && cmdline.split("\0").includes(rec.file)) {
          killGroup(rec.pid, "SIGKILL");
          ended.push(rec.pid);
          this.#o.log.warn({ pid: rec.pid, file: rec.file }, "tvc: ended a replica left running by an earlier run of the service");
        }
      } catch {
        // An unreadable record is dropped.
      }
      await unlink(at).catch(() => undefined);
    }
    return ended;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((res) => setTimeout(res, ms).unref());
}
