// Runs the real service as a child process (exactly what `npm start` runs) on a fresh
// SQLite file or a fresh PostgreSQL database, for end-to-end tests.
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
export { freePort } from "./ports.ts";
import { newTestDatabase, type Engine, type TestDatabase, type TestDatabaseOptions } from "./engines.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "bin/sigil.mjs");
const run = promisify(execFile);

// The engines a test runs on, and a database of its own on each (engines.ts, docs/testing.md §5).
export { engines, type EngineSpec } from "./engines.ts";

/** Environment for one isolated service instance: its own data dir and database. */
export interface Instance {
  env: NodeJS.ProcessEnv;
  dataDir: string;
  cleanup(): Promise<void>;
}

/**
 * `emptyDatabase`: an engine with a database server (PostgreSQL) gives an empty database, for
 * what happens on one (`sigil init` migrating it, nodes starting together); otherwise the
 * database is a copy of the migrated template (pg-template.ts).
 */
export type InstanceOptions = TestDatabaseOptions;

export async function newInstance(engine: Engine, extra: NodeJS.ProcessEnv = {}, opts: InstanceOptions = {}): Promise<Instance> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "sigil-test-"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SIGIL_DATA_DIR: dataDir,
    SIGIL_MASTER_KEY: randomBytes(32).toString("hex"),
    LOG_LEVEL: "info",
    DATABASE_URL: "",
    // Servers started side by side must not fight over the TVC ingress's default port.
    SIGIL_TVC_INGRESS_PORT: "0",
    // Nor over the auth proxy's (8081): off unless a test asks for it (startServer's `authProxy`).
    SIGIL_AUTH_PROXY: "off",
    AUTH_PROXY_PORT: "0",
    ...extra,
  };
  let database: TestDatabase;
  try {
    database = await newTestDatabase(engine, opts);
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  if (database.url) env.DATABASE_URL = database.url;
  return {
    env,
    dataDir,
    async cleanup() {
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface InitResult {
  organizationId: string;
  userId: string;
  apiKeyId: string;
  apiPublicKey: string;
  apiPrivateKey: string;
}

export async function sigilInit(inst: Instance, args: string[] = ["--name", "Test Org"]): Promise<InitResult> {
  const { stdout } = await run(process.execPath, [BIN, "init", "--json", ...args], { env: inst.env, cwd: ROOT });
  return JSON.parse(stdout) as InitResult;
}

export interface RunningServer {
  url: string;
  port: number;
  /** The auth proxy's base URL, when it runs in this server (startServer's `authProxy`). */
  proxyUrl?: string;
  proxyPort?: number;
  proc: ChildProcess;
  /** Everything the server printed, for failure messages. */
  output(): string;
  stop(): Promise<void>;
  /** SIGKILL: no shutdown hooks, no flush. */
  kill(): Promise<void>;
}

/** A port free right now on 127.0.0.1, for a server whose own URL must be configured before it starts (SIGIL_PUBLIC_URL). */
/**
 * Spawns `sigil serve`. `authProxy: true` also runs the auth proxy in it (on a free port unless
 * AUTH_PROXY_PORT is set in the instance's env); the promise then waits for both to listen.
 */
export async function startServer(
  inst: Instance,
  args: string[] = [],
  opts: { port?: number; authProxy?: boolean; env?: NodeJS.ProcessEnv } = {},
): Promise<RunningServer> {
  const env = { ...inst.env, ...opts.env, ...(opts.authProxy === undefined ? {} : { SIGIL_AUTH_PROXY: opts.authProxy ? "on" : "off" }) };
  const withProxy = env.SIGIL_AUTH_PROXY === "on";
  const started = await spawnListeningOrRetry(
    [BIN, "serve", "--port", String(opts.port ?? 0), "--host", "127.0.0.1", ...args],
    env,
    withProxy ? ['"sigil listening"', '"sigil auth proxy listening"'] : ['"sigil listening"'],
  );
  const [port, proxyPort] = started.ports;
  return {
    ...started.handle,
    url: `http://127.0.0.1:${port}`,
    port: port!,
    ...(proxyPort !== undefined ? { proxyUrl: `http://127.0.0.1:${proxyPort}`, proxyPort } : {}),
  };
}

export interface RunningProxy {
  url: string;
  port: number;
  proc: ChildProcess;
  output(): string;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

/**
 * Spawns `sigil proxy` alone (as on another host): `env` is the whole environment — give it
 * SIGIL_AUTH_PROXY_SECRET (proxySecret()) and SIGIL_AUTH_PROXY_API_URL; AUTH_PROXY_PORT 0 by default.
 */
export async function startProxyProcess(env: NodeJS.ProcessEnv): Promise<RunningProxy> {
  const started = await spawnListeningOrRetry([BIN, "proxy", "--host", "127.0.0.1"], { AUTH_PROXY_PORT: "0", LOG_LEVEL: "info", ...env }, [
    '"sigil auth proxy listening"',
  ]);
  return { ...started.handle, url: `http://127.0.0.1:${started.ports[0]}`, port: started.ports[0]! };
}

/** `sigil proxy --print-secret` with the instance's master key: what another host's proxy is given. */
export async function proxySecret(inst: Instance): Promise<string> {
  const { stdout } = await run(process.execPath, [BIN, "proxy", "--print-secret"], { env: inst.env, cwd: ROOT });
  return stdout.trim();
}

interface Spawned {
  ports: number[];
  handle: { proc: ChildProcess; output(): string; stop(): Promise<void>; kill(): Promise<void> };
}

const STARTUP_DEADLINE_MS = 60_000;
/** Every server process a test started and that has not exited yet. */
const LIVE = new Set<ChildProcess>();
const reapAll = () => {
  for (const proc of LIVE) proc.kill("SIGKILL");
};
process.once("exit", reapAll);
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    reapAll();
    process.exit(128 + (signal === "SIGTERM" ? 15 : 2));
  });
}

/** A process's scheduler state and CPU seconds so far (Linux /proc), for a startup failure's message. */
function processState(pid: number | undefined, env: NodeJS.ProcessEnv): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const cpu = (Number(f[11]) + Number(f[12])) / 100;
    return `server state ${f[0]}, ${cpu.toFixed(2)} s of CPU, ${bundleFresh(env) ? "from the bundle" : "through tsx: dist/cli/main.mjs is older than src/ (bin/sigil.mjs)"}`;
  } catch {
    return "server state unknown";
  }
}

/** Whether bin/sigil.mjs runs the bundle (pinned by the run, or newer than every file under src/) rather than the sources through tsx. */
function bundleFresh(env: NodeJS.ProcessEnv): boolean {
  const newest = (dir: string): number =>
    Math.max(
      0,
      ...readdirSync(dir, { withFileTypes: true }).map((e) =>
        e.isDirectory() ? newest(path.join(dir, e.name)) : statSync(path.join(dir, e.name)).mtimeMs,
      ),
    );
  const bundle = path.join(ROOT, "dist/cli/main.mjs");
  return (
    env.SIGIL_NO_BUNDLE !== "1" &&
    existsSync(bundle) &&
    (env.SIGIL_BUNDLE_PINNED === "1" || statSync(bundle).mtimeMs >= newest(path.join(ROOT, "src")))
  );
}

/** Spawns the CLI and resolves with the port of each `messages` log line, in order, once all are printed. */
async function spawnListening(argv: string[], env: NodeJS.ProcessEnv, messages: string[]): Promise<Spawned> {
  // A server that hangs before it listens is asked, at the deadline, for Node's diagnostic
  // report (SIGUSR2): its JavaScript stack and open handles say where it waits.
  const reports = mkdtempSync(path.join(tmpdir(), "sigil-report-"));
  const proc = spawn(process.execPath, ["--report-on-signal", "--report-signal=SIGUSR2", `--report-directory=${reports}`, ...argv], {
    env,
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Never leave a server behind, even when the test process dies on an uncaught error or is
  // terminated by the runner at a test's deadline.
  LIVE.add(proc);
  let out = "";
  const exited = new Promise<void>((resolve) =>
    proc.once("exit", () => {
      LIVE.delete(proc);
      rmSync(reports, { recursive: true, force: true });
      resolve();
    }),
  );
  let settle = () => {};
  const ports = await new Promise<number[]>((resolve, reject) => {
    const found = new Map<string, number>();
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      if (out.length > 1_000_000) out = out.slice(-500_000);
      for (const line of out.split("\n")) {
        const m = messages.find((msg) => line.includes(msg));
        if (m === undefined || found.has(m)) continue;
        try {
          found.set(m, (JSON.parse(line) as { port: number }).port);
        } catch {
          /* partial line; wait for the rest */
        }
      }
      if (found.size === messages.length) resolve(messages.map((msg) => found.get(msg)!));
    };
    proc.stdout!.on("data", onData);
    proc.stderr!.on("data", (c: Buffer) => (out += c.toString()));
    proc.once("exit", (code) => reject(new Error(`server exited with ${code} before listening:\n${out}`)));
    // A server that neither listens nor exits fails the test with its output, not at the
    // runner's deadline. The timer phase of the event loop runs before the poll phase that
    // reads the pipes: were this process itself held up past the deadline, the server's line
    // could be waiting unread, so the pipes are read (setImmediate runs after the poll phase)
    // before the server is judged; the failure says how long the timer took to fire and what
    // CPU the server had, telling a hung server from a starved machine (docs/testing.md §4).
    const spawnedAt = Date.now();
    const deadline = setTimeout(
      () =>
        setImmediate(() => {
          if (found.size === messages.length) return;
          const state = processState(proc.pid, env);
          void diagnosticReport(proc, reports).then((report) => {
            proc.kill("SIGKILL");
            reject(
              new StartupHang(
                `server did not listen within ${STARTUP_DEADLINE_MS} ms (the deadline fired after ${Date.now() - spawnedAt} ms; ${state}):\n${out}\n${report}`,
              ),
            );
          });
        }),
      STARTUP_DEADLINE_MS,
    );
    settle = () => clearTimeout(deadline);
  }).finally(() => settle());
  const wait = (signal: NodeJS.Signals) => async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    await exited;
  };
  return { ports, handle: { proc, output: () => out, stop: wait("SIGTERM"), kill: wait("SIGKILL") } };
}

/** A server that neither listened nor exited by the startup deadline. */
class StartupHang extends Error {}

/** The hung server's diagnostic report, summarised: where its main thread is, and what it waits on. */
async function diagnosticReport(proc: ChildProcess, dir: string): Promise<string> {
  if (!proc.kill("SIGUSR2")) return "(no diagnostic report: the signal could not be sent)";
  for (let waited = 0; waited < 5_000; waited += 100) {
    const file = readdirSync(dir).find((f) => f.endsWith(".json"));
    if (file) {
      try {
        const r = JSON.parse(readFileSync(path.join(dir, file), "utf8")) as {
          javascriptStack?: { message?: string; stack?: string[] };
          libuv?: { type: string; is_active: boolean; address?: string; localEndpoint?: unknown; remoteEndpoint?: unknown }[];
        };
        const handles = (r.libuv ?? [])
          .filter((h) => h.is_active)
          .map((h) => `${h.type}${h.remoteEndpoint ? ` → ${JSON.stringify(h.remoteEndpoint)}` : ""}`);
        return `diagnostic report: stack ${JSON.stringify(r.javascriptStack?.stack ?? r.javascriptStack?.message)}; active handles ${JSON.stringify(handles)}`;
      } catch {
        /* still being written */
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return "(no diagnostic report within 5 s)";
}

/**
 * Spawns a server; one that hangs before listening is reported on stderr (with its diagnostic
 * report) and started once more, since a second hang in a row is the failure to look at
 * (docs/testing.md §4).
 */
async function spawnListeningOrRetry(argv: string[], env: NodeJS.ProcessEnv, messages: string[]): Promise<Spawned> {
  try {
    return await spawnListening(argv, env, messages);
  } catch (err) {
    if (!(err instanceof StartupHang)) throw err;
    process.stderr.write(`warning: a server hung before listening; starting it again. ${err.message}\n`);
    return spawnListening(argv, env, messages);
  }
}

/** The error a promise rejects with (the SDKs throw TurnkeyRequestError: message and gRPC code). */
export async function rejection(p: Promise<unknown>): Promise<{ message: string; code?: number }> {
  try {
    await p;
  } catch (err) {
    return err as { message: string; code?: number };
  }
  throw new Error("expected the request to fail");
}
