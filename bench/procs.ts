// Child processes, temp dirs and throw-away databases for the benchmark, all registered so
// that they are cleaned up whatever happens: normal end, exception, Ctrl-C, watchdog.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import SQLite from "better-sqlite3";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { InitResult } from "../test/helpers/server.ts";
import { affinityOf, pinnedCommand, pinning, pinPostgres } from "./pin.ts";

export const ROOT = path.resolve(import.meta.dirname, "..");
export const SIGIL_BIN = path.join(ROOT, "bin/sigil.mjs");

const children = new Set<ChildProcess>();
const dirs = new Set<string>();
const finalizers = new Set<() => Promise<void>>();
/** Undo steps that must run even on a synchronous exit (e.g. PostgreSQL's CPU affinity). */
const syncFinalizers = new Set<() => void>();

function runSyncFinalizers(): void {
  for (const f of [...syncFinalizers]) {
    syncFinalizers.delete(f);
    try {
      f();
    } catch (e) {
      console.error(`cleanup: ${(e as Error).message}`);
    }
  }
}

export function tempDir(prefix: string): string {
  const d = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.add(d);
  return d;
}

export function removeDir(d: string): void {
  rmSync(d, { recursive: true, force: true });
  dirs.delete(d);
}

/** Everything still alive is stopped (SIGTERM, then SIGKILL after 3 s), dirs removed, databases dropped. */
export async function cleanupAll(): Promise<void> {
  await Promise.all([...children].map((c) => stopChild(c, "SIGTERM", 3000)));
  for (const f of [...finalizers]) {
    finalizers.delete(f);
    await f().catch((e: unknown) => console.error(`cleanup: ${(e as Error).message}`));
  }
  runSyncFinalizers();
  for (const d of [...dirs]) removeDir(d);
}

/** Last resort on process exit: nothing async is possible any more. */
export function cleanupSync(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  runSyncFinalizers();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}

/**
 * Pins the PostgreSQL server behind `url` to the load generator's cores for the rest of the run
 * (docs/benchmarks.md §1.2); its affinity is restored by the cleanup, whatever ends the run.
 * Returns a line for the run's header.
 */
export async function pinDatabase(url: string, warn: (msg: string) => void): Promise<string> {
  if (!pinning()) return "PostgreSQL unpinned";
  const pinned = await pinPostgres(url, warn);
  if (!pinned) return "PostgreSQL unpinned";
  syncFinalizers.add(pinned.restore);
  return `PostgreSQL (postmaster pid ${pinned.pid} and its processes) on ${pinning()!.rest}, restored to ${pinned.original} at the end`;
}

function stopChild(c: ChildProcess, signal: NodeJS.Signals, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (c.exitCode !== null || c.signalCode !== null) {
      children.delete(c);
      return resolve();
    }
    const t = setTimeout(() => c.kill("SIGKILL"), graceMs);
    c.once("exit", () => {
      clearTimeout(t);
      children.delete(c);
      resolve();
    });
    c.kill(signal);
  });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = typeof a === "object" && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Resident memory of a child, sampled every 250 ms from /proc (Linux; NaN elsewhere): the
 * peak over its life and over a window the caller resets per scenario.
 */
export interface RssSampler {
  /** Peak RSS in MiB since the process started. */
  peakMb(): number;
  /** Peak RSS in MiB since the last call (then starts a new window). */
  windowPeakMb(): number;
  /** CPU time (user + system, all threads) the process has used so far, ms (NaN when unknown). */
  cpuMs(): number;
}

// /proc/<pid>/stat counts CPU time in clock ticks: 100 per second on Linux.
const TICK_MS = 10;

function sampleRss(proc: ChildProcess): RssSampler {
  let peak = Number.NaN;
  let windowPeak = Number.NaN;
  const read = () => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid}/status`, "utf8"));
      if (!m) return;
      const mb = Number(m[1]) / 1024;
      if (!(mb <= peak)) peak = mb;
      if (!(mb <= windowPeak)) windowPeak = mb;
    } catch {
      /* not Linux, or the process is gone */
    }
  };
  const timer = setInterval(read, 250);
  timer.unref();
  proc.once("exit", () => clearInterval(timer));
  return {
    cpuMs: () => {
      try {
        // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
        const stat = readFileSync(`/proc/${proc.pid}/stat`, "utf8");
        const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        return (Number(f[11]) + Number(f[12])) * TICK_MS;
      } catch {
        return Number.NaN;
      }
    },
    peakMb: () => (read(), peak),
    windowPeakMb: () => {
      read();
      const w = windowPeak;
      windowPeak = Number.NaN;
      return w;
    },
  };
}

export interface Running {
  url: string;
  proc: ChildProcess;
  rss: RssSampler;
  output(): string;
  /** Graceful stop (SIGTERM by default, SIGINT for profiles); SIGKILL after `graceMs`. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
}

/**
 * Spawns `node [nodeArgs] script [args]` that will listen on `port`, and waits until
 * GET /readyz answers 200 (Sigil at LOG_LEVEL=warn prints nothing when it listens).
 */
export async function startListening(opts: {
  nodeArgs: string[];
  script: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  port: number;
  cwd?: string;
  timeoutMs?: number;
}): Promise<Running> {
  // On the server's core when the run is pinned (docs/benchmarks.md §1.2).
  const cmd = pinnedCommand(process.execPath, [...opts.nodeArgs, opts.script, ...opts.args]);
  const proc = spawn(cmd.file, cmd.args, {
    env: opts.env,
    cwd: opts.cwd ?? ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(proc);
  let out = "";
  const keep = (c: Buffer) => {
    out += c.toString();
    if (out.length > 200_000) out = out.slice(-100_000);
  };
  proc.stdout!.on("data", keep);
  proc.stderr!.on("data", keep);
  if (process.env.BENCH_TEE) proc.stderr!.pipe(process.stderr);
  const url = `http://127.0.0.1:${opts.port}`;
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      children.delete(proc);
      throw new Error(`${path.basename(opts.script)} exited (${proc.exitCode ?? proc.signalCode}) before it was ready:\n${out}`);
    }
    try {
      const r = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) });
      if (r.status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      await stopChild(proc, "SIGKILL", 0);
      throw new Error(`${path.basename(opts.script)} not ready after ${opts.timeoutMs ?? 30_000} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const want = pinning()?.server;
  const got = proc.pid === undefined ? undefined : affinityOf(proc.pid);
  if (want !== undefined && got !== want) {
    await stopChild(proc, "SIGKILL", 0);
    throw new Error(`${path.basename(opts.script)} runs on cores ${got ?? "?"}, not on core ${want}: pinning failed`);
  }
  return {
    url,
    proc,
    rss: sampleRss(proc),
    output: () => out,
    stop: (signal = "SIGTERM", graceMs = 5000) => stopChild(proc, signal, graceMs),
  };
}

export type Engine = "sqlite" | "postgres";

export interface SigilInstance {
  engine: Engine;
  /** The Sigil tree whose bin/sigil.mjs runs (this one, or a "before" tree given by --before). */
  root: string;
  env: NodeJS.ProcessEnv;
  dataDir: string;
  /** The DATABASE_URL of the throw-away database (postgres only). */
  databaseUrl?: string;
  cleanup(): Promise<void>;
}

/** A fresh data dir (and, for postgres, a fresh database next to `adminUrl`'s), served by `root`'s bin. */
/** Trees whose bundle was built in this run (scripts/build.mjs: what `npm start` runs; trees without it run through tsx). */
const built = new Set<string>();
async function buildBundle(root: string): Promise<void> {
  // SIGIL_NO_BUNDLE=1: servers run from the sources (bin/sigil.mjs), so nothing to build.
  if (built.has(root) || process.env.SIGIL_NO_BUNDLE === "1") return;
  built.add(root);
  const script = path.join(root, "scripts/build.mjs");
  if (existsSync(script)) await run(process.execPath, [script], { cwd: root });
}

export async function newSigilInstance(engine: Engine, adminUrl?: string, root: string = ROOT): Promise<SigilInstance> {
  // The server runs as `npm start` runs it (the bundle), not through tsx.
  await buildBundle(root);
  const dataDir = tempDir("sigil-bench-");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SIGIL_DATA_DIR: dataDir,
    SIGIL_MASTER_KEY: randomBytes(32).toString("hex"),
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL || "warn",
    DATABASE_URL: "",
    // The load generator is one client at one address hammering one key: the rate limits
    // would measure themselves. Off unless the caller's environment sets them.
    SIGIL_RATE_LIMIT_CREDENTIAL: process.env.SIGIL_RATE_LIMIT_CREDENTIAL ?? "0",
    SIGIL_RATE_LIMIT_ORGANIZATION: process.env.SIGIL_RATE_LIMIT_ORGANIZATION ?? "0",
    SIGIL_RATE_LIMIT_ADDRESS: process.env.SIGIL_RATE_LIMIT_ADDRESS ?? "0",
    // Several bench servers run side by side: none takes the auth proxy's port.
    SIGIL_AUTH_PROXY: process.env.SIGIL_AUTH_PROXY ?? "off",
  };
  let drop: (() => Promise<void>) | undefined;
  let databaseUrl: string | undefined;
  if (engine === "postgres") {
    if (!adminUrl) throw new Error("postgres engine needs a database URL");
    const dbName = `sigil_bench_${randomBytes(6).toString("hex")}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${dbName}`);
    } finally {
      await admin.end();
    }
    const url = new URL(adminUrl);
    url.pathname = `/${dbName}`;
    databaseUrl = url.toString();
    env.DATABASE_URL = databaseUrl;
    drop = async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    };
    finalizers.add(drop);
  }
  return {
    engine,
    root: path.resolve(root),
    env,
    dataDir,
    databaseUrl,
    async cleanup() {
      if (drop) {
        finalizers.delete(drop);
        await drop();
      }
      removeDir(dataDir);
    },
  };
}

export type { InitResult };

const run = promisify(execFile);

/** `sigil init --json` of the instance's own tree (its migrations), exactly as the tests run it. */
export async function sigilInit(inst: SigilInstance, name: string): Promise<InitResult> {
  const { stdout } = await run(process.execPath, [path.join(inst.root, "bin/sigil.mjs"), "init", "--json", "--name", name], {
    env: inst.env,
    cwd: inst.root,
  });
  return JSON.parse(stdout) as InitResult;
}

/**
 * The node options `npm start` gives the server in `root`'s package.json (e.g. the heap limit),
 * so a benchmarked server runs as users run it — and an older tree as it ran then.
 */
export function serveNodeArgs(root: string): string[] {
  const start =
    (JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { scripts?: Record<string, string> }).scripts?.start ?? "";
  const m = /\bnode((?:\s+--\S+)*)\s+bin\/sigil\.mjs\s+serve\b/.exec(start);
  return m ? m[1]!.trim().split(/\s+/).filter(Boolean) : [];
}

export async function startSigil(inst: SigilInstance, nodeArgs: string[] = [], timeoutMs?: number): Promise<Running> {
  const port = await freePort();
  return startListening({
    nodeArgs: [...serveNodeArgs(inst.root), ...nodeArgs],
    cwd: inst.root,
    script: path.join(inst.root, "bin/sigil.mjs"),
    args: ["serve", "--port", String(port), "--host", "127.0.0.1"],
    env: inst.env,
    port,
    timeoutMs,
  });
}

export async function startBaseline(): Promise<Running> {
  const port = await freePort();
  return startListening({
    nodeArgs: ["--import", "tsx"],
    script: path.join(ROOT, "bench/baseline-server.ts"),
    args: ["--port", String(port)],
    env: { ...process.env },
    port,
  });
}

/** Rows in the activities table, read directly from the store (to check every 200 was a new activity). */
export async function countActivities(inst: SigilInstance): Promise<number> {
  if (inst.engine === "postgres") {
    const c = new pg.Client({ connectionString: inst.databaseUrl });
    await c.connect();
    try {
      const r = await c.query<{ n: string }>("select count(*) as n from activities");
      return Number(r.rows[0]?.n ?? 0);
    } finally {
      await c.end();
    }
  }
  const db = new SQLite(path.join(inst.dataDir, "sigil.db"), { fileMustExist: true });
  try {
    db.pragma("busy_timeout = 5000");
    return (db.prepare("select count(*) as n from activities").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/**
 * What every benchmark script does around its run: servers and databases are cleaned up on
 * exit, on SIGINT/SIGTERM and on failure (`bail`), and the run is aborted at its budget.
 */
export function guardRun(timeoutS: number): { bail(code: number, why?: string): Promise<never>; watchdog: NodeJS.Timeout } {
  let exiting = false;
  const bail = async (code: number, why?: string): Promise<never> => {
    if (!exiting) {
      exiting = true;
      if (why) console.error(why);
      await cleanupAll().catch((e: unknown) => console.error(`cleanup failed: ${(e as Error).message}`));
    }
    process.exit(code);
  };
  process.on("exit", cleanupSync);
  process.once("SIGINT", () => void bail(130, "interrupted: cleaning up"));
  process.once("SIGTERM", () => void bail(143, "terminated: cleaning up"));
  const watchdog = setTimeout(() => void bail(1, `benchmark exceeded its ${timeoutS} s budget: aborted`), timeoutS * 1000);
  watchdog.unref();
  return { bail, watchdog };
}
