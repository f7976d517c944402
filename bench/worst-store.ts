// The large store of `npm run bench:worst` (docs/benchmarks.md §8): ~1 M sub-organizations and
// ~1 M activities, written once by `sigil seed` (bulk SQL in batches, docs/benchmarks.md §3) and
// reused by later runs, because building it takes minutes. The cache is keyed by the size and
// the schema version, the list of migrations it was built with: a store whose list is a prefix
// of today's is reused, and the server migrates it forward when it starts (as it would a
// production store); any other list (a migration renamed or removed) builds it again.
//
// SQLite: a data directory under <tmpdir>/sigil-bench-worst/rows-<N>/. PostgreSQL: the database
// `sigil_bench_worst` next to the admin URL's, its schema version and credentials in the same
// cache directory. The credentials and master key are a benchmark's throw-away ones; the file
// holding them is readable by its owner only.
import { randomBytes } from "node:crypto";
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import type { SeedResult } from "../src/cli/seed.ts";
import { ROOT, type Engine } from "./procs.ts";

export const PG_DATABASE = "sigil_bench_worst";

export interface SeededStore {
  engine: Engine;
  env: NodeJS.ProcessEnv;
  seed: SeedResult;
  /** Seconds spent seeding in this run (0: reused). */
  builtS: number;
}

interface Meta {
  rows: number;
  /** The schema version: the migrations of the tree that built the store, in order. */
  migrations: string[];
  masterKey: string;
  seed: SeedResult;
}

/** The schema version of `root`'s tree: its migrations' names, in order. */
function migrations(root: string): string[] {
  return readdirSync(path.join(root, "src/store/migrations"))
    .filter((f) => /^\d+_.*\.ts$/.test(f))
    .sort();
}

/** The cached store's description, if it can serve a tree whose schema version is `now`. */
function readMeta(file: string, rows: number, now: string[]): Meta | undefined {
  try {
    const m = JSON.parse(readFileSync(file, "utf8")) as Meta;
    return m.rows === rows && m.migrations.length <= now.length && m.migrations.every((f, i) => f === now[i]) ? m : undefined;
  } catch {
    return undefined;
  }
}

function writeMeta(file: string, meta: Meta): void {
  writeFileSync(file, JSON.stringify(meta), { mode: 0o600 });
  chmodSync(file, 0o600);
}

async function runSeed(env: NodeJS.ProcessEnv, rows: number, root: string): Promise<SeedResult> {
  const args = [
    "seed",
    "--json",
    "--name",
    "Bench Worst Seeded Org",
    "--suborgs",
    String(rows),
    "--activities",
    String(rows),
    "--users",
    "1000",
    "--wallet-every",
    "100000",
  ];
  const child = spawn(process.execPath, [path.join(root, "bin/sigil.mjs"), ...args], { env, cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`sigil seed failed (${code}): ${err.slice(-2000)}`);
  return JSON.parse(out) as SeedResult;
}

async function admin<T>(adminUrl: string, f: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    return await f(c);
  } finally {
    await c.end();
  }
}

/** Does the database hold the seeded organization the cache names? */
async function pgHolds(url: string, organizationId: string): Promise<boolean> {
  try {
    return await admin(url, async (c) => (await c.query("select 1 from organizations where id = $1", [organizationId])).rowCount === 1);
  } catch {
    return false;
  }
}

/**
 * The seeded store for `engine`, built now if the cache has none for this schema and size.
 * `baseEnv` is the environment servers get (rate limits off, …); `adminUrl` the PostgreSQL one.
 */
export async function seededStore(
  engine: Engine,
  rows: number,
  baseEnv: NodeJS.ProcessEnv,
  adminUrl: string | undefined,
  log: (m: string) => void,
  root = ROOT,
): Promise<SeededStore> {
  const now = migrations(root);
  const dir = path.join(tmpdir(), "sigil-bench-worst", `rows-${rows}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const metaFile = path.join(dir, `${engine}.json`);
  const dataDir = path.join(dir, `${engine}-data`);
  let meta = readMeta(metaFile, rows, now);
  let url: string | undefined;
  if (engine === "postgres") {
    if (!adminUrl) throw new Error("postgres engine needs a database URL");
    const u = new URL(adminUrl);
    u.pathname = `/${PG_DATABASE}`;
    url = u.toString();
    if (meta && !(await pgHolds(url, meta.seed.organizationId))) meta = undefined;
  } else if (meta && !existsSync(path.join(dataDir, "sigil.db"))) {
    meta = undefined;
  }
  const envFor = (masterKey: string): NodeJS.ProcessEnv => ({
    ...baseEnv,
    SIGIL_DATA_DIR: dataDir,
    SIGIL_MASTER_KEY: masterKey,
    DATABASE_URL: url ?? "",
  });
  if (meta) {
    // The server started on it migrates it to `now` first thing.
    writeMeta(metaFile, { ...meta, migrations: now });
    return { engine, env: envFor(meta.masterKey), seed: meta.seed, builtS: 0 };
  }

  log(`  building the ${engine} store of ${rows.toLocaleString("en-US")} sub-organizations and activities (once; cached under ${dir})…`);
  rmSync(metaFile, { force: true });
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (engine === "postgres") {
    await admin(adminUrl!, async (c) => {
      await c.query(`DROP DATABASE IF EXISTS ${PG_DATABASE} WITH (FORCE)`);
      await c.query(`CREATE DATABASE ${PG_DATABASE}`);
    });
  }
  const masterKey = randomBytes(32).toString("hex");
  const t = performance.now();
  const seed = await runSeed(envFor(masterKey), rows, root);
  const builtS = (performance.now() - t) / 1000;
  writeMeta(metaFile, { rows, migrations: now, masterKey, seed });
  log(`  built in ${builtS.toFixed(0)} s (${seed.counts.rows.toLocaleString("en-US")} rows)`);
  return { engine, env: envFor(masterKey), seed, builtS };
}
