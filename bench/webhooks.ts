// Benchmark of Sigil's webhooks: signing cost, then deliveries end to end.
//
//   npm run bench:webhooks [-- --postgres <url>] [--activities K] [--duration S] ...
//
// 1. Signing, single thread, in this process. The baseline is node:crypto's Ed25519
//    `sign(null, msg, key)` over a prebuilt delivery message (the signed message of a ~2 KB
//    activity body). Sigil's own path is measured on the same body against it:
//    `signDelivery` (builds the message, signs, hex) and `deliveryHeaders` (all headers of a
//    delivery). A last row adds what the dispatcher does once per cycle before it signs:
//    `activeSigningKey` over a real SQLite store (a read of the active key; the opened key is
//    cached per key id); the cost of opening a sealed key is printed under the table.
//    Variants alternate in rounds so drift hits all; ratios are taken from CPU time.
// 2. End to end: a Sigil server (child process, SIGIL_WEBHOOKS_ALLOW_LOOPBACK=true) with two
//    organizations: one owning an endpoint that points at a node:http receiver in this
//    process (answers 200 at once, counts, verifies a sample of signatures with the receiver
//    library `@sigil/webhooks` against the served JWKS), one without endpoint. K pre-stamped
//    create_user_tag activities are submitted by concurrent fetch workers to each
//    organization in alternating rounds (plain, hooked | hooked, plain); after each hooked
//    burst the benchmark waits until all K events are delivered. Reported: submit rates and
//    their ratio, deliveries/s, the dispatcher's rate per quarter of the backlog, delivery lag
//    (receipt − activity createdAt; receipt − X-Service-Timestamp), and a paced run (a few
//    activities per second: the lag when nothing is queued).
// 3. Backlog over many endpoints: E endpoints (20 per organization, the maximum, so E/20
//    organizations) point at paths of a second receiver in this process. The receiver holds
//    every request while the backlog is built (the dispatcher's lanes wait on it; the attempt
//    timeout is raised to 60 s for the run so none is cut), activities are submitted to those
//    organizations until N deliveries are queued, and once the store shows them all fanned out the
//    receiver opens: reported is N / (last delivery − opening), per-endpoint order and
//    duplicates. Deliveries/s of both scenarios are also given as a share of the raw-sign
//    baseline of the same run (the signatures/s of part 1): the dispatcher's whole cost per
//    delivery next to the one thing it cannot skip.
//
// With --before DIR the end-to-end runs are made for the tree in DIR too (e.g. a checkout of an
// earlier commit with node_modules linked), its server started the same way; the runs alternate
// (now, before on SQLite; before, now on PostgreSQL) and the table shows both side by side.
//
//   --postgres URL / BENCH_DATABASE_URL   also run end to end on PostgreSQL (a fresh database
//                                         next to URL's, dropped afterwards)
//   --skip-sqlite                         only the PostgreSQL end-to-end run
//   --before DIR / BENCH_BEFORE           also run end to end with DIR's server ("before" figures)
//   --endpoints E / BENCH_ENDPOINTS       endpoints of the backlog scenario (default 100; 0 skips it)
//   --backlog N / BENCH_BACKLOG           deliveries in that backlog (default 10000)
//   --duration S / BENCH_DURATION         measured seconds per signing variant (default 3)
//   --activities K / BENCH_ACTIVITIES     activities per burst (default 1500)
//   --rounds R / BENCH_ROUNDS             alternating burst rounds per engine (default 4)
//   --warmup W / BENCH_WARMUP             unmeasured bursts of W activities to each organization
//                                         first (default 500; 0 skips)
//   --connections N / BENCH_CONNECTIONS   concurrent submitters (default 16)
//   --paced N / BENCH_PACED               activities in the paced run (default 40, at 20/s)
//   --drain-timeout S / BENCH_DRAIN_TIMEOUT  give up waiting for a burst's deliveries (default 60)
//   --timeout S / BENCH_TIMEOUT           abort (and clean up) after S seconds in all (default 170
//                                         per end-to-end run, e.g. 680 for both engines with --before)
//   --json FILE / BENCH_JSON              also write the delivery rates as a JSON array to FILE
//                                         (docs/benchmarks.md §6)
//   --profile DIR / BENCH_PROFILE         run each server under node --cpu-prof; its main thread's
//                                         profile is kept as DIR/webhooks-<engine>-<tree>.cpuprofile
//                                         (summarise with bench/profile-summary.ts)
//   --no-pin                              leave every process on all cores
//   BENCH_LOG_LEVEL=info                  the server's log level (default warn)
//
// Unless --no-pin, the server runs on core 0, and this process (submitters and receiver) and
// PostgreSQL on the other core(s), as in `npm run bench` (docs/benchmarks.md §1.2).
import os from "node:os";
import http from "node:http";
import path from "node:path";
import { createHash, createPrivateKey, randomBytes, randomUUID, sign } from "node:crypto";
import pg from "pg";
import SQLite from "better-sqlite3";
import { verifyWebhookSignature, type VerifyResult } from "@sigil/webhooks";
import { activeSigningKey, jwks, SigningKeyCache, signDelivery, signedMessage } from "../src/webhooks/signing-keys.ts";
import { deliveryHeaders } from "../src/webhooks/deliver.ts";
import { LocalKey, MasterKey } from "../src/crypto/envelope.ts";
import { newOrderedId } from "../src/store/util.ts";
import { migrate, openStore } from "../src/store/db.ts";
import {
  cleanupAll,
  guardRun,
  pinDatabase,
  freePort,
  newSigilInstance,
  removeDir,
  sigilInit,
  startSigil,
  tempDir,
  type Engine,
  type InitResult,
  type Running,
  type SigilInstance,
} from "./procs.ts";
import { FastStamper, sdkStamp, type Stamped } from "./stamp.ts";
import { num, option } from "./options.ts";
import { setupPinning } from "./pin.ts";
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";

// ---------------------------------------------------------------- options

const DURATION_S = num("--duration", "BENCH_DURATION", 3, 0.3, 60);
const ACTIVITIES = Math.round(num("--activities", "BENCH_ACTIVITIES", 1500, 10, 200_000));
const ROUNDS = Math.round(num("--rounds", "BENCH_ROUNDS", 4, 1, 20));
const WARMUP = Math.round(num("--warmup", "BENCH_WARMUP", 500, 0, 100_000));
const ACTIVITIES_OR = (what: string) => (what === "warm-up" ? WARMUP : ACTIVITIES);
const CONNECTIONS = Math.round(num("--connections", "BENCH_CONNECTIONS", 16, 1, 512));
const PACED = Math.round(num("--paced", "BENCH_PACED", 40, 0, 10_000));
const PACED_PER_S = 20;
const DRAIN_TIMEOUT_S = num("--drain-timeout", "BENCH_DRAIN_TIMEOUT", 60, 1, 3600);
const POSTGRES_URL = option("--postgres", "BENCH_DATABASE_URL");
const SKIP_SQLITE = process.argv.includes("--skip-sqlite");
const BEFORE_ROOT = option("--before", "BENCH_BEFORE");
const ENDPOINTS = Math.round(num("--endpoints", "BENCH_ENDPOINTS", 100, 0, 2000));
const BACKLOG = Math.round(num("--backlog", "BENCH_BACKLOG", 10_000, 100, 1_000_000));
/** create_webhook_endpoint's limit per organization. */
const ENDPOINTS_PER_ORG = 20;
const E2E_RUNS = ((SKIP_SQLITE ? 0 : 1) + (POSTGRES_URL ? 1 : 0)) * (BEFORE_ROOT ? 2 : 1);
const JSON_FILE = option("--json", "BENCH_JSON");
const PROFILE_DIR = option("--profile", "BENCH_PROFILE");
const TIMEOUT_S = num("--timeout", "BENCH_TIMEOUT", Math.max(1, E2E_RUNS) * 170, 10, 7200);
const SIGN_ROUNDS = 6;
/** Signatures verified by the receiver: the first few of each phase, then one in VERIFY_EVERY. */
const VERIFY_FIRST = 20;
const VERIFY_EVERY = 20;

// ---------------------------------------------------------------- cleanup and watchdog

const started = performance.now();
const { bail, watchdog } = guardRun(TIMEOUT_S);
const remainingMs = () => TIMEOUT_S * 1000 - (performance.now() - started);

// ---------------------------------------------------------------- formatting

const fmtInt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "-");
const fmt1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "-");
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
function log(msg: string) {
  process.stdout.write(`${msg}\n`);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

function table(head: string[], rows: string[][], right: Set<number>): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

// ---------------------------------------------------------------- 1. signing

/**
 * An ACTIVITY_UPDATES payload shaped like a completed create_user_tag activity as the
 * dispatcher sends it (the submitter's vote embeds the user with its API key and the raw
 * request body), padded to `bytes` with a longer tag name if it falls short.
 */
function syntheticPayload(bytes: number): Buffer {
  const now = Date.now();
  const ts = { seconds: String(Math.floor(now / 1000)), nanos: String((now % 1000) * 1_000_000) };
  const organizationId = randomUUID();
  const userId = randomUUID();
  const activityId = randomUUID();
  const publicKey = `02${randomBytes(32).toString("hex")}`;
  const build = (tagName: string) => {
    const request = JSON.stringify({
      type: "ACTIVITY_TYPE_CREATE_USER_TAG",
      timestampMs: String(now),
      organizationId,
      parameters: { userTagName: tagName, userIds: [] },
    });
    return JSON.stringify({
      id: activityId,
      organizationId,
      status: "ACTIVITY_STATUS_COMPLETED",
      type: "ACTIVITY_TYPE_CREATE_USER_TAG",
      intent: { createUserTagIntent: { userTagName: tagName, userIds: [] } },
      result: { createUserTagResult: { userTagId: randomUUID(), userIds: [] } },
      votes: [
        {
          id: newOrderedId(now),
          userId,
          user: {
            userId,
            userName: "Root user",
            userEmail: "root@example.com",
            authenticators: [],
            apiKeys: [
              {
                apiKeyId: randomUUID(),
                apiKeyName: "root api key",
                credential: { publicKey, type: "CREDENTIAL_TYPE_API_KEY_P256" },
                createdAt: ts,
                updatedAt: ts,
              },
            ],
            userTags: [],
            oauthProviders: [],
            createdAt: ts,
            updatedAt: ts,
          },
          activityId,
          selection: "VOTE_SELECTION_APPROVED",
          message: request,
          publicKey,
          signature: randomBytes(71).toString("hex"),
          scheme: "SIGNATURE_SCHEME_TK_API_P256",
          createdAt: ts,
        },
      ],
      fingerprint: createHash("sha256").update(request).digest("hex"),
      canApprove: false,
      canReject: false,
      createdAt: String(now),
      updatedAt: String(now),
    });
  };
  let tag = "bench-tag";
  let body = build(tag);
  // The tag name appears twice in the intent/request, and the request once more escaped.
  while (body.length < bytes) {
    tag += "x".repeat(Math.max(1, Math.floor((bytes - body.length) / 3)));
    body = build(tag);
  }
  return Buffer.from(body);
}

interface SignRow {
  label: string;
  /** Median of the rounds' signatures per wall-clock second. */
  rate: number;
  /** Median of the rounds' signatures per CPU-second of this process. */
  cpuRate: number;
  /** Median of the rounds' CPU rate / that round's baseline CPU rate. */
  ratio: number;
}

/**
 * Calls `fn` in batches of 32 until `seconds` have passed. Returns calls, elapsed wall ms
 * and the process's CPU ms meanwhile (user + system): on a machine whose cores are shared
 * with other work, calls per CPU-second do not count the time this thread waited for a core.
 */
function timed(fn: () => number, seconds: number): { ops: number; ms: number; cpuMs: number; sink: number } {
  let sink = 0;
  let ops = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  let t = t0;
  while (t < end) {
    for (let i = 0; i < 32; i++) sink += fn();
    ops += 32;
    t = performance.now();
  }
  const cpu = process.cpuUsage(cpu0);
  return { ops, ms: t - t0, cpuMs: (cpu.user + cpu.system) / 1000, sink };
}

/** The same for an async `fn`, awaited call after call (as the dispatcher awaits it). */
async function timedAsync(fn: () => Promise<number>, seconds: number): Promise<{ ops: number; ms: number; cpuMs: number; sink: number }> {
  let sink = 0;
  let ops = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  let t = t0;
  while (t < end) {
    for (let i = 0; i < 32; i++) sink += await fn();
    ops += 32;
    t = performance.now();
  }
  const cpu = process.cpuUsage(cpu0);
  return { ops, ms: t - t0, cpuMs: (cpu.user + cpu.system) / 1000, sink };
}

interface SigningResult {
  rows: SignRow[];
  bodyBytes: number;
  messageBytes: number;
  /** CPU µs to open a sealed key (MasterKey.open + createPrivateKey), once per key and process. */
  openUs: number;
}

async function benchSigning(): Promise<SigningResult> {
  // The key the dispatcher signs with, read as it reads it: activeSigningKey over a real
  // (SQLite) store, sealed with a master key, opened once and then served from its cache.
  const dir = tempDir("sigil-bench-keys-");
  const store = openStore({ dataDir: dir });
  try {
    await migrate(store.db);
    const master = MasterKey.generate();
    const keys = new SigningKeyCache();
    const key = await activeSigningKey(keys, store.db, master);
    const keyId = key.id;
    const privateKey = key.privateKey;
    const body = syntheticPayload(2048);
    const eventId = newOrderedId();
    const organizationId = randomUUID();
    const tsText = String(Date.now());
    const message = signedMessage(keyId, tsText, eventId, body);

    // Sanity: Sigil's signatures verify with the receiver library against the served key
    // set, and equal the baseline's (Ed25519 is deterministic).
    const publicKeys = new Map((await jwks(store.db)).keys.map((k) => [k.kid!, k.x!]));
    const now = Date.now();
    const headers = deliveryHeaders({ eventId, eventType: "ACTIVITY_UPDATES", organizationId, body, key, now });
    const v = verifyWebhookSignature({ headers, rawBody: body, publicKeys, nowMs: now });
    if (!v.ok) throw new Error(`deliveryHeaders' signature does not verify with @sigil/webhooks: ${v.reason} ${v.message}`);
    if (signDelivery(key, tsText, eventId, body) !== sign(null, message, privateKey).toString("hex")) {
      throw new Error("signDelivery differs from sign(null, signedMessage(...))");
    }

    // Opening the sealed key: what the dispatcher pays once per key (start, rotation).
    const row = await store.db
      .selectFrom("webhook_signing_keys")
      .select("private_key_sealed")
      .where("id", "=", keyId)
      .executeTakeFirstOrThrow();
    const aad = `webhook-signing-key:${keyId}`;
    // The same work MasterKey.open does with a key held in memory, synchronously (timed() is).
    const local = LocalKey.parse(master.toHex());
    const open = timed(
      () => {
        const der = local.openSync(row.private_key_sealed, aad);
        return createPrivateKey({ key: der, format: "der", type: "pkcs8" }).asymmetricKeyType === "ed25519" ? 1 : 0;
      },
      Math.min(1, DURATION_S / 4),
    );
    const openUs = (open.cpuMs * 1000) / open.ops;

    const variants: Variant[] = [
      { label: "baseline: node:crypto sign(null, msg, key), msg prebuilt", fn: () => sign(null, message, privateKey).length },
      { label: "signDelivery (message concat + sign + hex)", fn: () => signDelivery(key, tsText, eventId, body).length },
      {
        label: "deliveryHeaders (all 9 headers)",
        fn: () =>
          deliveryHeaders({ eventId, eventType: "ACTIVITY_UPDATES", organizationId, body, key, now: Date.now() })["x-service-signature"]!
            .length,
      },
      {
        label: "activeSigningKey (SQLite read, cached key) + deliveryHeaders",
        afn: async () => {
          const k = await activeSigningKey(keys, store.db, master);
          return deliveryHeaders({ eventId, eventType: "ACTIVITY_UPDATES", organizationId, body, key: k, now: Date.now() })[
            "x-service-signature"
          ]!.length;
        },
      },
    ];
    const rows = await measureVariants(variants);
    return { rows, bodyBytes: body.length, messageBytes: message.length, openUs };
  } finally {
    await store.close();
    removeDir(dir);
  }
}

interface Variant {
  label: string;
  fn?: () => number;
  afn?: () => Promise<number>;
}

async function run(v: Variant, seconds: number): Promise<{ ops: number; ms: number; cpuMs: number; sink: number }> {
  return v.fn ? timed(v.fn, seconds) : timedAsync(v.afn!, seconds);
}

async function measureVariants(variants: Variant[]): Promise<SignRow[]> {
  // Per round, each variant's rate and its ratio to the baseline of that same round; the
  // medians are reported, so a burst of noise from elsewhere on the machine skews one round only.
  const perRound: { rate: number[]; cpuRate: number[]; ratio: number[] }[] = variants.map(() => ({ rate: [], cpuRate: [], ratio: [] }));
  for (const x of variants) await run(x, 0.25); // warm-up
  let sink = 0;
  for (let r = 0; r < SIGN_ROUNDS; r++) {
    const order = r % 2 === 0 ? variants.map((_, i) => i) : variants.map((_, i) => variants.length - 1 - i);
    const rates: number[] = [];
    const cpuRates: number[] = [];
    for (const i of order) {
      const t = await run(variants[i]!, DURATION_S / SIGN_ROUNDS);
      rates[i] = (t.ops * 1000) / t.ms;
      cpuRates[i] = (t.ops * 1000) / Math.max(t.cpuMs, 1e-3);
      sink += t.sink;
    }
    variants.forEach((_, i) => {
      perRound[i]!.rate.push(rates[i]!);
      perRound[i]!.cpuRate.push(cpuRates[i]!);
      perRound[i]!.ratio.push(cpuRates[i]! / cpuRates[0]!);
    });
  }
  if (sink === 0) throw new Error("nothing was signed");
  const median = (xs: number[]) =>
    quantile(
      [...xs].sort((a, b) => a - b),
      0.5,
    );
  const rows: SignRow[] = variants.map((x, i) => ({
    label: x.label,
    rate: median(perRound[i]!.rate),
    cpuRate: median(perRound[i]!.cpuRate),
    ratio: median(perRound[i]!.ratio),
  }));
  return rows;
}

// ---------------------------------------------------------------- 2. receiver

interface Receipt {
  at: number;
  path: string;
  eventId: string;
  activityId: string;
  organizationId: string;
  createdAt: number;
  headerTs: number;
  bytes: number;
}

class Receiver {
  private server: http.Server | undefined;
  url = "";
  /** Every delivery, in arrival order. */
  readonly receipts: Receipt[] = [];
  /** First receipt per activity id. */
  readonly byActivity = new Map<string, Receipt>();
  readonly eventIds = new Set<string>();
  duplicates = 0;
  badRequests = 0;
  publicKeys = new Map<string, string>();
  verified = 0;
  verifyFailures = new Map<string, number>();
  private sinceMark = 0;
  /** While set, requests wait for it before they are answered (and recorded). */
  private held: Promise<void> | undefined;
  private open: (() => void) | undefined;
  /** Requests waiting on the hold. */
  waiting = 0;
  constructor(private readonly verifyEvery = VERIFY_EVERY) {}

  /** Answer nothing until release(). */
  hold(): void {
    this.held = new Promise<void>((r) => (this.open = r));
  }
  /** Answers what waits, and everything after at once; returns when it opened. */
  release(): number {
    const at = Date.now();
    this.held = undefined;
    this.open?.();
    return at;
  }

  async start(): Promise<void> {
    const port = await freePort();
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const answer = () => {
          const at = Date.now();
          res.writeHead(200, { "content-type": "text/plain" }).end("ok");
          this.record(req.headers, Buffer.concat(chunks), at, req.url ?? "");
        };
        const held = this.held;
        if (!held) return answer();
        this.waiting++;
        void held.then(() => {
          this.waiting--;
          answer();
        });
      });
    });
    this.server.keepAliveTimeout = 5000;
    await new Promise<void>((resolve, reject) => {
      this.server!.once("error", reject);
      this.server!.listen(port, "127.0.0.1", () => resolve());
    });
    this.url = `http://127.0.0.1:${port}/hooks/sigil`;
  }

  /** Restart the verification sampling (the first few of each phase are verified). */
  mark(): void {
    this.sinceMark = 0;
  }

  private record(headers: http.IncomingHttpHeaders, body: Buffer, at: number, path: string): void {
    let p: { id?: string; organizationId?: string; createdAt?: string };
    try {
      p = JSON.parse(body.toString("utf8")) as typeof p;
    } catch {
      this.badRequests++;
      return;
    }
    const eventId = String(headers["x-service-event-id"] ?? "");
    const r: Receipt = {
      at,
      path,
      eventId,
      activityId: String(p.id ?? ""),
      organizationId: String(p.organizationId ?? ""),
      createdAt: Number(p.createdAt),
      headerTs: Number(headers["x-service-timestamp"]),
      bytes: body.length,
    };
    this.receipts.push(r);
    if (this.eventIds.has(eventId)) this.duplicates++;
    else this.eventIds.add(eventId);
    if (!this.byActivity.has(r.activityId)) this.byActivity.set(r.activityId, r);
    const n = this.sinceMark++;
    if (n < VERIFY_FIRST || n % this.verifyEvery === 0) {
      const v: VerifyResult = verifyWebhookSignature({ headers, rawBody: body, publicKeys: this.publicKeys, nowMs: at });
      this.verified++;
      if (!v.ok) this.verifyFailures.set(v.reason, (this.verifyFailures.get(v.reason) ?? 0) + 1);
    }
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}

// ---------------------------------------------------------------- server CPU

/**
 * CPU ms the server process has used so far (all its threads: the delivery worker's too), from
 * /proc; NaN where there is none. Per activity, this is what one costs the pinned core whatever
 * else runs on the machine (a rate on a shared machine also counts the waits for the core).
 */
function serverCpuMs(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 14 and 15 of proc(5) (utime, stime), counted from the state field (3).
    return ((Number(f[11]) + Number(f[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}
/** sysconf(_SC_CLK_TCK): 100 on every Linux this runs on. */
const CLOCK_TICKS = 100;

// ---------------------------------------------------------------- requests

async function post(url: string, s: Stamped): Promise<{ status: number; json: unknown }> {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-stamp": s.stamp },
    body: new Uint8Array(s.body),
    signal: AbortSignal.timeout(15_000),
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

type ActivityAnswer = { activity?: { id?: string; status?: string; result?: Record<string, Record<string, unknown>> } };

const RUN_TAG = randomBytes(4).toString("hex");
let tagCounter = 0;
function tagBody(creds: InitResult): string {
  return JSON.stringify({
    type: "ACTIVITY_TYPE_CREATE_USER_TAG",
    timestampMs: String(Date.now()),
    organizationId: creds.organizationId,
    parameters: { userTagName: `wh-bench-${RUN_TAG}-${++tagCounter}`, userIds: [] },
  });
}

interface Burst {
  ms: number;
  ok: number;
  non2xx: Map<number, number>;
  errors: number;
  /** Activity ids of the 200 answers. */
  ids: string[];
  startedAt: number;
  endedAt: number;
  /** Server CPU ms from the first submission to the last answer (plain) or the last delivery (endpoint). */
  cpuMs: number;
}

/** Submits every body once, CONNECTIONS at a time. */
async function submitAll(url: string, items: Stamped[]): Promise<Burst> {
  let next = 0;
  const out: Burst = { ms: 0, ok: 0, non2xx: new Map(), errors: 0, ids: [], startedAt: Date.now(), endedAt: 0, cpuMs: NaN };
  const t0 = performance.now();
  const worker = async () => {
    for (;;) {
      const s = items[next++];
      if (!s) return;
      try {
        const r = await post(url, s);
        const id = (r.json as ActivityAnswer).activity?.id;
        if (r.status === 200 && id) {
          out.ok++;
          out.ids.push(id);
        } else out.non2xx.set(r.status, (out.non2xx.get(r.status) ?? 0) + 1);
      } catch {
        out.errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONNECTIONS, items.length) }, worker));
  out.ms = performance.now() - t0;
  out.endedAt = Date.now();
  return out;
}

/** Resolves once every id has been delivered (true) or after `timeoutMs` (false). */
async function waitDelivered(rx: Receiver, ids: readonly string[], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let missing = ids.filter((id) => !rx.byActivity.has(id));
  while (missing.length > 0) {
    if (Date.now() > deadline) return false;
    await sleep(20);
    missing = missing.filter((id) => !rx.byActivity.has(id));
  }
  return true;
}

// ---------------------------------------------------------------- store reads

async function deliveryStatuses(inst: SigilInstance): Promise<{ status: string; n: number; retried: number }[]> {
  const q =
    "select status, count(*) as n, sum(case when attempts > 1 then 1 else 0 end) as retried from webhook_deliveries group by status order by status";
  if (inst.engine === "postgres") {
    const c = new pg.Client({ connectionString: inst.databaseUrl });
    await c.connect();
    try {
      const r = await c.query<{ status: string; n: string; retried: string }>(q);
      return r.rows.map((x) => ({ status: x.status, n: Number(x.n), retried: Number(x.retried) }));
    } finally {
      await c.end();
    }
  }
  const db = new SQLite(path.join(inst.dataDir, "sigil.db"), { fileMustExist: true, readonly: true });
  try {
    db.pragma("busy_timeout = 5000");
    return (db.prepare(q).all() as { status: string; n: number; retried: number | null }[]).map((x) => ({ ...x, retried: x.retried ?? 0 }));
  } finally {
    db.close();
  }
}

async function pendingEvents(inst: SigilInstance): Promise<number> {
  return countOf(inst, "select count(*) as n from webhook_events where fanned_out = 0");
}

// ---------------------------------------------------------------- 3. end to end

interface DeliveryFigures {
  /** Lags of the phase, ms, sorted. */
  lag: number[];
  /** receipt − X-Service-Timestamp, ms, sorted. */
  wire: number[];
}

function lagsOf(receipts: readonly Receipt[]): DeliveryFigures {
  return {
    lag: receipts.map((r) => r.at - r.createdAt).sort((a, b) => a - b),
    wire: receipts.map((r) => r.at - r.headerTs).sort((a, b) => a - b),
  };
}

interface HookRound {
  burst: Burst;
  drained: boolean;
  delivered: number;
  /** First submission → last delivery. */
  e2eMs: number;
  /** Delivered by the time the last submission was answered. */
  atSubmitEnd: number;
  /** Deliveries/s while the submissions ran. */
  duringRate: number;
  /** Deliveries/s from the last answer to the last delivery (the backlog drains). */
  afterRate: number;
  /** That drain's rate per quarter of the backlog left at the last answer. */
  afterQuarters: number[];
  figs: DeliveryFigures;
  outOfOrder: number;
}

interface BacklogResult {
  endpoints: number;
  /** Deliveries queued when the receiver opened. */
  queued: number;
  delivered: number;
  /** Receiver opening → last delivery. */
  ms: number;
  rate: number;
  /** Rate per quarter of the drain. */
  quarters: number[];
  /** Receipts whose event id sorts before one its endpoint received earlier. */
  outOfOrder: number;
  /** Receipts repeating an (endpoint, event) already received. */
  duplicates: number;
  /** Building the backlog: submissions and fan-out, ms. */
  buildMs: number;
  verified: number;
  verifyFailures: number;
}

interface EngineResult {
  engine: Engine;
  /** "now" (this tree) or "before" (--before). */
  tree: string;
  plain: Burst[];
  hooked: HookRound[];
  paced?: { n: number; delivered: number; figs: DeliveryFigures };
  problems: string[];
  notes: string[];
  payloadBytes: number[];
  statuses: { status: string; n: number; retried: number }[];
  verified: number;
  verifyFailures: Map<string, number>;
  duplicates: number;
  plainDelivered: number;
  backlog?: BacklogResult;
}

function stampMany(stamper: FastStamper, creds: InitResult, n: number): Stamped[] {
  const items: Stamped[] = new Array(n);
  for (let i = 0; i < n; i++) items[i] = stamper.stamp(tagBody(creds));
  return items;
}

function checkBurst(b: Burst, what: string, problems: string[]): void {
  if (b.non2xx.size > 0) problems.push(`${what}: non-2xx answers ${[...b.non2xx].map(([c, n]) => `${c}×${n}`).join(", ")}`);
  if (b.errors > 0) problems.push(`${what}: ${b.errors} request errors`);
}

/** A single count from the store, read beside the server (read-only on SQLite). */
async function countOf(inst: SigilInstance, q: string): Promise<number> {
  if (inst.engine === "postgres") {
    const c = new pg.Client({ connectionString: inst.databaseUrl });
    await c.connect();
    try {
      return Number((await c.query<{ n: string }>(q)).rows[0]?.n ?? 0);
    } finally {
      await c.end();
    }
  }
  const db = new SQLite(path.join(inst.dataDir, "sigil.db"), { fileMustExist: true, readonly: true });
  try {
    db.pragma("busy_timeout = 5000");
    return (db.prepare(q).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/**
 * Scenario 3: a backlog of BACKLOG deliveries over ENDPOINTS endpoints, built while the
 * receiver holds its answers, then drained.
 */
async function backlogScenario(inst: SigilInstance, serverUrl: string, orgs: InitResult[], res: EngineResult): Promise<BacklogResult> {
  const rx = new Receiver(100);
  await rx.start();
  try {
    const base = rx.url.replace(/\/hooks\/sigil$/, "");
    const jr = await fetch(`${serverUrl}/public/v1/discovery/webhooks/jwks`);
    rx.publicKeys = new Map(((await jr.json()) as { keys: { kid: string; x: string }[] }).keys.map((k) => [k.kid, k.x]));
    // Endpoints through the API, ENDPOINTS_PER_ORG per organization.
    const perOrg = orgs.map(() => 0);
    for (let i = 0; i < ENDPOINTS; i++) {
      const k = Math.floor(i / ENDPOINTS_PER_ORG);
      const org = orgs[k]!;
      const r = await post(
        `${serverUrl}/public/v1/submit/create_webhook_endpoint`,
        await sdkStamp(
          JSON.stringify({
            type: "ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT",
            timestampMs: String(Date.now()),
            organizationId: org.organizationId,
            parameters: { url: `${base}/e/${i}`, name: `backlog ${i}` },
          }),
          org.apiPublicKey,
          org.apiPrivateKey,
        ),
      );
      if (r.status !== 200 || (r.json as ActivityAnswer).activity?.status !== "ACTIVITY_STATUS_COMPLETED") {
        throw new Error(`create_webhook_endpoint ${i} failed (${r.status}): ${JSON.stringify(r.json).slice(0, 300)}`);
      }
      perOrg[k]!++;
    }
    // Creating an endpoint is an activity its organization's earlier endpoints hear of: let
    // those deliveries go before the backlog is built.
    const settle = Date.now() + 60_000;
    while (
      (await countOf(inst, "select count(*) as n from webhook_deliveries where status = 'pending'")) > 0 ||
      (await pendingEvents(inst)) > 0
    ) {
      if (Date.now() > settle) {
        res.problems.push("backlog: the endpoint creations' own deliveries did not settle within 60 s");
        break;
      }
      await sleep(50);
    }
    const setup = rx.receipts.length;
    // Activities round-robin over the organizations until BACKLOG deliveries are queued.
    const items: Stamped[] = [];
    const stampers = orgs.map((o) => new FastStamper(o.apiPublicKey, o.apiPrivateKey));
    let queued = 0;
    for (let n = 0; queued < BACKLOG; n++) {
      const k = n % orgs.length;
      items.push(stampers[k]!.stamp(tagBody(orgs[k]!)));
      queued += perOrg[k]!;
    }
    const pendingBefore = await countOf(inst, "select count(*) as n from webhook_deliveries where status = 'pending'");
    rx.mark();
    rx.hold();
    const t0 = Date.now();
    const b = await submitAll(`${serverUrl}/public/v1/submit/create_user_tag`, items);
    checkBurst(b, "backlog", res.problems);
    // Every event fanned out, every delivery queued (the lanes' first attempts wait at the receiver).
    const deadline = Date.now() + Math.min(120_000, remainingMs() - 20_000);
    let pending = 0;
    for (;;) {
      pending = (await countOf(inst, "select count(*) as n from webhook_deliveries where status = 'pending'")) - pendingBefore;
      const unfanned = await pendingEvents(inst);
      if ((unfanned === 0 && pending >= queued) || Date.now() > deadline) break;
      await sleep(50);
    }
    const buildMs = Date.now() - t0;
    if (pending < queued) res.problems.push(`backlog: only ${pending} of ${queued} deliveries queued after ${buildMs} ms`);
    const opened = rx.release();
    const want = queued;
    const drainDeadline = Date.now() + Math.min(DRAIN_TIMEOUT_S * 1000 * 3, Math.max(1000, remainingMs() - 15_000));
    const mine = new Set(b.ids);
    const ours = () => rx.receipts.slice(setup).filter((r) => mine.has(r.activityId));
    while (rx.receipts.length - setup < want && Date.now() < drainDeadline) await sleep(10);
    const receipts = ours();
    const got = receipts.filter((r) => r.at >= opened);
    const lastAt = got.length ? got[got.length - 1]!.at : NaN;
    const ms = lastAt - opened;
    const quarters: number[] = [];
    if (got.length >= 8) {
      const cut = [0, 1, 2, 3, 4].map((q) => Math.min(got.length - 1, Math.floor((q * got.length) / 4)));
      for (let q = 0; q < 4; q++) quarters.push(((cut[q + 1]! - cut[q]!) * 1000) / Math.max(1, got[cut[q + 1]!]!.at - got[cut[q]!]!.at));
    }
    // Per endpoint: in event order, each event once.
    const last = new Map<string, string>();
    const seen = new Set<string>();
    let outOfOrder = 0;
    let duplicates = 0;
    for (const r of receipts) {
      const key = `${r.path} ${r.eventId}`;
      if (seen.has(key)) duplicates++;
      seen.add(key);
      const prev = last.get(r.path);
      if (prev !== undefined && r.eventId < prev) outOfOrder++;
      else last.set(r.path, r.eventId);
    }
    if (receipts.length < want) res.problems.push(`backlog: only ${receipts.length} of ${want} delivered within the drain timeout`);
    const failures = [...rx.verifyFailures.values()].reduce((a, x) => a + x, 0);
    if (failures > 0)
      res.problems.push(`backlog: signature verification failures: ${[...rx.verifyFailures].map(([r, n]) => `${r}×${n}`).join(", ")}`);
    const out: BacklogResult = {
      endpoints: ENDPOINTS,
      queued,
      delivered: receipts.length,
      ms,
      rate: (got.length * 1000) / ms,
      quarters,
      outOfOrder,
      duplicates,
      buildMs,
      verified: rx.verified,
      verifyFailures: failures,
    };
    log(
      `  backlog: ${fmtInt(b.ok)} activities → ${fmtInt(queued)} deliveries over ${ENDPOINTS} endpoints queued in ${fmtInt(buildMs)} ms; ` +
        `receiver opened: ${fmtInt(got.length)} delivered in ${fmtInt(ms)} ms → ${fmtInt(out.rate)}/s (quarters ${quarters.map((q) => fmtInt(q)).join(" / ")}); ` +
        `out of order ${outOfOrder}, duplicates ${duplicates}`,
    );
    return out;
  } finally {
    await rx.stop();
  }
}

// A server under --profile gets a directory of its own (node writes one profile per thread,
// tsx's loader thread included); the main thread's (thread id 0) is kept.
const profileDirOf = (engine: Engine, tree: string) => path.join(PROFILE_DIR!, `.webhooks-${engine}-${tree}`);
const profileArgs = (engine: Engine, tree: string) => (PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${profileDirOf(engine, tree)}`] : []);

async function stopSigil(server: Running, engine: Engine, tree: string): Promise<void> {
  if (!PROFILE_DIR) return server.stop();
  // SIGINT: the server shuts down cleanly, and node writes the profile as it exits.
  await server.stop("SIGINT", 30_000);
  const dir = profileDirOf(engine, tree);
  try {
    const main = readdirSync(dir).find((f) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f));
    if (!main) throw new Error(`no main-thread profile in ${dir}`);
    const file = path.join(PROFILE_DIR, `webhooks-${engine}-${tree}.cpuprofile`);
    mkdirSync(PROFILE_DIR, { recursive: true });
    renameSync(path.join(dir, main), file);
    rmSync(dir, { recursive: true, force: true });
    log(`  profile of the server's main thread: ${file}`);
  } catch (e) {
    log(`  (no profile: ${(e as Error).message})`);
  }
}

async function runEngine(engine: Engine, tree: { label: string; root?: string }): Promise<EngineResult> {
  const inst = await newSigilInstance(engine, POSTGRES_URL, tree.root);
  // procs.ts hands inst.env to the server as it is: the loopback receiver needs this.
  inst.env.SIGIL_WEBHOOKS_ALLOW_LOOPBACK = "true";
  // The backlog scenario holds requests at the receiver while the backlog builds: no attempt
  // may be cut meanwhile (every delivery here is answered at once otherwise).
  if (ENDPOINTS > 0) inst.env.SIGIL_WEBHOOKS_TIMEOUT_MS = "60000";
  const rx = new Receiver();
  const res: EngineResult = {
    engine,
    tree: tree.label,
    plain: [],
    hooked: [],
    problems: [],
    notes: [],
    payloadBytes: [],
    statuses: [],
    verified: 0,
    verifyFailures: new Map(),
    duplicates: 0,
    plainDelivered: 0,
  };
  let server: Running | undefined;
  try {
    const hookOrg = await sigilInit(inst, "Bench Webhook Org");
    const plainOrg = await sigilInit(inst, "Bench Plain Org");
    // The backlog scenario's organizations, made before the server owns the store.
    const backlogOrgs: InitResult[] = [];
    for (let k = 0; k < Math.ceil(ENDPOINTS / ENDPOINTS_PER_ORG); k++)
      backlogOrgs.push(await sigilInit(inst, `Bench Backlog Org ${k + 1}`));
    await rx.start();
    server = await startSigil(inst, profileArgs(engine, tree.label));
    const where =
      engine === "postgres"
        ? `PostgreSQL database ${new URL(inst.databaseUrl!).pathname.slice(1)} (dropped afterwards)`
        : `embedded SQLite in ${inst.dataDir}`;
    log(
      `\nsigil (${engine}, ${tree.label}): node ${path.join(inst.root, "bin/sigil.mjs")} serve, SIGIL_WEBHOOKS_ALLOW_LOOPBACK=true, LOG_LEVEL=${inst.env.LOG_LEVEL}, ${where}`,
    );

    // The published key set, as a receiver would fetch it.
    const jr = await fetch(`${server.url}/public/v1/discovery/webhooks/jwks`);
    const jwks = (await jr.json()) as { keys: { kid: string; x: string }[] };
    if (jr.status !== 200 || !jwks.keys?.length) throw new Error(`JWKS fetch failed (${jr.status}): ${JSON.stringify(jwks)}`);
    rx.publicKeys = new Map(jwks.keys.map((k) => [k.kid, k.x]));
    log(
      `  JWKS: ${jwks.keys.length} key(s) (${jwks.keys.map((k) => k.kid).join(", ")}), cache-control "${jr.headers.get("cache-control") ?? ""}"`,
    );

    // The endpoint, created through the API like any client would.
    const ep = await post(
      `${server.url}/public/v1/submit/create_webhook_endpoint`,
      await sdkStamp(
        JSON.stringify({
          type: "ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT",
          timestampMs: String(Date.now()),
          organizationId: hookOrg.organizationId,
          parameters: { url: rx.url, name: "bench receiver" },
        }),
        hookOrg.apiPublicKey,
        hookOrg.apiPrivateKey,
      ),
    );
    const epAct = (ep.json as ActivityAnswer).activity;
    if (ep.status !== 200 || epAct?.status !== "ACTIVITY_STATUS_COMPLETED") {
      throw new Error(`create_webhook_endpoint failed (${ep.status}): ${JSON.stringify(ep.json).slice(0, 500)}`);
    }
    log(
      `  endpoint ${String(epAct.result?.createWebhookEndpointResult?.endpointId ?? "?")} → ${rx.url} (organization ${hookOrg.organizationId}); organization ${plainOrg.organizationId} has none`,
    );

    const urlHook = `${server.url}/public/v1/submit/create_user_tag`;
    // Checks: an SDK-stamped activity in each organization; only the hooked one is delivered.
    rx.mark();
    const c1 = await post(urlHook, await sdkStamp(tagBody(hookOrg), hookOrg.apiPublicKey, hookOrg.apiPrivateKey));
    const c2 = await post(urlHook, await sdkStamp(tagBody(plainOrg), plainOrg.apiPublicKey, plainOrg.apiPrivateKey));
    const id1 = (c1.json as ActivityAnswer).activity?.id;
    const id2 = (c2.json as ActivityAnswer).activity?.id;
    if (c1.status !== 200 || c2.status !== 200 || !id1 || !id2) throw new Error(`create_user_tag checks failed: ${c1.status} ${c2.status}`);
    if (!(await waitDelivered(rx, [id1], 10_000)))
      throw new Error(`the check activity ${id1} was not delivered within 10 s:\n${server.output().slice(-3000)}`);
    const first = rx.byActivity.get(id1)!;
    log(
      `  check: activity ${id1} delivered in ${first.at - first.createdAt} ms (payload ${first.bytes} B), signature ${rx.verifyFailures.size === 0 ? "verified" : "REJECTED"} by @sigil/webhooks verifyWebhookSignature`,
    );

    const stHook = new FastStamper(hookOrg.apiPublicKey, hookOrg.apiPrivateKey);
    const stPlain = new FastStamper(plainOrg.apiPublicKey, plainOrg.apiPrivateKey);

    // Paced: one activity every 1/PACED_PER_S s, nothing queued: the dispatcher's own latency.
    if (PACED > 0) {
      rx.mark();
      const ids: string[] = [];
      const t0 = performance.now();
      for (let i = 0; i < PACED; i++) {
        const due = t0 + (i * 1000) / PACED_PER_S;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        const r = await post(urlHook, stHook.stamp(tagBody(hookOrg)));
        const id = (r.json as ActivityAnswer).activity?.id;
        if (r.status === 200 && id) ids.push(id);
        else res.problems.push(`paced: answer ${r.status}`);
      }
      const ok = await waitDelivered(rx, ids, 10_000);
      const got = ids.map((id) => rx.byActivity.get(id)).filter((r): r is Receipt => r !== undefined);
      res.paced = { n: ids.length, delivered: got.length, figs: lagsOf(got) };
      if (!ok) res.problems.push(`paced: ${ids.length - got.length} of ${ids.length} not delivered within 10 s`);
      log(
        `  paced: ${ids.length} activities at ${PACED_PER_S}/s → lag p50 ${quantile(res.paced.figs.lag, 0.5)} ms, p99 ${quantile(res.paced.figs.lag, 0.99)} ms`,
      );
    }

    const pid = server.proc.pid;
    const plainBurst = async (what: string): Promise<Burst> => {
      const items = stampMany(stPlain, plainOrg, ACTIVITIES_OR(what));
      const cpu0 = serverCpuMs(pid);
      const b = await submitAll(urlHook, items);
      b.cpuMs = serverCpuMs(pid) - cpu0;
      checkBurst(b, what, res.problems);
      log(
        `  ${what}, no endpoint: ${fmtInt(b.ok)} activities in ${fmtInt(b.ms)} ms → ${fmtInt((b.ok * 1000) / b.ms)}/s; ` +
          `server CPU ${fmtInt((b.cpuMs * 1000) / b.ok)} µs per activity`,
      );
      return b;
    };
    const hookedBurst = async (what: string): Promise<HookRound> => {
      const items = stampMany(stHook, hookOrg, ACTIVITIES_OR(what));
      rx.mark();
      const cpu0 = serverCpuMs(pid);
      const b = await submitAll(urlHook, items);
      checkBurst(b, what, res.problems);
      const atSubmitEnd = b.ids.filter((id) => rx.byActivity.has(id)).length;
      const drained = await waitDelivered(rx, b.ids, Math.min(DRAIN_TIMEOUT_S * 1000, Math.max(1000, remainingMs() - 15_000)));
      // Submissions and their deliveries (the last batch's record may land just after).
      b.cpuMs = serverCpuMs(pid) - cpu0;
      const got = b.ids
        .map((id) => rx.byActivity.get(id))
        .filter((r): r is Receipt => r !== undefined)
        .sort((x, y) => x.at - y.at);
      const lastAt = got.length ? got[got.length - 1]!.at : NaN;
      // The drain after the last answer, per quarter of what was left: a claim scans the
      // endpoint's whole pending backlog, so the rate shows whether it grows as that shrinks.
      const after = got.filter((r) => r.at > b.endedAt);
      const afterQuarters: number[] = [];
      if (after.length >= 8) {
        const cut = [0, 1, 2, 3, 4].map((q) => Math.min(after.length - 1, Math.floor((q * after.length) / 4)));
        for (let q = 0; q < 4; q++)
          afterQuarters.push(((cut[q + 1]! - cut[q]!) * 1000) / Math.max(1, after[cut[q + 1]!]!.at - after[cut[q]!]!.at));
      }
      // Deliveries to one endpoint go out in event order: event ids are UUIDv7 minted inside
      // the writing transaction, so their order is commit order (SQLite). Count receipts
      // whose event id sorts before one received earlier.
      const mine = new Set(b.ids);
      let outOfOrder = 0;
      let max: Receipt | undefined;
      for (const r of rx.receipts) {
        if (!mine.has(r.activityId)) continue;
        if (max && r.eventId < max.eventId) {
          if (outOfOrder++ === 0) {
            res.notes.push(
              `${what}: event ${r.eventId} (activity createdAt ${r.createdAt}) was received ${r.at - max.at} ms after event ${max.eventId} ` +
                `(createdAt ${max.createdAt}), whose id sorts after it`,
            );
          }
        } else max = r;
      }
      const h: HookRound = {
        burst: b,
        drained,
        delivered: got.length,
        e2eMs: lastAt - b.startedAt,
        atSubmitEnd,
        duringRate: (atSubmitEnd * 1000) / b.ms,
        afterRate: ((got.length - atSubmitEnd) * 1000) / Math.max(1, lastAt - b.endedAt),
        afterQuarters,
        figs: lagsOf(got),
        outOfOrder,
      };
      if (!drained) {
        const pend = await pendingEvents(inst).catch(() => NaN);
        res.problems.push(
          `${what}: only ${got.length} of ${b.ids.length} delivered within the drain timeout (${pend} events not yet fanned out)`,
        );
      }
      log(
        `  ${what}, endpoint: ${fmtInt(b.ok)} activities in ${fmtInt(b.ms)} ms → ${fmtInt((b.ok * 1000) / b.ms)}/s ` +
          `(server CPU ${fmtInt((b.cpuMs * 1000) / b.ok)} µs per activity and its delivery), ` +
          `${fmtInt(atSubmitEnd)} delivered meanwhile (${fmtInt(h.duringRate)}/s); all ${fmtInt(got.length)} delivered ${fmtInt(h.e2eMs)} ms ` +
          `after the first submission (${fmtInt((got.length * 1000) / h.e2eMs)}/s); drain ${fmtInt(h.afterRate)}/s ` +
          `(quarters ${afterQuarters.map((q) => fmtInt(q)).join(" / ")})`,
      );
      return h;
    };

    // Warm-up (JIT, caches, the first events and deliveries): not counted.
    if (WARMUP > 0) {
      await plainBurst("warm-up");
      await hookedBurst("warm-up");
    }
    // Bursts, alternating which organization goes first.
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (["plain", "hooked"] as const) : (["hooked", "plain"] as const);
      if (remainingMs() < 30_000) {
        res.problems.push(`rounds ${round + 1}–${ROUNDS} skipped: the ${TIMEOUT_S} s budget is nearly spent`);
        break;
      }
      for (const side of order) {
        if (side === "plain") res.plain.push(await plainBurst(`round ${round + 1}`));
        else res.hooked.push(await hookedBurst(`round ${round + 1}`));
      }
    }

    if (ENDPOINTS > 0) {
      if (remainingMs() < 40_000) res.problems.push(`backlog scenario skipped: the ${TIMEOUT_S} s budget is nearly spent`);
      else res.backlog = await backlogScenario(inst, server.url, backlogOrgs, res);
    }

    // Let stragglers (duplicates, late retries) land, then read the store's view.
    await sleep(500);
    res.statuses = await deliveryStatuses(inst);
    res.payloadBytes = rx.receipts.map((r) => r.bytes).sort((a, b) => a - b);
    res.verified = rx.verified;
    res.verifyFailures = rx.verifyFailures;
    res.duplicates = rx.duplicates;
    res.plainDelivered = rx.receipts.filter((r) => r.organizationId === plainOrg.organizationId).length;
    if (res.plainDelivered > 0) res.problems.push(`${res.plainDelivered} deliveries of the organization without endpoint`);
    if (rx.duplicates > 0) res.notes.push(`${rx.duplicates} deliveries repeated an event id already received`);
    if (rx.badRequests > 0) res.problems.push(`${rx.badRequests} deliveries with an unparseable body`);
    const failed = res.statuses.filter((s) => s.status !== "delivered");
    if (failed.some((s) => s.n > 0))
      res.problems.push(`deliveries not delivered in the store: ${failed.map((s) => `${s.status} ${s.n}`).join(", ")}`);
    const retried = res.statuses.reduce((a, s) => a + s.retried, 0);
    if (retried > 0) res.notes.push(`${retried} deliveries needed more than one attempt`);
    if (rx.verifyFailures.size > 0)
      res.problems.push(`signature verification failures: ${[...rx.verifyFailures].map(([r, n]) => `${r}×${n}`).join(", ")}`);
    // Warnings and errors the server logged, grouped by message.
    const logged = new Map<string, number>();
    for (const line of server.output().split("\n")) {
      if (!/"level":(40|50|60)/.test(line) || line.includes("SIGIL_WEBHOOKS_ALLOW_LOOPBACK")) continue;
      let what = line.slice(0, 300);
      try {
        const j = JSON.parse(line) as { level: number; msg?: string; err?: { message?: string; stack?: string } };
        const at = j.err?.stack
          ?.split("\n")
          .find((l) => l.includes("/src/"))
          ?.trim();
        what = `level ${j.level} "${j.msg ?? ""}"${j.err?.message ? `: ${j.err.message}` : ""}${at ? ` (${at.replace(/^at /, "").replace(/file:\/\/\S*\/src\//, "src/")})` : ""}`;
      } catch {
        /* not JSON: keep the raw line */
      }
      logged.set(what, (logged.get(what) ?? 0) + 1);
    }
    for (const [what, n] of logged) res.notes.push(`server logged ${n}× ${what}`);
    return res;
  } finally {
    if (server) await stopSigil(server, engine, tree.label);
    await rx.stop();
    await inst.cleanup();
  }
}

// ---------------------------------------------------------------- report

/** Server CPU µs per activity over bursts (NaN without /proc). */
function cpuPerActivity(bursts: readonly Burst[]): number {
  const ok = bursts.reduce((a, b) => a + b.ok, 0);
  return (bursts.reduce((a, b) => a + b.cpuMs, 0) * 1000) / Math.max(1, ok);
}

/** The keep-up goal for one endpoint (docs/benchmarks.md §6.1): the submit rate with / without, and the lag p99. */
function keepUp(r: EngineResult): { ratio: number; lagP50: number; lagP99: number } {
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
  const ratio = mean(r.hooked.map((h) => (h.burst.ok * 1000) / h.burst.ms)) / mean(r.plain.map((b) => (b.ok * 1000) / b.ms));
  const lag = r.hooked.flatMap((h) => h.figs.lag).sort((a, b) => a - b);
  return { ratio, lagP50: quantile(lag, 0.5), lagP99: quantile(lag, 0.99) };
}

function engineTable(results: EngineResult[], rawSignRate: number): string {
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
  const head = ["figure", ...results.map((r) => `${r.engine} ${r.tree}`)];
  const rows: string[][] = [];
  const add = (label: string, f: (r: EngineResult) => string) => rows.push([label, ...results.map(f)]);
  const plainRate = (r: EngineResult) => mean(r.plain.map((b) => (b.ok * 1000) / b.ms));
  const hookRate = (r: EngineResult) => mean(r.hooked.map((h) => (h.burst.ok * 1000) / h.burst.ms));
  add(`submit rate, organization without endpoint (activities/s, mean of ${ROUNDS})`, (r) => fmtInt(plainRate(r)));
  add(`submit rate, organization with endpoint (activities/s, mean of ${ROUNDS})`, (r) => fmtInt(hookRate(r)));
  add("  ratio with / without endpoint (goal ≥ 80%)", (r) => {
    const per = r.hooked.map((h, i) => (r.plain[i] ? ((h.burst.ok / h.burst.ms) * r.plain[i]!.ms) / r.plain[i]!.ok : NaN));
    return `${pct(hookRate(r) / plainRate(r))} (rounds ${per.map(pct).join(", ")})`;
  });
  add("server CPU µs per activity: without endpoint / with (its delivery included) / ratio", (r) => {
    const plain = cpuPerActivity(r.plain);
    const hooked = cpuPerActivity(r.hooked.map((h) => h.burst));
    return `${fmtInt(plain)} / ${fmtInt(hooked)} / ${pct(plain / hooked)}`;
  });
  const e2e = (r: EngineResult) => mean(r.hooked.map((h) => (h.delivered * 1000) / h.e2eMs));
  add(`deliveries/s, one endpoint: K=${fmtInt(ACTIVITIES)}, first submission → last delivery`, (r) => fmtInt(e2e(r)));
  add(`  share of the raw-sign baseline (${fmtInt(rawSignRate)} signatures/s this run)`, (r) => pct(e2e(r) / rawSignRate));
  add("  while the submissions ran", (r) => fmtInt(mean(r.hooked.map((h) => h.duringRate))));
  add("  after the last answer (backlog drain)", (r) => fmtInt(mean(r.hooked.map((h) => h.afterRate))));
  add("  drain per quarter of that backlog (1st / 2nd / 3rd / 4th)", (r) =>
    [0, 1, 2, 3].map((q) => fmtInt(mean(r.hooked.map((h) => h.afterQuarters[q] ?? NaN)))).join(" / "),
  );
  add(`deliveries/s, backlog over ${ENDPOINTS} endpoints (${fmtInt(BACKLOG)} queued): opening → last delivery`, (r) =>
    r.backlog ? fmtInt(r.backlog.rate) : "-",
  );
  add("  share of the raw-sign baseline", (r) => (r.backlog ? pct(r.backlog.rate / rawSignRate) : "-"));
  add("  drain per quarter (1st / 2nd / 3rd / 4th)", (r) => (r.backlog ? r.backlog.quarters.map(fmtInt).join(" / ") : "-"));
  add("  out of endpoint order / duplicates / signatures ok of sampled", (r) =>
    r.backlog
      ? `${r.backlog.outOfOrder} / ${r.backlog.duplicates} / ${r.backlog.verified - r.backlog.verifyFailures} of ${r.backlog.verified}`
      : "-",
  );
  add("  backlog built in (submissions + fan-out, ms)", (r) => (r.backlog ? fmtInt(r.backlog.buildMs) : "-"));
  add("delivered by the last answer (mean of rounds)", (r) => pct(mean(r.hooked.map((h) => h.atSubmitEnd / Math.max(1, h.burst.ok)))));
  const allLag = (r: EngineResult) => r.hooked.flatMap((h) => h.figs.lag).sort((a, b) => a - b);
  const allWire = (r: EngineResult) => r.hooked.flatMap((h) => h.figs.wire).sort((a, b) => a - b);
  add(
    "burst lag p50 / p99 ms (receipt − activity createdAt; goal p99 ≤ 1,000)",
    (r) => `${fmtInt(quantile(allLag(r), 0.5))} / ${fmtInt(quantile(allLag(r), 0.99))}`,
  );
  add(
    "burst p50 / p99 ms (receipt − X-Service-Timestamp)",
    (r) => `${fmtInt(quantile(allWire(r), 0.5))} / ${fmtInt(quantile(allWire(r), 0.99))}`,
  );
  add(`paced lag p50 / p99 ms (${PACED} at ${PACED_PER_S}/s, receipt − createdAt)`, (r) =>
    r.paced ? `${fmt1(quantile(r.paced.figs.lag, 0.5))} / ${fmt1(quantile(r.paced.figs.lag, 0.99))}` : "-",
  );
  add("paced p50 / p99 ms (receipt − X-Service-Timestamp)", (r) =>
    r.paced ? `${fmt1(quantile(r.paced.figs.wire, 0.5))} / ${fmt1(quantile(r.paced.figs.wire, 0.99))}` : "-",
  );
  add(
    "payload bytes min / median / max",
    (r) =>
      `${fmtInt(r.payloadBytes[0] ?? NaN)} / ${fmtInt(quantile(r.payloadBytes, 0.5))} / ${fmtInt(r.payloadBytes[r.payloadBytes.length - 1] ?? NaN)}`,
  );
  add(
    "signatures verified (@sigil/webhooks, JWKS) ok / sampled",
    (r) => `${r.verified - [...r.verifyFailures.values()].reduce((a, b) => a + b, 0)} / ${r.verified}`,
  );
  add("received out of event order / duplicate event ids", (r) => `${r.hooked.reduce((a, h) => a + h.outOfOrder, 0)} / ${r.duplicates}`);
  add(
    "deliveries in the store by status (retried)",
    (r) => r.statuses.map((s) => `${s.status} ${fmtInt(s.n)}${s.retried ? ` (${s.retried})` : ""}`).join(", ") || "-",
  );
  return table(head, rows, new Set(results.map((_, i) => i + 1)));
}

async function main(): Promise<void> {
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  log(`Sigil webhooks benchmark — node ${process.version}, ${os.cpus().length} cores (${cpu})`);
  log(setupPinning({ disabled: process.argv.includes("--no-pin") }));
  if (POSTGRES_URL) log(await pinDatabase(POSTGRES_URL, log));

  // 1 + 2: signing in this process.
  const s = await benchSigning();
  log(
    `\nsigning: Ed25519, single thread, this process; body ${fmtInt(s.bodyBytes)} B (synthetic create_user_tag ACTIVITY_UPDATES payload), ` +
      `signed message ${fmtInt(s.messageBytes)} B; ${SIGN_ROUNDS} rounds (order alternating), ${DURATION_S} s per variant in all; ` +
      `medians over the rounds; ratios from CPU time (this process's user+system), which other load on the machine does not inflate`,
  );
  log(
    table(
      ["variant", "signatures/s (wall)", "per CPU-s", "µs CPU each", "vs baseline (CPU)"],
      s.rows.map((r) => [r.label, fmtInt(r.rate), fmtInt(r.cpuRate), fmt1(1e6 / r.cpuRate), pct(r.ratio)]),
      new Set([1, 2, 3, 4]),
    ),
  );
  log(
    `opening the sealed key (MasterKey.open + createPrivateKey of the PKCS#8 DER): ${fmtInt(s.openUs)} µs CPU, ` +
      `${fmt1(s.openUs / (1e6 / s.rows[0]!.cpuRate))}× a signature; the dispatcher caches the opened key per key id`,
  );

  // 3: end to end.
  log(
    `\nend to end: K=${fmtInt(ACTIVITIES)} create_user_tag activities per burst, ${CONNECTIONS} concurrent fetch submitters, ` +
      `${WARMUP ? `warm-up bursts of ${fmtInt(WARMUP)}, then ` : ""}${ROUNDS} alternating rounds (plain/endpoint, endpoint/plain, ...); receiver: node:http in this process, answers 200 at once; ` +
      `verifies the first ${VERIFY_FIRST} of each phase and 1 in ${VERIFY_EVERY}`,
  );
  const results: EngineResult[] = [];
  const now = { label: "now" };
  const before = BEFORE_ROOT ? { label: "before", root: path.resolve(BEFORE_ROOT) } : undefined;
  // Alternating which tree goes first, so drift on the machine weighs on both.
  if (!SKIP_SQLITE) for (const t of before ? [now, before] : [now]) results.push(await runEngine("sqlite", t));
  if (POSTGRES_URL) for (const t of before ? [before, now] : [now]) results.push(await runEngine("postgres", t));
  else log("\n(PostgreSQL skipped: pass --postgres <url> or set BENCH_DATABASE_URL)");

  const rawSign = s.rows[0]!.rate;
  if (results.length) log(`\n${engineTable(results, rawSign)}`);
  if (before) {
    // Now against before, per engine: the goals next to each (docs/benchmarks.md §6).
    const rows: string[][] = [];
    for (const engine of ["sqlite", "postgres"] as const) {
      const n = results.find((r) => r.engine === engine && r.tree === "now");
      const b = results.find((r) => r.engine === engine && r.tree === "before");
      if (!n || !b) continue;
      const e2e = (r: EngineResult) => r.hooked.reduce((a, h) => a + (h.delivered * 1000) / h.e2eMs, 0) / Math.max(1, r.hooked.length);
      const kb = keepUp(b);
      const kn = keepUp(n);
      rows.push([
        `${engine}: activity rate with one endpoint / without (goal ≥ 80%)`,
        pct(kb.ratio),
        pct(kn.ratio),
        `${fmt1(kn.ratio / kb.ratio)}×`,
        "",
      ]);
      rows.push([
        `${engine}: delivery lag p50 / p99 ms (goal p99 ≤ 1,000)`,
        `${fmtInt(kb.lagP50)} / ${fmtInt(kb.lagP99)}`,
        `${fmtInt(kn.lagP50)} / ${fmtInt(kn.lagP99)}`,
        "",
        "",
      ]);
      const cpu = (r: EngineResult) => cpuPerActivity(r.hooked.map((h) => h.burst)) - cpuPerActivity(r.plain);
      rows.push([
        `${engine}: server CPU µs per delivery (with − without, per activity)`,
        fmtInt(cpu(b)),
        fmtInt(cpu(n)),
        `${fmt1(cpu(n) / cpu(b))}×`,
        "",
      ]);
      rows.push([
        `${engine}: one endpoint, first submission → last delivery (goal ≥ 1,500/s, order kept)`,
        fmtInt(e2e(b)),
        fmtInt(e2e(n)),
        `${fmt1(e2e(n) / e2e(b))}×`,
        `${pct(e2e(b) / rawSign)} → ${pct(e2e(n) / rawSign)}`,
      ]);
      if (n.backlog && b.backlog) {
        rows.push([
          `${engine}: backlog over ${ENDPOINTS} endpoints (goal ≥ 5,000/s)`,
          fmtInt(b.backlog.rate),
          fmtInt(n.backlog.rate),
          `${fmt1(n.backlog.rate / b.backlog.rate)}×`,
          `${pct(b.backlog.rate / rawSign)} → ${pct(n.backlog.rate / rawSign)}`,
        ]);
      }
    }
    log(`\nwebhooks, before (${BEFORE_ROOT}) and now, same run; raw-sign baseline ${fmtInt(rawSign)}/s`);
    log(table(["scenario", "before", "now", "now / before", "share of raw sign"], rows, new Set([1, 2, 3])));
  }
  if (JSON_FILE) {
    const oneEndpoint = (r: EngineResult) =>
      r.hooked.reduce((a, h) => a + (h.delivered * 1000) / h.e2eMs, 0) / Math.max(1, r.hooked.length);
    const rows = results.flatMap((r) => [
      {
        name: "activity rate with one endpoint / without",
        engine: r.engine,
        tree: r.tree,
        ratio: Number(keepUp(r).ratio.toFixed(3)),
        lagP50Ms: keepUp(r).lagP50,
        lagP99Ms: keepUp(r).lagP99,
        cpuUsPerActivity: { without: Math.round(cpuPerActivity(r.plain)), with: Math.round(cpuPerActivity(r.hooked.map((h) => h.burst))) },
        goal: "≥ 80 %, lag p99 ≤ 1 s",
        met: keepUp(r).ratio >= 0.8 && keepUp(r).lagP99 <= 1000,
        valid: r.problems.length === 0,
      },
      {
        name: "webhook deliveries, one endpoint",
        engine: r.engine,
        tree: r.tree,
        deliveriesPerS: Math.round(oneEndpoint(r)),
        goal: "≥ 1,500/s",
        met: oneEndpoint(r) >= 1500,
        valid: r.problems.length === 0,
      },
      ...(r.backlog
        ? [
            {
              name: `webhook deliveries, backlog over ${ENDPOINTS} endpoints`,
              engine: r.engine,
              tree: r.tree,
              deliveriesPerS: Math.round(r.backlog.rate),
              goal: "≥ 5,000/s",
              met: r.backlog.rate >= 5000,
              valid: r.problems.length === 0,
            },
          ]
        : []),
    ]);
    writeFileSync(JSON_FILE, `${JSON.stringify(rows, null, 2)}\n`);
    log(`JSON: ${rows.length} rows written to ${path.resolve(JSON_FILE)}`);
  }
  for (const r of results) for (const n of r.notes) log(`note [${r.engine} ${r.tree}]: ${n}`);
  const bad = results.filter((r) => r.problems.length);
  for (const r of bad) for (const p of r.problems) log(`PROBLEM [${r.engine} ${r.tree}]: ${p}`);
  log(`\ndone in ${((performance.now() - started) / 1000).toFixed(0)} s${bad.length ? `; problems in ${bad.length} engine run(s)` : ""}`);
  await cleanupAll();
  clearTimeout(watchdog);
  process.exitCode = bad.length ? 1 : 0;
}

main().catch((e: unknown) => void bail(1, `benchmark failed: ${(e as Error).stack ?? String(e)}`));
