// The event-loop budget under one tenant's heaviest legal request (docs/benchmarks.md §8).
//
//   npm run bench:worst [-- --engine sqlite|postgres|both] [--postgres URL] [--kinds 1,2,7a]
//                       [--duration S] [--idle S] [--rows N] [--interval MS] [--cap-ms MS] [--timeout S]
//
//   --engine E / BENCH_ENGINE       sqlite (default), postgres, or both; a PostgreSQL URL given by
//                                   --postgres, BENCH_DATABASE_URL or DATABASE_URL means both
//   --postgres URL                  admin URL of the PostgreSQL server (default
//                                   postgres://postgres@127.0.0.1:5432/test); the large store is
//                                   the database `sigil_bench_worst` next to it, the small one a
//                                   throw-away database
//   --kinds LIST                    only these kinds (1, 1b, 2, 3, 4, 5, 6, 7a, 7b, 8; "1" and "7" name both)
//   --duration S                    seconds each kind's request is repeated (default 4; at least once)
//   --idle S                        seconds of the other tenant alone before each kind (default 2)
//   --rows N                        sub-organizations and activities of the large store (1,000,000)
//   --interval MS                   the other tenant's period (default 10 ms)
//   --cap-ms MS                     kind 1 stops making its policies heavier once one activity
//                                   takes this long (default 1000): without a bound in the server
//                                   the next step could hold it for hours
//   --request-timeout S             a request unanswered after S seconds (default 60) counts as
//                                   that long a wait, and the server is restarted
//   --timeout S                     abort (and clean up) after S seconds (default 1800)
//   --verbose                       print every request tried while choosing a kind's request
//   --profile DIR                   run the servers under node --cpu-prof, profiles into DIR/<engine>-<kinds>/
//                                   (read them with bench/profile-summary.ts; figures then include
//                                   the profiler's overhead)
//   --tree DIR                      serve (and seed with) the Sigil tree in DIR, with its node_modules,
//                                   instead of this one: e.g. a clean export of a commit while this
//                                   working tree is being edited
//
// One tenant (the root of a sub-organization; for kind 7 the root of the large organization)
// sends its heaviest legal request again and again, one at a time, while another tenant, in its
// own process (bench/worst-probe.ts), sends GET /healthz and a stamped whoami every 10 ms. What
// the other tenant waits is the event loop it shares with the first: its worst wait, its p99,
// and the p99 of the same probe alone just before, are printed per kind and engine, with the
// verdict against the goal (worst ≤ 50 ms). Where a kind has several shapes (e.g. a megabyte of
// one long string or of half a million array elements), each is sent once and the slowest
// accepted one is the kind's request; where a limit may have changed under another engineer's
// hands (Bitcoin inputs, Solana bytes, nesting depth, the policy bound), the largest size the
// server accepts is found by trying.
import { fork, execFileSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { Turnkey } from "@turnkey/sdk-server";
import * as btc from "@scure/btc-signer";
import { base58 } from "@scure/base";
import { guardRun, newSigilInstance, ROOT, sigilInit, startSigil, type Engine, type Running, type SigilInstance } from "./procs.ts";
import { FastStamper, newP256KeyPair } from "./stamp.ts";
import { num, option } from "./options.ts";
import { seededStore } from "./worst-store.ts";

const PG_GIVEN = option("--postgres", "BENCH_DATABASE_URL") ?? (process.env.DATABASE_URL || undefined);
const PG_URL = PG_GIVEN ?? "postgres://postgres@127.0.0.1:5432/test";
const ENGINE_ARG = option("--engine", "BENCH_ENGINE") ?? (PG_GIVEN ? "both" : "sqlite");
const DURATION_S = num("--duration", "BENCH_DURATION", 4, 0.1, 600);
const IDLE_S = num("--idle", "BENCH_IDLE", 2, 0.2, 600);
const ROWS = num("--rows", "BENCH_ROWS", 1_000_000, 100, 10_000_000);
const INTERVAL_MS = num("--interval", "BENCH_INTERVAL", 10, 1, 1000);
const CAP_MS = num("--cap-ms", "BENCH_CAP_MS", 1000, 10, 60_000);
const TIMEOUT_S = num("--timeout", "BENCH_TIMEOUT", 1800, 10, 24 * 3600);
const VERBOSE = process.argv.includes("--verbose");
const PROFILE_DIR = option("--profile", "BENCH_PROFILE");
const TREE = path.resolve(option("--tree", "BENCH_TREE") ?? ROOT);
const KINDS = option("--kinds", "BENCH_KINDS")
  ?.split(",")
  .map((k) => k.trim());
/** The goal: the other tenant never waits longer than this (docs/benchmarks.md §8). */
const GOAL_MS = 50;
/** What a single request may take before the server is deemed stuck (and restarted). */
const REQUEST_TIMEOUT_MS = num("--request-timeout", "BENCH_REQUEST_TIMEOUT", 60, 1, 3600) * 1000;
/** A loaded machine may take a while to start a server (from the sources when the bundle is stale). */
const STARTUP_TIMEOUT_MS = 120_000;
const BODY_LIMIT = Number(process.env.SIGIL_BODY_LIMIT_BYTES || 1_048_576);

const ENGINES: Engine[] =
  ENGINE_ARG === "both" || ENGINE_ARG === "all"
    ? ["sqlite", "postgres"]
    : ENGINE_ARG === "sqlite" || ENGINE_ARG === "postgres"
      ? [ENGINE_ARG]
      : [];
if (ENGINES.length === 0) throw new Error(`--engine must be sqlite, postgres or both, got ${ENGINE_ARG}`);

const { bail, watchdog } = guardRun(TIMEOUT_S);
const log = (m: string) => process.stdout.write(`${m}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- requests

interface Answer {
  status: number;
  ms: number;
  text: string;
}

/** One kind of request, as the attacking tenant sends it: a fresh body (timestamp) every time. */
interface Shot {
  label: string;
  path: string;
  body: () => string;
  stamper: FastStamper;
}

async function fire(base: string, shot: Shot): Promise<Answer> {
  const s = shot.stamper.stamp(shot.body());
  const t = performance.now();
  try {
    const r = await fetch(base + shot.path, {
      method: "POST",
      headers: { "content-type": "application/json", "x-stamp": s.stamp },
      // The same UTF-8 bytes the stamp signed.
      body: s.body.toString("utf8"),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await r.text();
    return { status: r.status, ms: performance.now() - t, text };
  } catch (e) {
    return { status: 0, ms: performance.now() - t, text: (e as Error).message };
  }
}

const activityBody = (type: string, organizationId: string, parameters: Record<string, unknown>) =>
  JSON.stringify({ type, timestampMs: String(Date.now()), organizationId, parameters });

let tags = 0;
const userTag = (organizationId: string) =>
  activityBody("ACTIVITY_TYPE_CREATE_USER_TAG", organizationId, { userTagName: `worst-${process.pid}-${++tags}`, userIds: [] });

/** A JSON object body with `pad` appended as its last member; with a `size`, exactly that many bytes (spaces fill the rest). */
function padded(body: string, size: number | undefined, pad: (room: number) => string): string {
  const head = `${body.slice(0, -1)},"pad":`;
  if (size === undefined) return `${head}${pad(Infinity)}}`;
  const room = size - Buffer.byteLength(head) - 1;
  const value = pad(room);
  const fill = room - Buffer.byteLength(value);
  if (fill < 0) throw new Error(`pad of ${Buffer.byteLength(value)} bytes does not fit in ${room}`);
  return `${head}${value}${" ".repeat(fill)}}`;
}

/** `n` copies of `item` joined by commas, as many as fit in `room` characters with `open`/`close` around them. */
function repeated(open: string, item: string, close: string, room: number, max = Infinity): string {
  const n = Math.min(max, Math.max(0, Math.floor((room - open.length - close.length + 1) / (item.length + 1))));
  return open + Array(n).fill(item).join(",") + close;
}

// ---------------------------------------------------------------- the other tenant

class Probe {
  private readonly child: ChildProcess;
  private waiting: ((m: Record<string, unknown>) => void) | undefined;

  constructor() {
    this.child = fork(path.join(ROOT, "bench/worst-probe.ts"), [], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    this.child.on("message", (m: Record<string, unknown>) => {
      const w = this.waiting;
      this.waiting = undefined;
      w?.(m);
    });
  }

  private ask(m: Record<string, unknown>): Promise<Record<string, unknown>> {
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.child.send(m);
    });
  }

  configure(url: string, org: Tenant): Promise<unknown> {
    return this.ask({
      type: "config",
      url,
      organizationId: org.organizationId,
      apiPublicKey: org.key.publicKey,
      apiPrivateKey: org.key.privateKey,
      intervalMs: INTERVAL_MS,
    });
  }

  start(): Promise<unknown> {
    return this.ask({ type: "start" });
  }

  async stop(): Promise<{ all: number[]; errors: string[]; errorCount: number }> {
    const m = (await this.ask({ type: "stop" })) as { healthz: number[]; whoami: number[]; errors: string[]; errorCount: number };
    return { all: [...m.healthz, ...m.whoami], errors: m.errors, errorCount: m.errorCount };
  }

  close(): void {
    if (this.child.connected) this.child.send({ type: "exit" });
  }
}

// ---------------------------------------------------------------- tenants

interface Tenant {
  organizationId: string;
  key: { publicKey: string; privateKey: string };
}

const sdk = (url: string, t: Tenant) =>
  new Turnkey({
    apiBaseUrl: url,
    apiPublicKey: t.key.publicKey,
    apiPrivateKey: t.key.privateKey,
    defaultOrganizationId: t.organizationId,
  }).apiClient();

const ACCOUNTS = {
  eth: { curve: "CURVE_SECP256K1", pathFormat: "PATH_FORMAT_BIP32", path: "m/44'/60'/0'/0/0", addressFormat: "ADDRESS_FORMAT_ETHEREUM" },
  btc: {
    curve: "CURVE_SECP256K1",
    pathFormat: "PATH_FORMAT_BIP32",
    path: "m/84'/0'/0'/0/0",
    addressFormat: "ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH",
  },
  sol: { curve: "CURVE_ED25519", pathFormat: "PATH_FORMAT_BIP32", path: "m/44'/501'/0'/0'", addressFormat: "ADDRESS_FORMAT_SOLANA" },
} as const;

interface Attacker extends Tenant {
  stamper: FastStamper;
  eth: string;
  btc: { address: string; publicKey: Uint8Array };
  sol: string;
}

/** A sub-organization of `parent` whose one root user holds a fresh API key; with a wallet when asked. */
async function subOrganization(url: string, parent: Tenant, name: string, withWallet = false) {
  const key = newP256KeyPair();
  const res = await sdk(url, parent).createSubOrganization({
    subOrganizationName: `${name}-${randomBytes(4).toString("hex")}`,
    rootQuorumThreshold: 1,
    rootUsers: [
      {
        userName: "owner",
        apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
        authenticators: [],
        oauthProviders: [],
      },
    ],
    ...(withWallet ? { wallet: { walletName: "worst", accounts: [ACCOUNTS.eth, ACCOUNTS.btc, ACCOUNTS.sol] } } : {}),
  });
  return { tenant: { organizationId: res.subOrganizationId, key } satisfies Tenant, addresses: res.wallet?.addresses ?? [] };
}

async function attacker(url: string, parent: Tenant): Promise<Attacker> {
  const { tenant, addresses } = await subOrganization(url, parent, "attacker", true);
  const [eth, btcAddress, sol] = addresses as [string, string, string];
  const { accounts } = await sdk(url, tenant).getWalletAccounts({ walletId: (await sdk(url, tenant).getWallets({})).wallets[0]!.walletId });
  const btcAccount = accounts.find((a) => a.address === btcAddress)!;
  return {
    ...tenant,
    stamper: new FastStamper(tenant.key.publicKey, tenant.key.privateKey),
    eth,
    sol,
    btc: { address: btcAddress, publicKey: Uint8Array.from(Buffer.from(btcAccount.publicKey!, "hex")) },
  };
}

// ---------------------------------------------------------------- the kinds

interface Context {
  server: Running;
  parent: Tenant;
  attacker: Attacker;
  probe: Probe;
  restart(): Promise<void>;
  notes: string[];
}

type Samples = Awaited<ReturnType<Probe["stop"]>>;

/** One request sent while the other tenant was measuring. */
interface Tried {
  shot: Shot;
  answer: Answer;
  samples: Samples;
}

interface Prepared {
  /** The kind's request, as first sent (the other tenant measured it too). */
  first: Tried;
  /** What was chosen, and why. */
  note: string;
}

interface Kind {
  id: string;
  name: string;
  prepare(ctx: Context): Promise<Prepared>;
}

/** Accepted, or never answered (it held the server past the timeout: the heaviest of all). */
const accepted = (a: Answer) => a.status === 200 || a.status === 0;
const brief = (a: Answer) => `${a.status || "no answer"} in ${a.ms.toFixed(0)} ms${a.status === 200 ? "" : `: ${a.text.slice(0, 160)}`}`;

/** Sends a shot once; a server that did not answer within the timeout is restarted. */
async function once(ctx: Context, shot: Shot): Promise<Answer> {
  const a = await fire(ctx.server.url, shot);
  if (a.status === 0) {
    ctx.notes.push(`${shot.label}: no answer in ${REQUEST_TIMEOUT_MS / 1000} s (${a.text}); server restarted`);
    await ctx.restart();
  }
  return a;
}

/** `once` while the other tenant measures: every request a kind tries counts, the choosing included. */
async function timed(ctx: Context, shot: Shot): Promise<Tried> {
  await ctx.probe.start();
  const answer = await once(ctx, shot);
  // A little after the answer, so that what queued behind it is counted.
  await sleep(100);
  const samples = await ctx.probe.stop();
  if (VERBOSE) log(`     (tried ${shot.label}: ${brief(answer)}; the other tenant's worst ${Math.max(...samples.all).toFixed(0)} ms)`);
  return { shot, answer, samples };
}

/** The first shot of a ladder (largest first) that the server does not refuse as too large or malformed (4xx). */
async function largestAccepted(ctx: Context, ladder: Shot[]): Promise<Tried & { refused: string[] }> {
  const refused: string[] = [];
  for (const shot of ladder) {
    const t = await timed(ctx, shot);
    if (t.answer.status < 400 || t.answer.status >= 500 || shot === ladder.at(-1)) return { ...t, refused };
    refused.push(`${shot.label} refused (${brief(t.answer)})`);
  }
  throw new Error("empty ladder");
}

/** Each candidate (a ladder of sizes) sent once: the slowest accepted one, else the slowest. */
async function slowest(ctx: Context, candidates: Shot[][]): Promise<Prepared> {
  const tried: (Tried & { refused: string[] })[] = [];
  for (const ladder of candidates) tried.push(await largestAccepted(ctx, ladder));
  const pool = tried.some((t) => accepted(t.answer)) ? tried.filter((t) => accepted(t.answer)) : tried;
  const pick = pool.reduce((a, b) => (b.answer.ms > a.answer.ms ? b : a));
  const note = tried.map((t) => `${t.shot.label}: ${brief(t.answer)}${t.refused.length ? ` [${t.refused.join("; ")}]` : ""}`).join(" | ");
  return { first: pick, note: `chose ${pick.shot.label} (${note})` };
}

// Kind 1: the policy set. Nested `.all` over literal lists: evaluation work is the product of
// the lists' lengths. The product grows ×4 a step, each step in a fresh sub-organization (so no
// earlier policy is evaluated on the way), until create_policies refuses (the static bound) or
// one activity takes CAP_MS; then the number of such policies grows the same way.
const MAX_EXPRESSION = 8192;
const MAX_POLICIES = 100;

const listLength = (product: number, levels: number) => Math.max(2, Math.round(product ** (1 / levels)));

function nestedAll(product: number, levels: number): string | undefined {
  const n = listLength(product, levels);
  const list = `[${Array(n).fill("1").join(",")}]`;
  let expr = "true";
  for (let i = levels - 1; i >= 0; i--) expr = `${list}.all(x${i}, ${expr})`;
  return expr.length <= MAX_EXPRESSION ? expr : undefined;
}

type PolicyTry = { refused: string } | (Tried & { refused?: undefined });

async function tryPolicySet(ctx: Context, condition: string, count: number): Promise<PolicyTry> {
  const { tenant } = await subOrganization(ctx.server.url, ctx.parent, "policies");
  const stamper = new FastStamper(tenant.key.publicKey, tenant.key.privateKey);
  const policies = Array.from({ length: count }, (_, i) => ({
    policyName: `heavy ${i}`,
    effect: "EFFECT_ALLOW",
    condition,
    consensus: "",
    notes: "",
  }));
  const create = await once(ctx, {
    label: "create_policies",
    path: "/public/v1/submit/create_policies",
    body: () => activityBody("ACTIVITY_TYPE_CREATE_POLICIES", tenant.organizationId, { policies }),
    stamper,
  });
  if (create.status !== 200) return { refused: brief(create) };
  return timed(ctx, {
    label: "create_user_tag",
    path: "/public/v1/submit/create_user_tag",
    body: () => userTag(tenant.organizationId),
    stamper,
  });
}

const policyKind: Kind = {
  id: "1",
  name: "policy set at its evaluation bound",
  async prepare(ctx) {
    const steps: string[] = [];
    let best: { product: number; levels: number; condition: string; t: Tried } | undefined;
    let capped = false;
    const tryProduct = async (product: number): Promise<typeof best | string> => {
      let refusal = `longer than ${MAX_EXPRESSION} characters`;
      for (const levels of [4, 3, 2]) {
        const condition = nestedAll(product, levels);
        if (!condition) continue;
        const t = await tryPolicySet(ctx, condition, 1);
        if (t.refused === undefined) return { product, levels, condition, t };
        refusal = t.refused;
      }
      steps.push(`product ${product.toExponential(1)} refused (${refusal})`);
      return refusal;
    };
    const accept = (got: NonNullable<typeof best>) => {
      best = got;
      capped = got.t.answer.ms >= CAP_MS || got.t.answer.status === 0;
      steps.push(`product ${got.product.toExponential(1)} (${got.levels} levels): ${brief(got.t.answer)}`);
      if (VERBOSE) log(`     (${steps.at(-1)})`);
    };
    let refusedAt: number | undefined;
    for (let product = 1000; product <= 1e15 && !capped; product *= 4) {
      const got = await tryProduct(product);
      if (typeof got === "string") {
        refusedAt = product;
        break;
      }
      accept(got!);
    }
    // Refused: close in on the bound between the last accepted product and the refused one.
    for (let i = 0; i < 3 && best && refusedAt && !capped; i++) {
      const mid = Math.sqrt(best.product * refusedAt);
      const got = await tryProduct(mid);
      if (typeof got === "string") refusedAt = mid;
      else accept(got!);
    }
    if (!best) throw new Error(`no policy accepted: ${steps.join("; ")}`);
    let count = 1;
    for (let c = 2; !capped && count < MAX_POLICIES; c = Math.min(MAX_POLICIES, c * 2)) {
      const t = await tryPolicySet(ctx, best.condition, c);
      if (t.refused !== undefined) {
        steps.push(`${c} policies refused (${t.refused})`);
        break;
      }
      best = { ...best, t };
      count = c;
      capped = t.answer.ms >= CAP_MS || t.answer.status === 0;
      steps.push(`${c} policies: ${brief(t.answer)}`);
      if (VERBOSE) log(`     (${steps.at(-1)})`);
    }
    return {
      first: {
        ...best.t,
        shot: {
          ...best.t.shot,
          label: `create_user_tag under ${count} × ${best.levels} nested .all over lists of ${listLength(best.product, best.levels)} (${best.condition.length} chars)`,
        },
      },
      note: `${capped ? `growth stopped at ${CAP_MS} ms (--cap-ms)` : "largest set accepted"}; ${steps.join("; ")}`,
    };
  },
};

// Kind 2: EIP-712 documents at the payload limit (65,536 characters), signed alone or as many
// as one body holds.
const MAX_PAYLOAD = 65_536;

function typedData(fieldType: string, extraTypes: Record<string, unknown[]>, item: string, max: number): string {
  const doc = {
    types: { EIP712Domain: [{ name: "name", type: "string" }], ...extraTypes, M: [{ name: "v", type: fieldType }] },
    primaryType: "M",
    domain: { name: "worst" },
    message: { v: "@" },
  };
  const [before, after] = JSON.stringify(doc).split('"@"') as [string, string];
  return before + repeated("[", item, "]", MAX_PAYLOAD - before.length - after.length, max) + after;
}

/** Shapes of one array filling a document; each tried with as many elements as fit, else at most these. */
const EIP712_SHAPES: [string, string, Record<string, unknown[]>, string][] = [
  ["uint256[] of zeros", "uint256[]", {}, "0"],
  ["empty structs", "E[]", { E: [] }, "{}"],
  ["empty strings", "string[]", {}, '""'],
  ["empty uint8[] lists", "uint8[][]", {}, "[]"],
];
const ELEMENT_CAPS = [Infinity, 4096, 4000, 2048, 1024, 256];

const eip712Kind: Kind = {
  id: "2",
  name: "largest EIP-712 documents",
  async prepare(ctx) {
    const a = ctx.attacker;
    const params = { signWith: a.eth, encoding: "PAYLOAD_ENCODING_EIP712", hashFunction: "HASH_FUNCTION_NO_OP" };
    const docs = new Map<Shot, [string, string]>();
    const single = EIP712_SHAPES.map(([name, type, extra, item]): Shot[] =>
      ELEMENT_CAPS.map((cap) => {
        const doc = typedData(type, extra, item, cap);
        const shot: Shot = {
          label: `sign_raw_payload, ${name}${cap === Infinity ? "" : ` (at most ${cap})`} (${doc.length} chars)`,
          path: "/public/v1/submit/sign_raw_payload",
          stamper: a.stamper,
          body: () => activityBody("ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", a.organizationId, { ...params, payload: doc }),
        };
        docs.set(shot, [name, doc]);
        return shot;
      }),
    );
    const one = await slowest(ctx, single);
    // Then as many copies of the slowest document as one request takes (one body, at most 100 payloads).
    const [name, doc] = docs.get(one.first.shot)!;
    const fit = Math.min(100, Math.floor((BODY_LIMIT - 1024) / JSON.stringify(doc).length));
    const many = await slowest(ctx, [
      [fit, 16, 8, 4, 2]
        .filter((n) => n <= fit)
        .map((n): Shot => ({
          label: `sign_raw_payloads, ${n} × ${name}`,
          path: "/public/v1/submit/sign_raw_payloads",
          stamper: a.stamper,
          body: () => activityBody("ACTIVITY_TYPE_SIGN_RAW_PAYLOADS", a.organizationId, { ...params, payloads: Array(n).fill(doc) }),
        })),
    ]);
    const pick = accepted(many.first.answer) && many.first.answer.ms > one.first.answer.ms ? many : one;
    return { first: pick.first, note: `chose ${pick.first.shot.label} (${one.note}; ${many.note})` };
  },
};

// Kind 3: a PSBT with as many P2WPKH inputs of the tenant's key as the server accepts (256 documented).
function psbt(a: Attacker, inputs: number): string {
  const script = btc.p2wpkh(a.btc.publicKey).script;
  const tx = new btc.Transaction({ allowUnknownOutputs: true });
  for (let i = 0; i < inputs; i++) tx.addInput({ txid: randomBytes(32), index: i % 4, witnessUtxo: { script, amount: 10_000n } });
  tx.addOutputAddress(a.btc.address, BigInt(inputs) * 10_000n - 5_000n);
  return Buffer.from(tx.toPSBT()).toString("hex");
}

const psbtKind: Kind = {
  id: "3",
  name: "256-input P2WPKH PSBT",
  async prepare(ctx) {
    const a = ctx.attacker;
    const ladder = [256, 128, 64, 32].map((n): Shot => {
      const hex = psbt(a, n);
      return {
        label: `sign_transaction, PSBT of ${n} P2WPKH inputs (${hex.length / 2} bytes)`,
        path: "/public/v1/submit/sign_transaction",
        stamper: a.stamper,
        body: () =>
          activityBody("ACTIVITY_TYPE_SIGN_TRANSACTION_V2", a.organizationId, {
            signWith: a.btc.address,
            unsignedTransaction: hex,
            type: "TRANSACTION_TYPE_BITCOIN",
          }),
      };
    });
    return slowest(ctx, [ladder]);
  },
};

// Kind 4: a legacy Solana message of `size` bytes, signed by the tenant's key, calling an unknown
// program: either as many empty instructions as fit, or one instruction naming accounts as
// many times as fit (the facts a policy reads grow with either).
/** compact-u16, for the lengths below 2^16 a message may hold. */
const shortvec = (n: number): number[] =>
  n < 0x80 ? [n] : n < 0x4000 ? [0x80 | (n & 0x7f), n >> 7] : [0x80 | (n & 0x7f), 0x80 | ((n >> 7) & 0x7f), n >> 14];

function solanaTx(signer: string, size: number, shape: "instructions" | "accounts", cap: number): string {
  const head = [
    ...shortvec(1),
    ...new Uint8Array(64),
    1,
    0,
    1,
    ...shortvec(2),
    ...base58.decode(signer),
    ...randomBytes(32),
    ...randomBytes(32),
  ];
  const room = size - head.length - 3;
  let body: number[];
  if (shape === "instructions") {
    const n = Math.min(cap, 0xffff, Math.floor(room / 3));
    body = [...shortvec(n), ...Array.from({ length: n }, () => [1, 0, 0]).flat()];
  } else {
    const n = Math.min(cap, 0xffff, room - 8);
    body = [...shortvec(1), 1, ...shortvec(n), ...Array.from({ length: n }, (_, i) => i & 1), 0];
  }
  return Buffer.from([...head, ...body]).toString("hex");
}

/**
 * The largest Solana transactions of `a` the server takes, both shapes, largest first: by bytes,
 * then by count where the server caps instructions or account references.
 */
const SOLANA_LADDER: [number, number][] = [
  [65_536, Infinity],
  [16_384, Infinity],
  [4_096, Infinity],
  [65_536, 2_048],
  [65_536, 512],
  [65_536, 256],
  [1_232, Infinity],
];
const solanaLadders = (a: Attacker): Shot[][] =>
  (["instructions", "accounts"] as const).map((shape) =>
    SOLANA_LADDER.map(([size, cap]): Shot => {
      const hex = solanaTx(a.sol, size, shape, cap);
      return {
        label: `sign_transaction, Solana, ${hex.length / 2} bytes of ${shape === "instructions" ? "empty instructions" : "account references"}${cap === Infinity ? "" : ` (at most ${cap})`}`,
        path: "/public/v1/submit/sign_transaction",
        stamper: a.stamper,
        body: () =>
          activityBody("ACTIVITY_TYPE_SIGN_TRANSACTION_V2", a.organizationId, {
            signWith: a.sol,
            unsignedTransaction: hex,
            type: "TRANSACTION_TYPE_SOLANA",
          }),
      };
    }),
  );

const solanaKind: Kind = {
  id: "4",
  name: "largest Solana transaction",
  prepare: (ctx) => slowest(ctx, solanaLadders(ctx.attacker)),
};

// Kind 1b: policies whose lambdas run over a signing fact sized by the request (Solana
// instructions and their accounts), then the largest Solana transaction. The heaviest condition
// create_policies accepts, in as many copies as it accepts, each try in a fresh sub-organization.
const FACT_CONDITIONS = [
  "solana.tx.instructions.all(i, i.accounts.all(a, a.account_key != '') && i.instruction_data_hex == '')",
  "solana.tx.instructions.all(i, i.accounts.all(a, a.account_key != ''))",
  "solana.tx.instructions.all(i, i.instruction_data_hex == '')",
  "solana.tx.instructions.count() >= 0",
];

const factPolicyKind: Kind = {
  id: "1b",
  name: "policy set over the largest Solana transaction's facts",
  async prepare(ctx) {
    const steps: string[] = [];
    for (const condition of FACT_CONDITIONS) {
      for (const count of [MAX_POLICIES, 10, 1]) {
        const a = await attacker(ctx.server.url, ctx.parent);
        const policies = Array.from({ length: count }, (_, i) => ({
          policyName: `facts ${i}`,
          effect: "EFFECT_ALLOW",
          condition,
          consensus: "",
          notes: "",
        }));
        const create = await once(ctx, {
          label: "create_policies",
          path: "/public/v1/submit/create_policies",
          stamper: a.stamper,
          body: () => activityBody("ACTIVITY_TYPE_CREATE_POLICIES", a.organizationId, { policies }),
        });
        if (create.status !== 200) {
          steps.push(`${count} × ${condition} refused (${brief(create)})`);
          if (VERBOSE) log(`     (${steps.at(-1)})`);
          continue;
        }
        const chosen = await slowest(ctx, solanaLadders(a));
        return {
          first: { ...chosen.first, shot: { ...chosen.first.shot, label: `${chosen.first.shot.label} under ${count} × ${condition}` } },
          note: `${steps.join("; ")}${steps.length ? "; " : ""}${chosen.note}`,
        };
      }
    }
    throw new Error(`no policy over Solana facts accepted: ${steps.join("; ")}`);
  },
};

// Kinds 5 and 6: an activity (create_user_tag) whose body carries one more member, `pad`, which
// the schema drops: a body at the size limit, or nested to the depth limit.
function padShot(a: Attacker, label: string, size: number | undefined, pad: (room: number) => string): Shot {
  return { label, path: "/public/v1/submit/create_user_tag", stamper: a.stamper, body: () => padded(userTag(a.organizationId), size, pad) };
}

/** Bodies holding as many values as fit, else at most these (a limit on values per body, docs/network.md §6.2). */
const VALUE_CAPS = [Infinity, 25_000, 5_000, 1_000];

const bodyKind: Kind = {
  id: "5",
  name: "body at the size limit",
  async prepare(ctx) {
    const a = ctx.attacker;
    const at = (label: string, pad: (room: number, cap: number) => string, caps = [Infinity]) =>
      caps.map((cap) =>
        padShot(a, `${label}${cap === Infinity ? "" : ` (at most ${cap})`} (${BODY_LIMIT} bytes)`, BODY_LIMIT, (room) => pad(room, cap)),
      );
    let k = 0;
    return slowest(ctx, [
      at("one long string", (room) => `"${"a".repeat(room - 2)}"`),
      at("a string of \\u escapes", (room) => `"${"\\u00e9".repeat(Math.floor((room - 2) / 6))}"`),
      at("an array of zeros", (room, cap) => repeated("[", "0", "]", room, cap), VALUE_CAPS),
      at(
        "an object of many members",
        (room, cap) => {
          const parts: string[] = [];
          let used = 2;
          while (parts.length < cap) {
            const m = `"k${k++}":0`;
            if (used + m.length + 1 > room) break;
            parts.push(m);
            used += m.length + 1;
          }
          return `{${parts.join(",")}}`;
        },
        VALUE_CAPS,
      ),
      at("whitespace", () => "0"),
    ]);
  },
};

const depthKind: Kind = {
  id: "6",
  name: "JSON at the depth limit",
  async prepare(ctx) {
    const a = ctx.attacker;
    // The body is level 1 and `pad` level 2: a chain of d − 2 arrays reaches level d.
    const chain = (d: number) => "[".repeat(d - 2) + "]".repeat(d - 2);
    const one = [64, 63, 62, 32].map((d) => padShot(a, `one chain nested ${d} deep`, undefined, () => chain(d)));
    const wide = [64, 63, 62].flatMap((d) =>
      [Infinity, 400, 80, 16].map((cap) =>
        padShot(
          a,
          `${cap === Infinity ? "" : `at most ${cap} `}chains nested ${d} deep filling the body (${BODY_LIMIT} bytes)`,
          BODY_LIMIT,
          (room) => repeated("[", chain(d).slice(1, -1), "]", room, cap),
        ),
      ),
    );
    return slowest(ctx, [one, wide]);
  },
};

// Kind 8: a page of the tenant's own large activities. Each vote keeps the body it signed, so
// a tenant that submits padded bodies and lists them asks for a page of megabytes; a page
// ends at PAGE_BYTES of stored activity (docs/api.md §3.1).
const LARGE_ACTIVITIES = 20;
const largePageKind: Kind = {
  id: "8",
  name: "list_activities over 1 MiB activities",
  async prepare(ctx) {
    const a = ctx.attacker;
    for (let i = 0; i < LARGE_ACTIVITIES; i++) {
      const shot = padShot(a, "a padded activity", BODY_LIMIT, (room) => `"${"a".repeat(room - 2)}"`);
      const answer = await once(ctx, shot);
      if (answer.status !== 200) throw new Error(`kind 8: a padded activity was refused: ${brief(answer)}`);
    }
    const list = (limit: string) => ({
      label: `list_activities, limit ${limit}, over ${LARGE_ACTIVITIES} activities of ${BODY_LIMIT} bytes`,
      path: "/public/v1/query/list_activities",
      stamper: a.stamper,
      body: () => JSON.stringify({ organizationId: a.organizationId, paginationOptions: { limit } }),
    });
    return slowest(ctx, [[list("100")], [list("2")]]);
  },
};

// Kind 7: page-limit queries of the large organization (on the large store).
const queryShot = (label: string, op: string, seeded: Tenant, body: Record<string, unknown>): Shot => ({
  label,
  path: `/public/v1/query/${op}`,
  stamper: new FastStamper(seeded.key.publicKey, seeded.key.privateKey),
  body: () => JSON.stringify({ organizationId: seeded.organizationId, ...body }),
});

function listKind(id: string, op: "list_suborgs" | "list_activities", deep: (ctx: Context) => string | undefined): Kind {
  return {
    id,
    name: `${op}, pages of 100, ${ROWS.toLocaleString("en-US")} rows`,
    async prepare(ctx) {
      const page = { limit: "100" };
      const after = deep(ctx);
      return slowest(ctx, [
        [queryShot(`${op}, first page of 100`, op, ctx.parent, { paginationOptions: page })],
        ...(after
          ? [[queryShot(`${op}, page of 100 after a cursor 90 % deep`, op, ctx.parent, { paginationOptions: { ...page, after } })]]
          : []),
      ]);
    },
  };
}

let seedSamples: { deepSuborgId?: string; deepActivityId?: string } = {};
const SMALL_KINDS: Kind[] = [policyKind, factPolicyKind, eip712Kind, psbtKind, solanaKind, bodyKind, depthKind, largePageKind];
const LARGE_KINDS: Kind[] = [
  listKind("7a", "list_suborgs", () => seedSamples.deepSuborgId),
  listKind("7b", "list_activities", () => seedSamples.deepActivityId),
];
const wanted = (k: Kind) => !KINDS || KINDS.includes(k.id) || KINDS.includes(k.id.slice(0, 1));

// ---------------------------------------------------------------- measuring

interface Row {
  kind: Kind;
  engine: Engine;
  worstMs: number;
  p99Ms: number;
  idleP99Ms: number;
  samples: number;
  requests: string;
  chosen: string;
  errors: string;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]! : NaN;
}

async function measure(ctx: Context, kind: Kind, engine: Engine): Promise<Row> {
  await ctx.probe.start();
  await sleep(IDLE_S * 1000);
  const idle = await ctx.probe.stop();
  const { first, note } = await kind.prepare(ctx);
  log(`  ${kind.id}. ${kind.name}: ${note}`);
  // Then again for the rest of --duration, unless the first one already took that long (or no answer came).
  const answers: Answer[] = [first.answer];
  const all = [...first.samples.all];
  const errors = [...first.samples.errors];
  let errorCount = first.samples.errorCount;
  if (first.answer.status !== 0 && first.answer.ms < DURATION_S * 1000) {
    await ctx.probe.start();
    const end = performance.now() + DURATION_S * 1000 - first.answer.ms;
    while (performance.now() < end && answers.at(-1)!.status !== 0) answers.push(await once(ctx, first.shot));
    await sleep(100);
    const more = await ctx.probe.stop();
    all.push(...more.all);
    errors.push(...more.errors);
    errorCount += more.errorCount;
  }
  const statuses = new Map<number, number>();
  for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
  const ms = answers.map((a) => a.ms);
  const row: Row = {
    kind,
    engine,
    worstMs: Math.max(...all),
    p99Ms: pct(all, 99),
    idleP99Ms: pct(idle.all, 99),
    samples: all.length,
    requests: `${answers.length} × (${[...statuses].map(([s, n]) => `${n} × ${s || "no answer"}`).join(", ")}), median ${pct(ms, 50).toFixed(0)} ms, max ${Math.max(...ms).toFixed(0)} ms`,
    chosen: first.shot.label,
    errors: errorCount ? `${errorCount} probe errors, first: ${errors[0]}` : "",
  };
  log(
    `     → the request: ${row.requests}; the other tenant (${row.samples} answers): worst ${row.worstMs.toFixed(1)} ms, p99 ${row.p99Ms.toFixed(1)} ms, idle p99 ${row.idleP99Ms.toFixed(1)} ms${row.errors ? `; ${row.errors}` : ""}`,
  );
  return row;
}

/** Serves `inst`, creates the other tenant, and measures each kind; restarts the server if a request never comes back. */
async function session(inst: SigilInstance, parent: Tenant, kinds: Kind[], probe: Probe, withAttacker: boolean): Promise<Row[]> {
  // --profile: every server of the session writes its main thread's CPU profile when it stops.
  const nodeArgs = PROFILE_DIR
    ? ["--cpu-prof", `--cpu-prof-dir=${path.join(PROFILE_DIR, `${inst.engine}-${kinds.map((k) => k.id).join("-")}`)}`]
    : [];
  const ctx: Context = {
    server: await startSigil(inst, nodeArgs, STARTUP_TIMEOUT_MS),
    parent,
    attacker: undefined as unknown as Attacker,
    probe,
    notes: [],
    async restart() {
      await ctx.server.stop("SIGKILL", 0);
      ctx.server = await startSigil(inst, nodeArgs, STARTUP_TIMEOUT_MS);
      await probe.configure(ctx.server.url, victim);
    },
  };
  const victim = (await subOrganization(ctx.server.url, parent, "other-tenant")).tenant;
  await probe.configure(ctx.server.url, victim);
  if (withAttacker) ctx.attacker = await attacker(ctx.server.url, parent);
  const rows: Row[] = [];
  try {
    for (const kind of kinds) rows.push(await measure(ctx, kind, inst.engine));
  } finally {
    for (const n of ctx.notes) log(`  note: ${n}`);
    // SIGINT lets node write the profile on its way out.
    await ctx.server.stop(PROFILE_DIR ? "SIGINT" : "SIGTERM", 30_000);
  }
  return rows;
}

async function runEngine(engine: Engine, probe: Probe): Promise<Row[]> {
  log(`\n== ${engine} ==`);
  const rows: Row[] = [];
  const small = SMALL_KINDS.filter(wanted);
  const large = LARGE_KINDS.filter(wanted);
  const inst = await newSigilInstance(engine, PG_URL, TREE);
  // Servers started side by side (other benchmarks, tests) must not fight over the TVC ingress port.
  inst.env.SIGIL_TVC_INGRESS_PORT = "0";
  try {
    if (small.length) {
      const init = await sigilInit(inst, "Bench Worst Org");
      rows.push(
        ...(await session(
          inst,
          { organizationId: init.organizationId, key: { publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey } },
          small,
          probe,
          true,
        )),
      );
    }
    if (large.length) {
      const { SIGIL_DATA_DIR: _d, SIGIL_MASTER_KEY: _k, DATABASE_URL: _u, ...baseEnv } = inst.env;
      const store = await seededStore(engine, ROWS, baseEnv, PG_URL, log, TREE);
      seedSamples = store.seed.samples;
      log(
        `  large store: ${store.seed.counts.suborgs.toLocaleString("en-US")} sub-organizations, ${store.seed.counts.activities.toLocaleString("en-US")} activities (${store.builtS ? `built in ${store.builtS.toFixed(0)} s` : "cached"})`,
      );
      const seededInst: SigilInstance = { ...inst, env: store.env, dataDir: store.env.SIGIL_DATA_DIR!, cleanup: async () => {} };
      rows.push(
        ...(await session(
          seededInst,
          { organizationId: store.seed.organizationId, key: { publicKey: store.seed.apiPublicKey, privateKey: store.seed.apiPrivateKey } },
          large,
          probe,
          false,
        )),
      );
    }
  } finally {
    await inst.cleanup();
  }
  return rows;
}

function table(rows: Row[]): string {
  const lines = [
    `| kind | engine | worst ms | p99 ms | idle p99 ms | ratio (p99 / idle p99) | verdict (worst ≤ ${GOAL_MS} ms) |`,
    "|---|---|---|---|---|---|---|",
  ];
  for (const r of rows) {
    const ratio = r.p99Ms / r.idleP99Ms;
    lines.push(
      `| ${r.kind.id}. ${r.kind.name} | ${r.engine === "sqlite" ? "SQLite" : "PostgreSQL"} | ${r.worstMs.toFixed(1)} | ${r.p99Ms.toFixed(1)} | ${r.idleP99Ms.toFixed(1)} | ${ratio.toFixed(1)}× | ${r.worstMs <= GOAL_MS ? "met" : "missed"} |`,
    );
  }
  return lines.join("\n");
}

async function main(): Promise<void> {
  let commit = "?";
  try {
    commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: TREE, encoding: "utf8" }).trim();
  } catch {
    /* not a git tree */
  }
  log(
    `worst-case benchmark of ${TREE} at ${commit}: engines ${ENGINES.join(", ")}; each kind ${DURATION_S} s after ${IDLE_S} s idle, the other tenant every ${INTERVAL_MS} ms; ` +
      `${os.cpus().length} cores, load average ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(" ")}`,
  );
  const probe = new Probe();
  const rows: Row[] = [];
  try {
    for (const e of ENGINES) rows.push(...(await runEngine(e, probe)));
  } finally {
    probe.close();
  }
  log(`\n== the other tenant's wait while one tenant sends its heaviest legal request (goal: worst ≤ ${GOAL_MS} ms) ==\n`);
  log(table(rows));
  log("\nrequests chosen:");
  for (const r of rows) log(`  ${r.kind.id} ${r.engine}: ${r.chosen}; ${r.requests}`);
  log(
    `load average at the end: ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
  );
  clearTimeout(watchdog);
}

main().then(
  () => bail(0),
  (e: unknown) => bail(1, `worst-case benchmark failed: ${(e as Error).stack ?? String(e)}`),
);
