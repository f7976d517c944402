// How replicas are kept away from the service (docs/tvc-isolation.md §3). Resolved once when
// TVC starts; a setting that cannot be honoured stops startup instead of running replicas with
// less isolation than the operator asked for.
//
// - Identity: when the service runs as root, replicas run as SIGIL_TVC_USER (default nobody),
//   never as root (spawn's uid/gid; libuv clears the supplementary groups first).
// - Sandbox: SIGIL_TVC_SANDBOX=bwrap runs each replica in bubblewrap — read-only system
//   directories and image, its own /tmp, /proc and /dev, new pid/ipc/uts (and cgroup)
//   namespaces, the host's network (the ingress reaches it on loopback), no data directory.
//   bwrap itself runs as the replica user, so it relies on unprivileged user namespaces; "auto"
//   uses it when a probe run works here, otherwise none.
// - Without a sandbox only the user switch and the file modes (data directory 0700, its files
//   0600: store/data-dir.ts) keep a replica out of the service's files, so "none" needs a
//   service running as root: a replica as the service's own user could read everything.
// - Every replica gets a private working directory (also its HOME), owned by the replica user,
//   mode 0700, under a per-service base directory that others may traverse but not list.
import { execFile } from "node:child_process";
import { accessSync, constants, existsSync, lstatSync, readlinkSync } from "node:fs";
import { chmod, lstat, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { isWithin, type Config } from "../config.ts";

const run = promisify(execFile);

export interface Isolation {
  sandbox: "bwrap" | "none";
  /** The bwrap executable (sandbox "bwrap"). */
  bwrap?: string;
  /** Set when the service runs as root: who replicas run as. */
  uid?: number;
  gid?: number;
  /** Per-service base of the replicas' private working directories (0711). */
  workBase: string;
  /** Directories no replica may see (the data directory), hidden in the sandbox when a system directory holds them. */
  hide: string[];
}

/** SIGIL_TVC_USER → uid/gid: `uid[:gid]`, or a name looked up with id(1) (NSS, not only /etc/passwd). */
export async function resolveUser(spec: string): Promise<{ uid: number; gid: number }> {
  const numeric = /^(\d+)(?::(\d+))?$/.exec(spec);
  let uid: number;
  let gid: number;
  if (numeric) {
    uid = Number(numeric[1]);
    gid = Number(numeric[2] ?? numeric[1]);
  } else {
    try {
      uid = Number((await run("id", ["-u", "--", spec])).stdout.trim());
      gid = Number((await run("id", ["-g", "--", spec])).stdout.trim());
    } catch {
      throw new Error(`SIGIL_TVC_USER: no user ${JSON.stringify(spec)} on this host`);
    }
  }
  if (!Number.isSafeInteger(uid) || !Number.isSafeInteger(gid)) throw new Error(`SIGIL_TVC_USER: cannot resolve ${JSON.stringify(spec)}`);
  if (uid === 0 || gid === 0) throw new Error("SIGIL_TVC_USER must not be root (uid or gid 0): replicas never run as root");
  return { uid, gid };
}

/** bwrap on PATH (or the usual places), if installed. */
export function findBwrap(): string | undefined {
  const dirs = [...(process.env.PATH ?? "").split(":").filter((d) => d !== ""), "/usr/bin", "/bin", "/usr/local/bin"];
  for (const d of dirs) {
    const p = path.join(d, "bwrap");
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

// System directories a replica may read (read-only); merged-/usr links are recreated as links.
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
// The parts of /etc programs need to run and to resolve names; not /etc as a whole.
const ETC = [
  "/etc/alternatives",
  "/etc/ca-certificates",
  "/etc/ssl",
  "/etc/hosts",
  "/etc/host.conf",
  "/etc/resolv.conf",
  "/etc/nsswitch.conf",
  "/etc/gai.conf",
  "/etc/localtime",
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/passwd",
  "/etc/group",
];

/**
 * bwrap's arguments up to (not including) `--`: the sandbox of one replica. Order matters:
 * /tmp is a fresh tmpfs first, then the image and the working directory are mounted over it
 * (either may live under the host's /tmp).
 */
export function bwrapArgs(imageDir: string, workDir: string, hide: readonly string[] = []): string[] {
  const args = [
    "--die-with-parent",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--hostname",
    "tvc-replica",
  ];
  for (const d of SYSTEM_DIRS) {
    let st;
    try {
      st = lstatSync(d);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) args.push("--symlink", readlinkSync(d), d);
    else if (st.isDirectory()) args.push("--ro-bind", d, d);
  }
  for (const e of ETC) if (existsSync(e)) args.push("--ro-bind", e, e);
  // A data directory that happens to lie under a system directory is covered by an empty tmpfs.
  for (const h of hide) if (SYSTEM_DIRS.some((d) => isWithin(d, h)) && existsSync(h)) args.push("--tmpfs", h);
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  args.push("--ro-bind", imageDir, imageDir, "--bind", workDir, workDir, "--chdir", workDir);
  return args;
}

/** One run of `bwrap … -- true` as the replica user: does the sandbox work on this host? */
async function bwrapWorks(bwrap: string, who: { uid?: number; gid?: number }, workBase: string): Promise<string | undefined> {
  try {
    await run(bwrap, [...bwrapArgs("/usr", workBase), "--", "/usr/bin/env", "true"], {
      timeout: 10_000,
      env: { PATH: "/usr/bin:/bin" },
      ...(who.uid !== undefined ? { uid: who.uid, gid: who.gid } : {}),
    });
    return undefined;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    return (e.stderr || e.message).trim().slice(0, 500);
  }
}

const WORK_PREFIX = "sigil-tvc-work-";

/**
 * A fresh base for the replicas' working directories (mkdtemp: an unpredictable name, so no other
 * user can plant it). Its path is recorded in the data directory, so the base a killed run left
 * behind is removed on the next start (the runtime removes its own when it stops).
 */
async function newWorkBase(dataDir: string): Promise<string> {
  const record = path.join(dataDir, "tvc-work-base");
  const previous = await readFile(record, "utf8").then(
    (t) => t.trim(),
    () => "",
  );
  if (previous !== "" && path.dirname(previous) === os.tmpdir() && path.basename(previous).startsWith(WORK_PREFIX)) {
    const st = await lstat(previous).catch(() => undefined);
    if (st?.isDirectory() && st.uid === process.getuid?.()) await rm(previous, { recursive: true, force: true });
  }
  const workBase = await mkdtemp(path.join(os.tmpdir(), WORK_PREFIX));
  // Traversable, not listable: each replica reaches its own directory only.
  await chmod(workBase, 0o711);
  await writeFile(record, workBase + "\n", { mode: 0o600 });
  return workBase;
}

export async function resolveIsolation(
  config: Pick<Config, "tvcUser" | "tvcSandbox" | "dataDir">,
  log: { info(o: object, m: string): void; warn(o: object, m: string): void },
): Promise<Isolation> {
  const asRoot = process.getuid?.() === 0;
  const who: { uid?: number; gid?: number } = asRoot ? await resolveUser(config.tvcUser) : {};
  const workBase = await newWorkBase(config.dataDir);
  let sandbox: Isolation["sandbox"] = "none";
  let bwrap: string | undefined;
  if (config.tvcSandbox !== "none") {
    bwrap = findBwrap();
    const problem = bwrap ? await bwrapWorks(bwrap, who, workBase) : "bwrap is not installed";
    if (!problem) sandbox = "bwrap";
    else if (config.tvcSandbox === "bwrap") throw new Error(`SIGIL_TVC_SANDBOX=bwrap, but bwrap does not work here: ${problem}`);
    else log.warn({ problem }, "tvc: bwrap is not usable; replicas run without a sandbox (SIGIL_TVC_SANDBOX=auto)");
  }
  if (sandbox === "none" && !asRoot) {
    throw new Error(
      "TVC replicas cannot be isolated: without a sandbox they would run as the service's own user and could read its data directory. " +
        "Run the service as root (replicas then run as SIGIL_TVC_USER) or make bwrap work (SIGIL_TVC_SANDBOX), or leave SIGIL_TVC_IMAGE_ROOT unset",
    );
  }
  log.info({ sandbox, user: asRoot ? config.tvcUser : "(the service's own)", uid: who.uid, gid: who.gid }, "tvc replicas isolation");
  return { sandbox, ...(bwrap && sandbox === "bwrap" ? { bwrap } : {}), ...who, workBase, hide: [config.dataDir] };
}
