// Load benchmark of Sigil's foundation: the stamped query (by an API key, and by a session key
// from stamp_login) and stamped activity paths, next to a bare fastify baseline loaded
// identically (the ceiling of this machine's HTTP stack) and the signature floor (that route
// plus the one P-256 verification every stamped request does), against which the goals are set.
//
//   npm run bench [-- --postgres <url>] [--before DIR] [--connections N] [--duration S] [--warmup S] [--profile DIR] [--json FILE] [--no-pin]
//
//   --postgres URL / BENCH_DATABASE_URL   also run the Sigil scenarios on PostgreSQL, in a fresh
//                                         database created next to URL's and dropped afterwards
//   --connections N / BENCH_CONNECTIONS   concurrent keep-alive connections (default 32)
//   --duration S / BENCH_DURATION         measured seconds per run (default 10)
//   --warmup S / BENCH_WARMUP             unmeasured warm-up seconds before each run (default 2)
//   --skip-sqlite                         only the PostgreSQL runs (with --postgres)
//   --tag-members / BENCH_TAG_MEMBERS=1   create_user_tag also tags the submitting user (see below)
//   --no-sign                             skip the stamped sign_raw_payload scenario (run after
//                                         create_user_tag, reported as a share of its rate)
//   --policies N / BENCH_POLICIES         then compare activities in an organization holding N
//                                         policies with one holding none, same server, rounds
//                                         alternating between the two (default 100; 0 skips)
//   --rounds R / BENCH_ROUNDS             rounds of that comparison on SQLite (default 3)
//   --pg-rounds R / BENCH_PG_ROUNDS       rounds of that comparison on PostgreSQL (default 1: each
//                                         round is two runs, and PostgreSQL's activity runs are
//                                         the slowest of the benchmark)
//   --before DIR / BENCH_BEFORE           also measure the Sigil tree in DIR (e.g. a checkout of an
//                                         earlier commit with node_modules) on every scenario, in
//                                         its own data dir/database, alternating with this tree's
//                                         runs; the table then shows "before" next to "now"
//   --json FILE / BENCH_JSON              also write the figures as a JSON array to FILE, one object
//                                         per scenario and tree (docs/benchmarks.md §1.3)
//   --no-pin                              do not pin servers, this process and PostgreSQL to
//                                         separate cores (docs/benchmarks.md §1.2)
//   BENCH_LOG_LEVEL=info                  the server's log level (default warn: no per-request log lines)
//   --timeout S / BENCH_TIMEOUT           abort (and clean up) after S seconds in all (default: from
//                                         the runs the options ask for, printed at the start)
//   --profile DIR / BENCH_PROFILE_DIR     run each Sigil scenario of this tree in its own server
//                                         started with `node --cpu-prof`, keep the main thread's
//                                         profile as DIR/sigil-<engine>-<scenario>.cpuprofile and
//                                         print where the time goes (figures then include the
//                                         profiler's overhead: not representative)
//
// The baselines run first and last; ratios are to the mean of the two. The memory
// column is the server process's peak RSS (sampled every 250 ms) during the scenario; CPU ms/req
// is the server process's CPU time (all threads, from /proc) over the measured run divided by
// its requests: steadier than req/s on a shared machine. Round trips to PostgreSQL per request
// are counted by bench/statements.ts.
//
// Every server is a child process (autocannon runs in this one). Unless --no-pin, each server
// runs on core 0 and this process and PostgreSQL on the other core(s) (bench/pin.ts), so the
// floor and every scenario are measured with the same CPU available to the server.
import os from "node:os";
import path from "node:path";
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { randomBytes, randomUUID } from "node:crypto";
import autocannon from "autocannon";
import {
  cleanupAll,
  guardRun,
  countActivities,
  pinDatabase,
  newSigilInstance,
  sigilInit,
  startBaseline,
  startSigil,
  type Engine,
  type InitResult,
  type Running,
  type SigilInstance,
} from "./procs.ts";
import { FastStamper, newP256KeyPair, sdkStamp, type Stamped } from "./stamp.ts";
import { num, option } from "./options.ts";
import { formatSummary, summarize } from "./profile-summary.ts";
import { setupPinning } from "./pin.ts";
import { describeGoal, floorCpuRatio, floorRatio, goalMet, jsonRows, type Goal, type ScenarioFigures } from "./floor-report.ts";

// ---------------------------------------------------------------- options

const CONNECTIONS = num("--connections", "BENCH_CONNECTIONS", 32, 1, 1024);
const DURATION_S = num("--duration", "BENCH_DURATION", 10, 1, 60);
const WARMUP_S = num("--warmup", "BENCH_WARMUP", 2, 0, 30);
const PIPELINING = 1; // SDK clients send one request at a time per connection
const POSTGRES_URL = option("--postgres", "BENCH_DATABASE_URL");
const PROFILE_DIR = option("--profile", "BENCH_PROFILE_DIR");
const SKIP_SQLITE = process.argv.includes("--skip-sqlite");
const BEFORE_DIR = option("--before", "BENCH_BEFORE");
const JSON_FILE = option("--json", "BENCH_JSON");
const NO_PIN = process.argv.includes("--no-pin");
// Tag the submitting (root) user with every new tag. Off by default: the activity response
// embeds the voter's User object with ALL its tags, so each request would cost O(tags
// created so far) and the run would measure that growth rather than the pipeline.
const TAG_MEMBERS = process.argv.includes("--tag-members") || process.env.BENCH_TAG_MEMBERS === "1";

// The stamped sign_raw_payload scenario after create_user_tag (--no-sign skips it).
const SIGN = !process.argv.includes("--no-sign");
/** sign_raw_payload must run at this share of create_user_tag's rate or better. */
const SIGN_GOAL_PCT = 80;

const POLICIES = num("--policies", "BENCH_POLICIES", 100, 0, 100);
const ROUNDS = num("--rounds", "BENCH_ROUNDS", 3, 1, 10);
const PG_ROUNDS = num("--pg-rounds", "BENCH_PG_ROUNDS", 1, 1, 10);
const roundsOf = (engine: Engine) => (engine === "postgres" ? PG_ROUNDS : ROUNDS);

/** The goals, as shares of the signature floor of the same run, server pinned (docs/benchmarks.md §1). */
const GOALS: Record<Engine, { query: Goal; activity: Goal }> = {
  sqlite: { query: { minFloorPct: 85 }, activity: { minFloorPct: 33, maxP99: 20 } },
  postgres: { query: { minFloorPct: 60 }, activity: { minFloorPct: 15, maxP99: 40 } },
};
const MEMORY_GOAL_MB = 200;

// The budget follows from the runs asked for: each run is warm-up + measured time plus its
// setup (pre-stamping, settling counts), each engine and tree a database, an init and a start.
function plannedBudgetS(): number {
  const run = WARMUP_S + DURATION_S + 6;
  const trees = BEFORE_DIR ? 2 : 1;
  const engines: Engine[] = [...(SKIP_SQLITE ? [] : (["sqlite"] as const)), ...(POSTGRES_URL ? (["postgres"] as const) : [])];
  let runs = 4; // the two baselines, first and last
  let setups = 0;
  for (const e of engines) {
    runs += (SIGN ? 4 : 3) * trees + (POLICIES > 0 ? 2 * roundsOf(e) : 0);
    setups += trees + (POLICIES > 0 ? 1 : 0) + (PROFILE_DIR ? 2 * trees : 0);
  }
  return Math.ceil(1.3 * runs * run + 25 * setups + 30);
}
const TIMEOUT_S = num("--timeout", "BENCH_TIMEOUT", plannedBudgetS(), 10, 7200);
/** With POLICIES policies the activity rate may drop by at most this fraction. */
const POLICY_DROP_LIMIT = 0.1;

// ---------------------------------------------------------------- cleanup and watchdog

const { bail, watchdog } = guardRun(TIMEOUT_S);

// ---------------------------------------------------------------- load generation

interface Figures extends ScenarioFigures {
  /** Standard deviation of the per-second request counts. */
  sd: number;
  non2xx: number;
  errors: number;
  total: number;
  /** The same scenario served by the --before tree, in the same run. */
  before?: Figures;
  /** A comparison printed under the table. */
  note?: string;
}

/** A pre-stamped body per request; running dry stops the run early (never replays a body). */
class BodyPool {
  private i = 0;
  dry = false;
  constructor(readonly items: Stamped[]) {}
  next(): Stamped | undefined {
    const s = this.items[this.i];
    if (s) this.i++;
    else this.dry = true;
    return s;
  }
  get used(): number {
    return this.i;
  }
}

interface LoadSpec {
  url: string;
  path: string;
  /** One body replayed by every request... */
  fixed?: Stamped;
  /** ...or a fresh one per request. */
  pool?: BodyPool;
  seconds: number;
}

function load(spec: LoadSpec): Promise<autocannon.Result> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  const base: autocannon.Options = {
    url: spec.url,
    connections: CONNECTIONS,
    pipelining: PIPELINING,
    duration: spec.seconds,
    method: "POST",
    timeout: 10,
  };
  let opts: autocannon.Options;
  let instance: autocannon.Instance | undefined;
  if (spec.fixed) {
    opts = {
      ...base,
      headers: { ...headers, "x-stamp": spec.fixed.stamp },
      requests: [{ method: "POST", path: spec.path, body: spec.fixed.body }],
    };
  } else {
    const pool = spec.pool!;
    opts = {
      ...base,
      headers,
      requests: [
        {
          method: "POST",
          path: spec.path,
          // autocannon clones this request per connection and calls setupRequest for every
          // request it sends, so each connection gets its own body each time.
          setupRequest: (req) => {
            const s = pool.next();
            if (!s) {
              instance?.stop();
              return req; // not sent: the run is stopped and flagged
            }
            req.body = s.body;
            req.headers = { ...req.headers, "x-stamp": s.stamp };
            return req;
          },
        },
      ],
    };
  }
  return new Promise((resolve, reject) => {
    instance = autocannon(opts, (err: unknown, result: autocannon.Result) => (err ? reject(err as Error) : resolve(result)));
  });
}

/** The server's CPU time over `run`. */
async function withCpu(server: Running, run: () => Promise<autocannon.Result>): Promise<{ r: autocannon.Result; cpu: number }> {
  const t0 = server.rss.cpuMs();
  const r = await run();
  return { r, cpu: server.rss.cpuMs() - t0 };
}

function figures(scenario: string, engine: string, r: autocannon.Result, goal?: Goal, cpuMs?: number): Figures {
  const problems: string[] = [];
  if (r.non2xx > 0) {
    const codes = Object.entries(r.statusCodeStats ?? {})
      .filter(([c]) => !c.startsWith("2"))
      .map(([c, v]) => `${c}×${v.count ?? 0}`)
      .join(", ");
    problems.push(`${r.non2xx} non-2xx responses (${codes})`);
  }
  if (r.errors > 0) problems.push(`${r.errors} connection errors (${r.timeouts} timeouts)`);
  return {
    scenario,
    engine,
    rps: r.requests.average,
    sd: r.requests.stddev,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
    total: r.requests.total,
    problems,
    goal,
    // Requests answered, plus at most one in flight per connection at the stop.
    cpuMsPerReq: cpuMs !== undefined && r.requests.total > 0 ? cpuMs / r.requests.total : undefined,
  };
}

const fmtInt = (n: number) => Math.round(n).toLocaleString("en-US");
function log(msg: string) {
  process.stdout.write(`${msg}\n`);
}

// ---------------------------------------------------------------- requests

async function post(url: string, s: Stamped): Promise<{ status: number; json: unknown }> {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-stamp": s.stamp },
    body: new Uint8Array(s.body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await r.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    /* keep the text */
  }
  return { status: r.status, json };
}

const RUN_TAG = randomBytes(4).toString("hex");
let tagCounter = 0;
function activityBody(creds: InitResult): string {
  return JSON.stringify({
    type: "ACTIVITY_TYPE_CREATE_USER_TAG",
    timestampMs: String(Date.now()),
    organizationId: creds.organizationId,
    parameters: { userTagName: `bench-${RUN_TAG}-${++tagCounter}`, userIds: TAG_MEMBERS ? [creds.userId] : [] },
  });
}

/** The activity count once requests still in flight have landed (stable for 300 ms). */
async function settledActivityCount(inst: SigilInstance): Promise<number> {
  let last = await countActivities(inst);
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 300));
    const n = await countActivities(inst);
    if (n === last) return n;
    last = n;
  }
  return last;
}

/**
 * The activity a run loads: create_user_tag (the reference), or sign_raw_payload with a
 * secp256k1 wallet account of the organization (docs/benchmarks.md §1.1).
 */
interface ActivityKind {
  op: string;
  /** A distinct body per call. */
  body(creds: InitResult): string;
  /** Checks the answer of one request (throws with what is wrong). */
  check(json: unknown): void;
  describe: string;
}

const USER_TAG: ActivityKind = {
  op: "create_user_tag",
  body: activityBody,
  check: (json) => {
    const act = (json as { activity?: { status?: string } }).activity;
    if (act?.status !== "ACTIVITY_STATUS_COMPLETED")
      throw new Error(`create_user_tag did not complete: ${JSON.stringify(json).slice(0, 500)}`);
  },
  describe: `userIds ${TAG_MEMBERS ? "[submitter]" : "[]"}, a distinct body per request (unique userTagName, fresh timestampMs)`,
};

let payloadCounter = 0;
/** sign_raw_payload by `signWith` (an Ethereum wallet account): a distinct 32-byte payload per request, keccak256-hashed. */
function signKind(signWith: string): ActivityKind {
  return {
    op: "sign_raw_payload",
    body: (creds) =>
      JSON.stringify({
        type: "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2",
        timestampMs: String(Date.now()),
        organizationId: creds.organizationId,
        parameters: {
          signWith,
          payload: `0x${RUN_TAG}${(++payloadCounter).toString(16).padStart(56, "0")}`,
          encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
          hashFunction: "HASH_FUNCTION_KECCAK256",
        },
      }),
    check: (json) => {
      const act = (json as { activity?: { status?: string; result?: { signRawPayloadResult?: { r?: string; s?: string; v?: string } } } })
        .activity;
      const sig = act?.result?.signRawPayloadResult;
      if (
        act?.status !== "ACTIVITY_STATUS_COMPLETED" ||
        !sig ||
        sig.r?.length !== 64 ||
        sig.s?.length !== 64 ||
        !/^0[01]$/.test(sig.v ?? "")
      ) {
        throw new Error(`sign_raw_payload did not sign: ${JSON.stringify(json).slice(0, 500)}`);
      }
    },
    describe: `signWith ${signWith} (secp256k1 wallet account m/44'/60'/0'/0/0), PAYLOAD_ENCODING_HEXADECIMAL, HASH_FUNCTION_KECCAK256, a distinct 32-byte payload per request`,
  };
}

/** A wallet with one Ethereum account in the organization: its address. */
async function benchWallet(server: Running, creds: InitResult): Promise<string> {
  const body = JSON.stringify({
    type: "ACTIVITY_TYPE_CREATE_WALLET",
    timestampMs: String(Date.now()),
    organizationId: creds.organizationId,
    parameters: {
      walletName: `bench-wallet-${RUN_TAG}-${randomUUID()}`,
      accounts: [
        { curve: "CURVE_SECP256K1", pathFormat: "PATH_FORMAT_BIP32", path: "m/44'/60'/0'/0/0", addressFormat: "ADDRESS_FORMAT_ETHEREUM" },
      ],
    },
  });
  const r = await post(`${server.url}/public/v1/submit/create_wallet`, await sdkStamp(body, creds.apiPublicKey, creds.apiPrivateKey));
  const address = (r.json as { activity?: { result?: { createWalletResult?: { addresses?: string[] } } } }).activity?.result
    ?.createWalletResult?.addresses?.[0];
  if (r.status !== 200 || !address) throw new Error(`create_wallet failed (${r.status}): ${JSON.stringify(r.json).slice(0, 500)}`);
  return address;
}

function stampMany(stamper: FastStamper, creds: InitResult, count: number, kind: ActivityKind = USER_TAG): { pool: BodyPool; ms: number } {
  const t = performance.now();
  const items: Stamped[] = new Array(count);
  for (let i = 0; i < count; i++) items[i] = stamper.stamp(kind.body(creds));
  return { pool: new BodyPool(items), ms: performance.now() - t };
}

/**
 * A realistic policy set: allow/deny policies over resources, kinds and types, consensus by
 * user id, tag or count. Some match create_user_tag (USER / CREATE) and some do not; the
 * submitting root user meets the root quorum, so every policy is evaluated for the record
 * and the activity still completes.
 */
function benchPolicies(n: number): Record<string, string>[] {
  const resources = ["USER", "POLICY", "CREDENTIAL", "ORGANIZATION", "WALLET", "AUTH"];
  const actions = ["CREATE", "UPDATE", "DELETE"];
  return Array.from({ length: n }, (_, i) => {
    const resource = resources[i % resources.length]!;
    const action = actions[i % actions.length]!;
    const who = randomUUID();
    const consensus = [
      `approvers.any(user, user.id == '${who}')`,
      `approvers.any(user, user.tags.contains('${randomUUID()}'))`,
      `approvers.filter(user, user.tags.contains('${randomUUID()}')).count() >= 2`,
      `approvers.count() >= 2`,
    ][i % 4]!;
    const condition = [
      `activity.resource == '${resource}' && activity.action == '${action}'`,
      `activity.kind in ['CREATE_USERS', 'DELETE_USERS', 'CREATE_USER_TAG']`,
      `activity.type == 'ACTIVITY_TYPE_CREATE_API_KEYS_V2'`,
    ][i % 3]!;
    return {
      policyName: `bench-policy-${RUN_TAG}-${i}`,
      effect: i % 10 === 9 ? "EFFECT_DENY" : "EFFECT_ALLOW",
      condition,
      consensus,
      notes: "bench",
    };
  });
}

async function loadPolicies(server: Running, creds: InitResult, n: number): Promise<void> {
  const body = JSON.stringify({
    type: "ACTIVITY_TYPE_CREATE_POLICIES",
    timestampMs: String(Date.now()),
    organizationId: creds.organizationId,
    parameters: { policies: benchPolicies(n) },
  });
  const r = await post(`${server.url}/public/v1/submit/create_policies`, await sdkStamp(body, creds.apiPublicKey, creds.apiPrivateKey));
  const ids = (r.json as { activity?: { result?: { createPoliciesResult?: { policyIds?: string[] } } } }).activity?.result
    ?.createPoliciesResult?.policyIds;
  if (r.status !== 200 || ids?.length !== n)
    throw new Error(`create_policies failed (${r.status}): ${JSON.stringify(r.json).slice(0, 500)}`);
}

// ---------------------------------------------------------------- scenarios

/** The two baselines of one run: bare fastify, and fastify plus the stamp's signature check. */
interface Baselines {
  echo: Figures;
  verify: Figures;
}

async function runBaseline(): Promise<Baselines> {
  // The same bytes on the wire as an activity: a body of that shape and size and an X-Stamp
  // header of the same length, signed by a throw-away key (/echo ignores it, /verify checks it).
  const kp = newP256KeyPair();
  const fake: InitResult = {
    organizationId: randomUUID(),
    userId: randomUUID(),
    apiKeyId: "",
    apiPublicKey: kp.publicKey,
    apiPrivateKey: kp.privateKey,
  };
  const sample = new FastStamper(kp.publicKey, kp.privateKey).stamp(activityBody(fake));
  const server = await startBaseline();
  try {
    const one = async (route: "/echo" | "/verify", scenario: string): Promise<Figures> => {
      const check = await post(`${server.url}${route}`, sample);
      if (check.status !== 200) throw new Error(`baseline ${route} answered ${check.status}: ${JSON.stringify(check.json)}`);
      if (WARMUP_S > 0) await load({ url: server.url, path: route, fixed: sample, seconds: WARMUP_S });
      server.rss.windowPeakMb();
      const { r, cpu } = await withCpu(server, () => load({ url: server.url, path: route, fixed: sample, seconds: DURATION_S }));
      const f = figures(scenario, "-", r, undefined, cpu);
      f.rssMb = server.rss.windowPeakMb();
      log(`  ${route} → ${fmtInt(f.rps)} req/s, p50 ${f.p50} ms, p99 ${f.p99} ms, server CPU ${fmtUs(f.cpuMsPerReq)} µs/req`);
      return f;
    };
    log(
      `baseline: fastify ${createRequire(import.meta.url)("fastify/package.json").version as string}, body ${sample.body.length} B + X-Stamp ${sample.stamp.length} B; ` +
        `POST /echo parses and answers, POST /verify also checks the stamp's P-256 signature (node:crypto on the thread pool, key cached)`,
    );
    const echo = await one("/echo", "baseline: bare fastify POST (no auth)");
    const verify = await one("/verify", "signature floor: fastify POST + X-Stamp P-256 verify");
    return { echo, verify };
  } finally {
    await server.stop();
  }
}

// bin/sigil.mjs loads TypeScript through tsx's module hooks, which run on a thread of their
// own; node --cpu-prof writes one profile per thread, and under a fixed --cpu-prof-name the
// hooks thread's profile (module loading, no request at all) overwrote the server's. Each
// scenario therefore gets a directory of its own with node's default names
// (CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile), and the main thread's (id 0) is kept.
// With --before, the before tree's servers are profiled the same way (…-before.cpuprofile).
const profileName = (engine: Engine, scenario: string, tree: Side["tree"]) =>
  `sigil-${engine}-${scenario}${tree === "before" ? "-before" : ""}`;
const profileDirOf = (engine: Engine, scenario: string, tree: Side["tree"]) =>
  path.join(PROFILE_DIR!, `.${profileName(engine, scenario, tree)}`);

function profileArgs(engine: Engine, scenario: string, tree: Side["tree"]): string[] {
  if (!PROFILE_DIR) return [];
  return ["--cpu-prof", `--cpu-prof-dir=${profileDirOf(engine, scenario, tree)}`];
}

async function stopSigil(server: Running, engine: Engine, scenario: string, tree: Side["tree"]): Promise<void> {
  if (!PROFILE_DIR) return server.stop("SIGTERM", 5000);
  // SIGINT: the server shuts down cleanly and node writes the profile on exit.
  await server.stop("SIGINT", 30_000);
  const dir = profileDirOf(engine, scenario, tree);
  const file = path.join(PROFILE_DIR, `${profileName(engine, scenario, tree)}.cpuprofile`);
  try {
    const main = readdirSync(dir).find((f) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f));
    if (!main) throw new Error(`no main-thread profile in ${dir}: ${readdirSync(dir).join(", ") || "empty"}`);
    renameSync(path.join(dir, main), file);
    rmSync(dir, { recursive: true, force: true });
    log(
      `  profile of the ${tree} server's main thread (${engine}, ${scenario} scenario${scenario === "activity" && POLICIES > 0 && tree === "now" ? "s, with the policy A/B rounds" : ""}): ${file}`,
    );
    log(formatSummary(summarize(file, { top: 20 })).replace(/^/gm, "    "));
  } catch (e) {
    log(`    (no profile: ${(e as Error).message})`);
  }
}

async function runQuery(inst: SigilInstance, creds: InitResult, server: Running): Promise<Figures> {
  const body = JSON.stringify({ organizationId: creds.organizationId });
  const stamped = await sdkStamp(body, creds.apiPublicKey, creds.apiPrivateKey);
  const url = `${server.url}/public/v1/query/whoami`;
  const check = await post(url, stamped);
  const who = check.json as { organizationId?: string; userId?: string };
  if (check.status !== 200 || who.organizationId !== creds.organizationId || who.userId !== creds.userId) {
    throw new Error(`whoami check failed (${check.status}): ${JSON.stringify(check.json)}`);
  }
  log(`  stamped query: POST /public/v1/query/whoami, one @turnkey/api-key-stamper stamp replayed (body ${stamped.body.length} B)`);
  if (WARMUP_S > 0) await load({ url: server.url, path: "/public/v1/query/whoami", fixed: stamped, seconds: WARMUP_S });
  const { r, cpu } = await withCpu(server, () =>
    load({ url: server.url, path: "/public/v1/query/whoami", fixed: stamped, seconds: DURATION_S }),
  );
  const f = figures("stamped query (whoami)", inst.engine, r, GOALS[inst.engine].query, cpu);
  log(`  → ${fmtInt(f.rps)} req/s, p50 ${f.p50} ms, p99 ${f.p99} ms, non-2xx ${f.non2xx}, errors ${f.errors}`);
  return f;
}

/**
 * whoami stamped with a session key, as a logged-in browser sends it: stamp_login (stamped by
 * the API key) registers a fresh key as the user's session, which then stamps every request.
 * The session key is an expiring api_keys row, so the look-up is the same statement as the API
 * key's plus its expiry check: the ratio to the API-key run shows what sessions cost.
 */
async function runSessionQuery(inst: SigilInstance, creds: InitResult, server: Running, apiKey: Figures): Promise<Figures> {
  const session = newP256KeyPair();
  const login = JSON.stringify({
    parameters: { publicKey: session.publicKey, expirationSeconds: "3600", invalidateExisting: false },
    organizationId: creds.organizationId,
    timestampMs: String(Date.now()),
    type: "ACTIVITY_TYPE_STAMP_LOGIN",
  });
  const res = await post(`${server.url}/public/v1/submit/stamp_login`, await sdkStamp(login, creds.apiPublicKey, creds.apiPrivateKey));
  const jwt = (res.json as { activity?: { result?: { stampLoginResult?: { session?: string } } } }).activity?.result?.stampLoginResult
    ?.session;
  if (res.status !== 200 || !jwt) throw new Error(`stamp_login failed (${res.status}): ${JSON.stringify(res.json)}`);
  const body = JSON.stringify({ organizationId: creds.organizationId });
  const stamped = await sdkStamp(body, session.publicKey, session.privateKey);
  const url = `${server.url}/public/v1/query/whoami`;
  const check = await post(url, stamped);
  const who = check.json as { userId?: string };
  if (check.status !== 200 || who.userId !== creds.userId)
    throw new Error(`session whoami check failed (${check.status}): ${JSON.stringify(check.json)}`);
  log(`  session-stamped query: stamp_login (API key) → session key; POST /public/v1/query/whoami stamped by the session key, replayed`);
  if (WARMUP_S > 0) await load({ url: server.url, path: "/public/v1/query/whoami", fixed: stamped, seconds: WARMUP_S });
  const { r, cpu } = await withCpu(server, () =>
    load({ url: server.url, path: "/public/v1/query/whoami", fixed: stamped, seconds: DURATION_S }),
  );
  const f = figures("session-stamped query (whoami)", inst.engine, r, undefined, cpu);
  f.note = `${((100 * f.rps) / apiKey.rps).toFixed(1)}% of the API-key-stamped whoami rate (${fmtInt(f.rps)} vs ${fmtInt(apiKey.rps)} req/s)`;
  log(`  → ${fmtInt(f.rps)} req/s, p50 ${f.p50} ms, p99 ${f.p99} ms, non-2xx ${f.non2xx}, errors ${f.errors}; ${f.note}`);
  return f;
}

async function runActivity(
  inst: SigilInstance,
  creds: InitResult,
  server: Running,
  ceilingRps: number,
  label = "",
  kind: ActivityKind = USER_TAG,
): Promise<Figures> {
  const path = `/public/v1/submit/${kind.op}`;
  const url = `${server.url}${path}`;
  // One body stamped by the SDK's stamper proves the wire format; the bulk uses FastStamper.
  const sdk = await sdkStamp(kind.body(creds), creds.apiPublicKey, creds.apiPrivateKey);
  const check = await post(url, sdk);
  if (check.status !== 200) throw new Error(`${kind.op} check failed (${check.status}): ${JSON.stringify(check.json)}`);
  kind.check(check.json);
  const stamper = new FastStamper(creds.apiPublicKey, creds.apiPrivateKey);
  const fastCheck = await post(url, stamper.stamp(kind.body(creds)));
  if (fastCheck.status !== 200) throw new Error(`fast-stamped ${kind.op} failed (${fastCheck.status}): ${JSON.stringify(fastCheck.json)}`);
  kind.check(fastCheck.json);

  log(
    `  stamped activity: POST ${path}, ${kind.describe} (body ${sdk.body.length} B), checked: SDK-stamped and fast-stamped bodies both answer 200`,
  );
  let warmRps = 0;
  if (WARMUP_S > 0) {
    // The baseline's rate bounds what any Sigil scenario can do.
    const { pool, ms } = stampMany(stamper, creds, Math.ceil(Math.min(ceilingRps, 8000) * WARMUP_S * 1.2) + CONNECTIONS, kind);
    log(`  ${fmtInt(pool.items.length)} distinct bodies pre-stamped for the warm-up in ${fmtInt(ms)} ms`);
    const w = await load({ url: server.url, path, pool, seconds: WARMUP_S });
    warmRps = w.requests.total / Math.max(w.duration, 0.1);
    if (w.non2xx > 0 || w.errors > 0) log(`  warm-up: ${w.non2xx} non-2xx, ${w.errors} errors`);
  }
  // Enough fresh bodies for the measured run, generated (and timestamped) right before it.
  const expected = Math.max(warmRps, 500) * DURATION_S;
  const count = Math.min(Math.ceil(expected * 1.6) + 2000, Math.ceil(ceilingRps * DURATION_S * 1.1) + 2000, 400_000);
  const { pool, ms } = stampMany(stamper, creds, count, kind);
  log(`  ${fmtInt(count)} distinct bodies pre-stamped for the measured run in ${fmtInt(ms)} ms (warm-up ran ${fmtInt(warmRps)} req/s)`);
  const before = await settledActivityCount(inst);
  const { r, cpu } = await withCpu(server, () => load({ url: server.url, path, pool, seconds: DURATION_S }));
  const recorded = (await settledActivityCount(inst)) - before;
  const f = figures(
    `stamped activity (${kind.op})${label}`,
    inst.engine,
    r,
    label || kind !== USER_TAG ? undefined : GOALS[inst.engine].activity,
    cpu,
  );
  if (pool.dry) f.problems.push(`ran out of pre-stamped bodies after ${fmtInt(pool.used)}: run stopped early`);
  // Each 2xx must be a new activity (no idempotent replays). autocannon stops with up to one
  // request per connection in flight: the server records those, nobody counts their answer.
  const ok2xx = r["2xx"];
  if (recorded < ok2xx || recorded > ok2xx + CONNECTIONS) {
    f.problems.push(`${ok2xx} responses were 2xx but ${recorded} activities were recorded`);
  }
  log(
    `  → ${fmtInt(f.rps)} req/s, p50 ${f.p50} ms, p99 ${f.p99} ms, non-2xx ${f.non2xx}, errors ${f.errors}; ${fmtInt(recorded)} new activities recorded for ${fmtInt(ok2xx)} 2xx (+ ≤ ${CONNECTIONS} in flight at the stop)`,
  );
  return f;
}

async function measuredOn(server: Running, scenario: () => Promise<Figures>): Promise<Figures> {
  server.rss.windowPeakMb();
  const f = await scenario();
  f.rssMb = server.rss.windowPeakMb();
  return f;
}

/**
 * Stamped sign_raw_payload next to create_user_tag on the same server: the signing goal is a
 * share of the create_user_tag rate of the same run (docs/benchmarks.md §1.1).
 */
async function runSign(side: Side, ceilingRps: number, userTag: Figures): Promise<Figures> {
  const signWith = await benchWallet(side.server, side.creds);
  const f = await runActivity(side.inst, side.creds, side.server, ceilingRps, "", signKind(signWith));
  const share = (100 * f.rps) / userTag.rps;
  const cpu =
    f.cpuMsPerReq !== undefined && userTag.cpuMsPerReq !== undefined
      ? `; server CPU/request ${fmtUs(f.cpuMsPerReq)} vs ${fmtUs(userTag.cpuMsPerReq)} µs`
      : "";
  f.verdict = { goal: `≥ ${SIGN_GOAL_PCT}% of create_user_tag's rate`, met: share >= SIGN_GOAL_PCT };
  f.note = `${share.toFixed(1)}% of the create_user_tag rate of this run (${fmtInt(f.rps)} vs ${fmtInt(userTag.rps)} req/s${cpu}; goal ≥ ${SIGN_GOAL_PCT}%): ${f.verdict.met ? "met" : "MISSED"}`;
  log(`  → sign_raw_payload: ${f.note}`);
  return f;
}

/**
 * Activities in an organization with POLICIES policies against one with none, on the same
 * server and database, alternating ROUNDS times: machine drift and database growth then
 * weigh on both sides alike (a before/after pair would charge them to the policies).
 */
async function comparePolicies(
  inst: SigilInstance,
  plainOrg: InitResult,
  server: Running,
  ceilingRps: number,
  ROUNDS: number,
): Promise<Figures[]> {
  const policyOrg = await sigilInit(inst, "Bench Policy Org");
  await loadPolicies(server, policyOrg, POLICIES);
  log(`  A/B: a second organization with ${POLICIES} policies (allow/deny; id, tag and count consensus), ${ROUNDS} alternating rounds`);
  const label = ` + ${POLICIES} policies`;
  const runs: { plain: Figures[]; policies: Figures[] } = { plain: [], policies: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (["plain", "policies"] as const) : (["policies", "plain"] as const);
    for (const side of order) {
      runs[side].push(
        await measuredOn(server, () =>
          runActivity(inst, side === "plain" ? plainOrg : policyOrg, server, ceilingRps, side === "plain" ? " (A/B: no policies)" : label),
        ),
      );
    }
  }
  const merge = (fs: Figures[], scenario: string): Figures => ({
    ...fs[0]!,
    scenario,
    rps: fs.reduce((a, f) => a + f.rps, 0) / fs.length,
    sd: Math.sqrt(fs.reduce((a, f) => a + f.sd ** 2, 0) / fs.length),
    p50: Math.max(...fs.map((f) => f.p50)),
    p99: Math.max(...fs.map((f) => f.p99)),
    non2xx: fs.reduce((a, f) => a + f.non2xx, 0),
    errors: fs.reduce((a, f) => a + f.errors, 0),
    total: fs.reduce((a, f) => a + f.total, 0),
    problems: fs.flatMap((f) => f.problems),
    goal: undefined,
    verdict: undefined,
    rssMb: Math.max(...fs.map((f) => f.rssMb ?? 0)),
    cpuMsPerReq: fs.reduce((a, f) => a + (f.cpuMsPerReq ?? Number.NaN), 0) / fs.length,
  });
  const plain = merge(runs.plain, `stamped activity, no policies (mean of ${ROUNDS} A/B rounds)`);
  const withPolicies = merge(runs.policies, `stamped activity${label} (mean of ${ROUNDS} A/B rounds)`);
  const drop = 1 - withPolicies.rps / plain.rps;
  const perRound = runs.policies.map((f, i) => `${(100 * (1 - f.rps / runs.plain[i]!.rps)).toFixed(1)}%`).join(", ");
  withPolicies.verdict = { goal: `≤ ${100 * POLICY_DROP_LIMIT}% below the organization without policies`, met: drop <= POLICY_DROP_LIMIT };
  withPolicies.note = `${drop >= 0 ? `${(100 * drop).toFixed(1)}% below` : `${(-100 * drop).toFixed(1)}% above (faster than)`} the organization without policies (rounds: ${perRound}; limit ${100 * POLICY_DROP_LIMIT}%): ${drop <= POLICY_DROP_LIMIT ? "met" : "MISSED"}`;
  return [plain, withPolicies];
}

/** One tree's instance (data dir or database, organization, running server) on one engine. */
interface Side {
  tree: "now" | "before";
  inst: SigilInstance;
  creds: InitResult;
  server: Running;
}

async function openSide(engine: Engine, tree: Side["tree"]): Promise<Side> {
  const inst = await newSigilInstance(engine, POSTGRES_URL, tree === "before" ? BEFORE_DIR : undefined);
  const creds = await sigilInit(inst, "Bench Org");
  const server = await startSigil(inst, profileArgs(engine, "query", tree));
  const where =
    engine === "postgres"
      ? `PostgreSQL database ${new URL(inst.databaseUrl!).pathname.slice(1)} (dropped afterwards)`
      : `embedded SQLite in ${inst.dataDir}`;
  log(
    `\nsigil (${engine}, ${tree === "now" ? "this tree" : `before: ${inst.root}`}): node bin/sigil.mjs serve, LOG_LEVEL=${process.env.BENCH_LOG_LEVEL || "warn"}, ${where}, pid ${server.proc.pid}`,
  );
  return { tree, inst, creds, server };
}

/** Runs `scenario` on a side, with the server's peak RSS over it. */
function measured(side: Side, scenario: () => Promise<Figures>): Promise<Figures> {
  return measuredOn(side.server, scenario);
}

/**
 * Each scenario on this tree and, with --before, on the before tree, alternating which goes
 * first: drift of the machine weighs on both alike.
 */
async function runEngine(engine: Engine, ceilingRps: number): Promise<Figures[]> {
  const sides: Side[] = [];
  try {
    sides.push(await openSide(engine, "now"));
    if (BEFORE_DIR) sides.push(await openSide(engine, "before"));
    const [now] = sides as [Side];
    let turn = 0;
    const both = async (scenario: (side: Side) => Promise<Figures>): Promise<Figures> => {
      const order = turn++ % 2 === 0 ? sides : [...sides].reverse();
      const got = new Map<Side, Figures>();
      for (const side of order) {
        log(`  [${side.tree}]`);
        got.set(side, await measured(side, () => scenario(side)));
      }
      const f = got.get(now)!;
      if (sides[1]) f.before = got.get(sides[1]);
      return f;
    };
    const queries = new Map<Side, Figures>();
    const out: Figures[] = [];
    out.push(
      await both(async (s) => {
        const f = await runQuery(s.inst, s.creds, s.server);
        queries.set(s, f);
        return f;
      }),
    );
    out.push(await both((s) => runSessionQuery(s.inst, s.creds, s.server, queries.get(s)!)));
    if (PROFILE_DIR) {
      for (const side of sides) {
        await stopSigil(side.server, engine, "query", side.tree);
        side.server = await startSigil(side.inst, profileArgs(engine, "activity", side.tree));
      }
    }
    const tags = new Map<Side, Figures>();
    out.push(
      await both(async (s) => {
        const f = await runActivity(s.inst, s.creds, s.server, ceilingRps);
        tags.set(s, f);
        return f;
      }),
    );
    if (SIGN) out.push(await both((s) => runSign(s, ceilingRps, tags.get(s)!)));
    if (POLICIES > 0) out.push(...(await comparePolicies(now.inst, now.creds, now.server, ceilingRps, roundsOf(engine))));
    for (const side of sides)
      log(
        `  peak RSS of the ${side.tree} server (${engine}, pid ${side.server.proc.pid}) over the whole run: ${fmtMb(side.server.rss.peakMb())} MiB`,
      );
    return out;
  } finally {
    for (const side of sides) {
      await stopSigil(side.server, engine, "activity", side.tree);
      await side.inst.cleanup();
    }
  }
}

const fmtUs = (ms: number | undefined) => (ms === undefined || Number.isNaN(ms) ? "" : (1000 * ms).toFixed(0));
const fmtMb = (mb: number | undefined) => (mb === undefined || Number.isNaN(mb) ? "?" : mb.toFixed(0));

// ---------------------------------------------------------------- report

const pct = (rps: number, of: number) => `${((100 * rps) / of).toFixed(1)}%`;

/** The goal and whether this run met it: a floor goal, or a verdict made elsewhere. */
function goalVerdict(f: Figures, floorRps: number): string {
  const met = goalMet(f, floorRps);
  if (met === undefined) return "";
  const want = f.goal ? describeGoal(f.goal) : f.verdict!.goal;
  return `${want}: ${met ? "met" : "MISSED"}`;
}

function table(rows: Figures[], baseline: number, floor: Figures): string {
  const floorRps = floor.rps;
  const cpuShare = (f: Figures) => {
    const r = floorCpuRatio(f.cpuMsPerReq, floor);
    return r === undefined ? "" : `${(100 * r).toFixed(1)}%`;
  };
  const withBefore = rows.some((f) => f.before);
  const head = [
    "scenario",
    "engine",
    "req/s",
    "± sd",
    "p50 ms",
    "p99 ms",
    "non-2xx",
    "errors",
    "CPU µs/req",
    "vs floor",
    "vs floor (CPU)",
    "vs fastify",
    "RSS MiB",
    "goal",
  ];
  if (withBefore) head.push("before req/s", "before p99", "before CPU µs/req", "before vs floor", "before RSS");
  const body = rows.map((f) => {
    const cells = [
      f.scenario,
      f.engine,
      fmtInt(f.rps),
      fmtInt(f.sd),
      String(f.p50),
      String(f.p99),
      String(f.non2xx),
      String(f.errors),
      fmtUs(f.cpuMsPerReq),
      pct(f.rps, floorRps),
      cpuShare(f),
      pct(f.rps, baseline),
      fmtMb(f.rssMb),
      goalVerdict(f, floorRps),
    ];
    if (withBefore) {
      const b = f.before;
      cells.push(
        b ? fmtInt(b.rps) : "",
        b ? String(b.p99) : "",
        b ? fmtUs(b.cpuMsPerReq) : "",
        b ? pct(b.rps, floorRps) : "",
        b ? fmtMb(b.rssMb) : "",
      );
    }
    return cells;
  });
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const left = new Set([0, 1, 13]);
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (left.has(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n");
}

/** The goals table (docs/benchmarks.md §1): before → now as shares of this run's signature floor, and the goal. */
function goalsTable(rows: Figures[], floor: Figures): string {
  const out = [
    "| scenario | before: share of the floor, p99, server CPU/request | now: share of the floor, p99, server CPU/request | req/s now | peak RSS now | goal |",
    "|---|---|---|---|---|---|",
  ];
  const cell = (f: Figures) => `${(100 * floorRatio(f.rps, floor.rps)).toFixed(0)} %, p99 ${f.p99} ms, ${fmtUs(f.cpuMsPerReq)} µs`;
  out.push(
    `| signature floor (fastify + P-256 verify) | | 100 %, p99 ${floor.p99} ms, ${fmtUs(floor.cpuMsPerReq)} µs | ${fmtInt(floor.rps)} | ${fmtMb(floor.rssMb)} MiB | |`,
  );
  for (const f of rows) {
    if (!f.goal && !f.verdict) continue;
    const b = f.before;
    out.push(
      `| ${f.scenario}, ${f.engine === "sqlite" ? "SQLite" : "PostgreSQL"} | ${b ? cell(b) : "(no --before)"} | ${cell(f)} | ${fmtInt(f.rps)} | ${fmtMb(f.rssMb)} MiB | ${goalVerdict(f, floor.rps)} |`,
    );
  }
  return out.join("\n");
}

async function main(): Promise<void> {
  const started = performance.now();
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  log(
    `Sigil foundation benchmark — node ${process.version}, ${os.cpus().length} cores (${cpu}), load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  log(
    `autocannon: ${CONNECTIONS} connections, pipelining ${PIPELINING}, ${WARMUP_S} s warm-up + ${DURATION_S} s measured per run; ` +
      `servers are child processes, Sigil at LOG_LEVEL=${process.env.BENCH_LOG_LEVEL || "warn"}; budget ${TIMEOUT_S} s`,
  );
  // Before any server starts: PostgreSQL backends forked later inherit the postmaster's mask.
  log(setupPinning({ disabled: NO_PIN }));
  if (POSTGRES_URL) log(await pinDatabase(POSTGRES_URL, log));
  if (BEFORE_DIR)
    log(`before: the tree in ${path.resolve(BEFORE_DIR)}, measured on every scenario in the same run, alternating with this tree`);
  if (PROFILE_DIR) log(`PROFILING into ${PROFILE_DIR}: one server per scenario under --cpu-prof; figures include profiler overhead`);
  const rows: Figures[] = [];
  const firsts = await runBaseline();
  const first = firsts.echo;
  if (!SKIP_SQLITE) rows.push(...(await runEngine("sqlite", first.rps)));
  if (POSTGRES_URL) rows.push(...(await runEngine("postgres", first.rps)));
  else log("\n(PostgreSQL skipped: pass --postgres <url> or set BENCH_DATABASE_URL)");
  log("\nbaseline again, at the end:");
  const lasts = await runBaseline();
  const meanOf = (a: Figures, b: Figures, scenario: string): Figures => ({
    ...a,
    scenario: `${scenario}, mean of first and last`,
    rps: (a.rps + b.rps) / 2,
    sd: Math.max(a.sd, b.sd),
    p50: Math.max(a.p50, b.p50),
    p99: Math.max(a.p99, b.p99),
    non2xx: a.non2xx + b.non2xx,
    errors: a.errors + b.errors,
    problems: [...a.problems, ...b.problems],
    cpuMsPerReq: ((a.cpuMsPerReq ?? Number.NaN) + (b.cpuMsPerReq ?? Number.NaN)) / 2,
    rssMb: Math.max(a.rssMb ?? Number.NaN, b.rssMb ?? Number.NaN),
    note: `first ${fmtInt(a.rps)} req/s, last ${fmtInt(b.rps)} req/s`,
  });
  const baseline = meanOf(first, lasts.echo, "baseline: bare fastify POST (no auth)");
  const floor = meanOf(firsts.verify, lasts.verify, "signature floor: fastify + X-Stamp verify");
  rows.unshift(baseline, floor);

  log(`\n${table(rows, baseline.rps, floor)}`);
  for (const r of rows) if (r.note) log(`${r.scenario} [${r.engine}]: ${r.note}`);
  log(
    `\ngoals (shares of this run's signature floor, ${fmtInt(floor.rps)} req/s = ${pct(floor.rps, baseline.rps)} of bare fastify's ${fmtInt(baseline.rps)}; ` +
      `memory goal < ${MEMORY_GOAL_MB} MiB per API process):\n${goalsTable(rows.slice(2), floor)}`,
  );
  const peakRss = Math.max(...rows.map((r) => r.rssMb ?? 0));
  log(
    `peak RSS of any Sigil server during a scenario: ${fmtMb(peakRss)} MiB (goal < ${MEMORY_GOAL_MB}): ${peakRss < MEMORY_GOAL_MB ? "met" : "MISSED"}`,
  );
  const bad = rows.filter((r) => r.problems.length || r.before?.problems.length);
  for (const r of bad)
    log(`INVALID: ${r.scenario} [${r.engine}]: ${[...r.problems, ...(r.before?.problems ?? []).map((p) => `before: ${p}`)].join("; ")}`);
  if (JSON_FILE) {
    writeFileSync(JSON_FILE, `${JSON.stringify(jsonRows(rows, floor), null, 2)}\n`);
    log(`JSON: ${rows.length} scenarios written to ${path.resolve(JSON_FILE)}`);
  }
  log(
    `\ndone in ${((performance.now() - started) / 1000).toFixed(0)} s (budget ${TIMEOUT_S} s)${bad.length ? `; ${bad.length} invalid run(s)` : ""}`,
  );
  await cleanupAll();
  clearTimeout(watchdog);
  process.exitCode = bad.length ? 1 : 0;
}

main().catch((e: unknown) => void bail(1, `benchmark failed: ${(e as Error).stack ?? String(e)}`));
