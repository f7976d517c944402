// CPU pinning for the load benchmarks (docs/benchmarks.md §1.2): the server under test on core 0,
// the load generator (this process) and, where it can be reached, PostgreSQL on the other
// core(s), with `taskset` (util-linux). Where that is impossible — no taskset, one core, no
// permission — a warning is printed and everything runs unpinned.
//
// This module only talks to taskset, /proc and pgrep; procs.ts wraps the servers it spawns with
// `pinnedCommand` and registers the PostgreSQL restore with its cleanup.
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";

/** Which cores each side gets, as taskset CPU lists. */
export interface CoreSplit {
  /** The server under test. */
  server: string;
  /** The load generator and the database. */
  rest: string;
  /** Every core: what a restore sets when the original affinity is unknown. */
  all: string;
}

/** The split for a machine with `cores` cores, or why there is none. */
export function splitCores(cores: number): CoreSplit | { why: string } {
  if (!Number.isInteger(cores) || cores < 2) return { why: `${cores} core(s): nothing to split` };
  const last = cores - 1;
  return { server: "0", rest: last === 1 ? "1" : `1-${last}`, all: `0-${last}` };
}

/** The split in force for this run (set by `setupPinning`), or undefined: unpinned. */
let active: CoreSplit | undefined;

export function pinning(): CoreSplit | undefined {
  return active;
}

/** The CPU list a process (all its threads start from it) may run on, from /proc; undefined elsewhere. */
export function affinityOf(pid: number): string | undefined {
  try {
    return /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  } catch {
    return undefined;
  }
}

/** `taskset -a -p -c <cpus> <pid>`: every thread of a running process. Throws with taskset's message. */
export function pinPid(pid: number, cpus: string): void {
  const r = spawnSync("taskset", ["-a", "-p", "-c", cpus, String(pid)], { encoding: "utf8" });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error((r.stderr || r.stdout || `taskset exited ${r.status}`).trim());
}

function hasTaskset(): boolean {
  const r = spawnSync("taskset", ["--version"], { encoding: "utf8" });
  return !r.error && r.status === 0;
}

/**
 * Decides the split and pins this process (the load generator, all threads) to its side.
 * Returns a line for the run's header: where things run, or a warning and why it stays unpinned.
 */
export function setupPinning(opts: { disabled: boolean }): string {
  active = undefined;
  if (opts.disabled) return "CPU pinning off (--no-pin): server, load generator and database share all cores";
  const unpinned = (why: string) =>
    `WARNING: running unpinned (${why}): server, load generator and database share all cores, the ratios to the signature floor are less steady`;
  if (process.platform !== "linux") return unpinned(`taskset pins on Linux only, this is ${process.platform}`);
  if (!hasTaskset()) return unpinned("no taskset binary (util-linux)");
  const split = splitCores(os.availableParallelism());
  if ("why" in split) return unpinned(split.why);
  try {
    pinPid(process.pid, split.rest);
  } catch (e) {
    return unpinned(`cannot pin this process: ${(e as Error).message}`);
  }
  active = split;
  return `CPU pinning: servers on core ${split.server}, load generator (this process, pid ${process.pid}) on ${split.rest}`;
}

/** The command that starts `file args` on the server's core (unchanged when unpinned). */
export function pinnedCommand(file: string, args: string[]): { file: string; args: string[] } {
  // taskset execs the program: the child keeps the pid, and every thread it starts inherits the mask.
  return active ? { file: "taskset", args: ["-c", active.server, file, ...args] } : { file, args };
}

function children(pid: number): number[] {
  const r = spawnSync("pgrep", ["-P", String(pid)], { encoding: "utf8" });
  return (r.stdout ?? "")
    .split("\n")
    .filter(Boolean)
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0);
}

/**
 * The postmaster's pid: the first line of postmaster.pid in the server's data directory when
 * this process can read it, else the oldest process named postgres.
 */
async function postmasterPid(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  let dataDir: string | undefined;
  try {
    dataDir = (await c.query<{ d: string }>("SELECT current_setting('data_directory') AS d")).rows[0]?.d;
  } catch {
    /* not a superuser (pg_read_all_settings): fall back to pgrep */
  } finally {
    await c.end();
  }
  if (dataDir) {
    try {
      const pid = Number(readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
      if (Number.isInteger(pid) && pid > 0) return pid;
    } catch {
      /* another host's or container's path, or unreadable */
    }
  }
  const oldest = execFileSync("pgrep", ["-o", "-x", "postgres"], { encoding: "utf8" }).trim();
  const pid = Number(oldest);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error("no process named postgres on this machine");
  return pid;
}

/**
 * Pins a PostgreSQL server on this machine (postmaster and every process it has forked; new
 * backends inherit the postmaster's mask) to the load generator's side. Returns the restore —
 * the postmaster's original CPU list back on it and all its processes — or undefined (warned)
 * when it cannot: unpinned run, a remote or containerised server, no permission.
 */
export async function pinPostgres(
  url: string,
  warn: (msg: string) => void,
): Promise<{ pid: number; original: string; restore(): void } | undefined> {
  const split = active;
  if (!split) return undefined;
  const host = new URL(url).hostname;
  if (!["127.0.0.1", "localhost", "::1", "[::1]", ""].includes(host)) {
    warn(`WARNING: PostgreSQL at ${host} is not on this machine: left unpinned`);
    return undefined;
  }
  let pid: number;
  try {
    pid = await postmasterPid(url);
  } catch (e) {
    warn(`WARNING: PostgreSQL left unpinned: its postmaster was not found (${(e as Error).message})`);
    return undefined;
  }
  const original = affinityOf(pid) ?? split.all;
  try {
    pinPid(pid, split.rest);
  } catch (e) {
    warn(`WARNING: PostgreSQL left unpinned: cannot pin its postmaster (pid ${pid}): ${(e as Error).message}`);
    return undefined;
  }
  for (const child of children(pid)) {
    try {
      pinPid(child, split.rest);
    } catch {
      /* a backend that just exited */
    }
  }
  const restore = () => {
    for (const p of [pid, ...children(pid)]) {
      try {
        pinPid(p, original);
      } catch {
        /* gone */
      }
    }
  };
  return { pid, original, restore };
}
