// The workspace packages as an app gets them (lib/client/README.md "Install size"): `npm pack`
// into a temporary folder, then `npm install <tarball>` into a project folder, and the footprint of
// what was installed — the package and its dependencies, found as Node resolves them, with their
// on-disk size (files only; nested node_modules count as their own packages).
import { execFile } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
export const CLIENT_DIR = path.join(ROOT, "lib/client");
export const WEBHOOKS_DIR = path.join(ROOT, "lib/webhooks");

export interface PackedInstall {
  /** The .tgz npm pack wrote (in a temporary folder). */
  tarball: string;
  /** Bytes on disk of the installed package and its dependencies (file sizes). */
  sizeBytes: number;
  /** Packages installed for it, itself not counted. */
  dependencyCount: number;
}

/** `npm pack` of a workspace package into `destDir`; the tarball's path. */
export async function npmPack(packageDir: string, destDir: string): Promise<string> {
  const { stdout } = await run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", destDir], {
    cwd: packageDir,
    maxBuffer: 16 << 20,
  });
  const [info] = JSON.parse(stdout) as { filename: string }[];
  if (!info) throw new Error(`npm pack ${packageDir}: no output`);
  return path.join(destDir, info.filename);
}

/**
 * Installs `tarball` into `intoDir/node_modules` (npm install --no-save: an existing package.json
 * there is left as it is; the registry is asked only for what the npm cache lacks).
 */
export async function npmInstallTarball(tarball: string, intoDir: string, extra: string[] = []): Promise<void> {
  mkdirSync(intoDir, { recursive: true });
  await run(
    "npm",
    [
      "install",
      tarball,
      ...extra,
      "--prefix",
      intoDir,
      "--no-save",
      "--no-package-lock",
      "--prefer-offline",
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
    ],
    { cwd: intoDir, maxBuffer: 16 << 20 },
  );
}

/** The folder of package `name` as Node resolves it from `fromDir`, up to (and including) `topDir`. */
function findPackage(name: string, fromDir: string, topDir: string): string | undefined {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", name);
    if (existsSync(path.join(candidate, "package.json"))) return candidate;
    if (dir === topDir || path.dirname(dir) === dir) return undefined;
  }
}

function filesSize(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir)) {
    if (entry === "node_modules") continue;
    const p = path.join(dir, entry);
    const st = lstatSync(p);
    total += st.isDirectory() ? filesSize(p) : st.size;
  }
  return total;
}

/** Size and dependency count of installed package `name` in `intoDir` (its dependencies, transitively; optional peers not counted). */
export function measureInstalled(intoDir: string, name: string): { sizeBytes: number; dependencyCount: number } {
  const top = realpathSync(intoDir);
  const start = findPackage(name, top, top);
  if (!start) throw new Error(`${name} is not installed in ${intoDir}`);
  const seen = new Set<string>();
  const queue = [start];
  while (queue.length > 0) {
    const dir = realpathSync(queue.pop()!);
    if (seen.has(dir)) continue;
    seen.add(dir);
    const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies })) {
      const found = findPackage(dep, dir, top);
      if (found) queue.push(found);
      else if (!pkg.optionalDependencies?.[dep]) throw new Error(`${dep} (needed by ${dir}) is not installed`);
    }
  }
  let sizeBytes = 0;
  for (const dir of seen) sizeBytes += filesSize(dir);
  return { sizeBytes, dependencyCount: seen.size - 1 };
}

/**
 * Packs lib/client and installs the tarball into `<intoDir>/node_modules/@sigil/client`, so that
 * a bundle built in `intoDir` resolves the client from there. The peer @turnkey/crypto is not
 * installed (the app brings its own).
 */
export async function installPackedClient(intoDir: string): Promise<{ tarball: string; sizeBytes: number; dependencyCount: number }> {
  const packDir = mkdtempSync(path.join(os.tmpdir(), "sigil-pack-"));
  const tarball = await npmPack(CLIENT_DIR, packDir);
  await npmInstallTarball(tarball, intoDir);
  return { tarball, ...measureInstalled(intoDir, "@sigil/client") };
}

/** Removes a folder made for an install (tests' cleanup). */
export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
