// End-to-end: two API nodes on one PostgreSQL database — the documented scale-out deployment
// (docs/operations.md §4): migrations once (`sigil init`), then two `sigil serve`
// processes with the same master key and configuration, each with its own data dir, both
// started at once. Clients are the official SDKs, each pointed at one node. What must hold:
//   - votes on one activity arriving at both nodes at the same moment execute it exactly
//     once (one result, one set of rows, COMPLETED once, one ACTIVITY_UPDATES event for it);
//   - a governance change (policies, root quorum) answered by one node governs the very next
//     request on the other: the per-node compiled-policy cache never answers stale;
//   - the webhook workers of both nodes share one outbox without delivering any attempt twice:
//     a receiver counts deliveries per (endpoint, event id); every event arrives exactly once
//     per attempt (a first attempt answered 500 is retried: a new attempt, counted as such),
//     matching the attempts the database recorded; and both nodes did deliver (the receiver
//     tells the senders apart by the process owning each connection's socket, from /proc).
// PostgreSQL only: SQLite is one process by design.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { TurnkeyRequestError } from "@turnkey/http";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { generateP256KeyPair, type P256KeyPair } from "../../src/crypto/keygen.ts";
import { partyFor, postSigned, type AnyRec, type Party } from "../helpers/policy-harness.ts";
import { until } from "../helpers/webhook-sink.ts";

const COMPLETED = "ACTIVITY_STATUS_COMPLETED";
const CONSENSUS = "ACTIVITY_STATUS_CONSENSUS_NEEDED";
const PERMISSION_DENIED = 7;
const FAILED_PRECONDITION = 9;
const NOT_FOUND = 5;

const postgres = engines().find((e) => e.name === "postgres")!;
const uniq = (label: string) => `${label}-${randomBytes(4).toString("hex")}`;

// Strictly increasing timestamps: two requests never share a body (an identical body is, by
// design, the same activity or a retried vote).
let lastTs = 0;
function envelope<const T extends string, P>(type: T, organizationId: string, parameters: P) {
  lastTs = Math.max(Date.now(), lastTs + 1);
  return { type, timestampMs: String(lastTs), organizationId, parameters };
}

/** A call's activity, or the SDK error's gRPC code. */
type Outcome = { ok: true; activity: AnyRec } | { ok: false; code: number; message: string };
async function outcome(p: Promise<{ activity: unknown }>): Promise<Outcome> {
  try {
    return { ok: true, activity: (await p).activity as AnyRec };
  } catch (e) {
    if (e instanceof TurnkeyRequestError) return { ok: false, code: e.code, message: e.message };
    throw e;
  }
}

// ------------------------------------------------------------ who sent a delivery (Linux /proc)

/** The inode of the TCP socket whose local port is `localPort` and remote port `remotePort`. */
function socketInode(localPort: number, remotePort: number): string | undefined {
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      if (parseInt(f[1]!.split(":")[1]!, 16) === localPort && parseInt(f[2]!.split(":")[1]!, 16) === remotePort) return f[9];
    }
  }
  return undefined;
}

/** Which of `pids` holds the socket with that inode open. */
function socketOwner(inode: string, pids: number[]): number | undefined {
  const target = `socket:[${inode}]`;
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === target) return pid;
      } catch {
        /* closed meanwhile */
      }
    }
  }
  return undefined;
}

interface Delivery {
  path: string;
  eventId: string;
  timestamp: string;
  /** The node process whose socket sent it (undefined: not found in /proc). */
  sender: number | undefined;
  answered: number;
}

/**
 * A webhook receiver that records every request with the process that sent it, and answers
 * 500 to the first delivery of the events `failFirst` picks (200 otherwise).
 */
class CountingReceiver {
  readonly deliveries: Delivery[] = [];
  readonly #seen = new Map<string, number>();
  #server: http.Server | undefined;
  port = 0;

  constructor(
    private readonly senders: () => number[],
    private readonly failFirst: (eventId: string) => boolean,
  ) {}

  async start(): Promise<void> {
    const owners = new WeakMap<net.Socket, number | undefined>();
    const server = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        const eventId = String(req.headers["x-service-event-id"] ?? "");
        const key = `${req.url} ${eventId}`;
        const n = (this.#seen.get(key) ?? 0) + 1;
        this.#seen.set(key, n);
        const answered = n === 1 && this.failFirst(eventId) ? 500 : 200;
        this.deliveries.push({
          path: req.url ?? "",
          eventId,
          timestamp: String(req.headers["x-service-timestamp"] ?? ""),
          sender: owners.get(req.socket),
          answered,
        });
        res.writeHead(answered, { "content-type": "text/plain" }).end(String(answered));
      });
    });
    // Once per connection, while the sender still holds it open.
    server.on("connection", (socket: net.Socket) => {
      const inode = socketInode(socket.remotePort ?? -1, this.port);
      owners.set(socket, inode === undefined ? undefined : socketOwner(inode, this.senders()));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.#server = server;
    this.port = (server.address() as net.AddressInfo).port;
  }

  url(p: string): string {
    return `http://127.0.0.1:${this.port}${p}`;
  }

  async stop(): Promise<void> {
    const s = this.#server;
    if (!s) return;
    this.#server = undefined;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}

// ------------------------------------------------------------ the two nodes

describe("two API nodes on one PostgreSQL", { skip: postgres.skip, timeout: 240_000 }, () => {
  let inst: Instance | undefined;
  let dirB: string | undefined;
  let nodes: RunningServer[] = [];
  let init: InitResult;
  let sql: pg.Pool | undefined;
  /** The root user of the bootstrapped organization, at node A and at node B. */
  let root: Party[];
  const receiver = new CountingReceiver(
    () => nodes.map((n) => n.proc.pid!),
    // About a third of the events: the last hex digit of the UUIDv7 id is random.
    (eventId) => /[0-4]$/.test(eventId),
  );

  before(async () => {
    await receiver.start();
    inst = await newInstance(
      "postgres",
      {
        SIGIL_WEBHOOKS_ALLOW_LOOPBACK: "true",
        SIGIL_WEBHOOKS_RETRY_SCHEDULE: "0,50ms,100ms,200ms,400ms,800ms,1s,2s",
        SIGIL_WEBHOOKS_TIMEOUT_MS: "5000",
        // Per-node buckets are not what is tested here; the load below is one client.
        SIGIL_RATE_LIMIT_CREDENTIAL: "0",
        SIGIL_RATE_LIMIT_ORGANIZATION: "0",
        SIGIL_RATE_LIMIT_ADDRESS: "0",
        // Two processes on one host: each TVC ingress on a port of its own.
        SIGIL_TVC_INGRESS_PORT: "0",
      },
      { emptyDatabase: true },
    );
    // Migrations once, then both nodes at the same moment, each with its own data dir.
    init = await sigilInit(inst, ["--name", "Two Nodes Org"]);
    dirB = mkdtempSync(path.join(tmpdir(), "sigil-test-node-b-"));
    const instB: Instance = { ...inst, env: { ...inst.env, SIGIL_DATA_DIR: dirB }, dataDir: dirB };
    nodes = await Promise.all([startServer(inst), startServer(instB)]);
    sql = new pg.Pool({ connectionString: inst.env.DATABASE_URL, max: 2 });
    const key = { publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey };
    root = nodes.map((n) => partyFor(n.url, key, init.userId, init.organizationId));
  });

  after(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await sql?.end();
    await receiver.stop();
    await inst?.cleanup();
    if (dirB) rmSync(dirB, { recursive: true, force: true });
  });

  const rows = async (text: string, ...values: unknown[]) => (await sql!.query(text, values)).rows as AnyRec[];
  const count = async (text: string, ...values: unknown[]) => Number((await rows(text, ...values))[0]!.n);

  /** A sub-organization with `n` root users (one key each) and a threshold; its root users, at each node. */
  async function newOrg(
    label: string,
    n: number,
    threshold: number,
  ): Promise<{ orgId: string; users: { key: P256KeyPair; userId: string }[]; at: (node: number, user: number) => Party }> {
    const keys = Array.from({ length: n }, () => generateP256KeyPair());
    const res = await root[0]!.sdk.createSubOrganization({
      subOrganizationName: uniq(label),
      rootUsers: keys.map((k, i) => ({
        userName: `${label}-root-${i}`,
        apiKeys: [{ apiKeyName: `${label}-${i}`, publicKey: k.publicKey, curveType: "API_KEY_CURVE_P256" as const }],
        authenticators: [],
        oauthProviders: [],
      })),
      rootQuorumThreshold: threshold,
    });
    assert.equal(res.activity.status, COMPLETED);
    const ids = res.rootUserIds ?? [];
    assert.equal(ids.length, n);
    const users = keys.map((key, i) => ({ key, userId: ids[i]! }));
    const parties = nodes.map((node) => users.map((u) => partyFor(node.url, u.key, u.userId, res.subOrganizationId)));
    return { orgId: res.subOrganizationId, users, at: (node, user) => parties[node]![user]! };
  }

  it("both nodes serve the same organization", async () => {
    for (const p of root) {
      const who = await p.sdk.getWhoami({ organizationId: init.organizationId });
      assert.equal(who.userId, init.userId);
    }
    // One set of service keys and one webhook signing key set, whichever node answers.
    const [a, b] = await Promise.all(nodes.map(async (n) => (await fetch(`${n.url}/public/v1/discovery/webhooks/jwks`)).json()));
    assert.deepEqual(a, b);
  });

  it("concurrent approvals through both nodes execute the activity exactly once (2-of-4 and 3-of-3, several rounds)", async () => {
    const shapes = [
      { label: "two-of-four", n: 4, threshold: 2 },
      { label: "three-of-three", n: 3, threshold: 3 },
    ];
    for (const shape of shapes) {
      const org = await newOrg(shape.label, shape.n, shape.threshold);
      for (let round = 0; round < 6; round++) {
        const userName = uniq(`${shape.label}-${round}`);
        // The submitter's own vote is the first approval.
        const submitted = await org.at(round % 2, 0).http.createUsers(
          envelope("ACTIVITY_TYPE_CREATE_USERS_V4", org.orgId, {
            users: [{ userName, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
          }),
        );
        const pending = submitted.activity as AnyRec;
        assert.equal(pending.status, CONSENSUS, JSON.stringify(pending));
        // Every other root user approves at once, alternating between the nodes.
        const voters = Array.from({ length: shape.n - 1 }, (_, i) => i + 1);
        const outcomes = await Promise.all(
          voters.map((v, i) =>
            outcome(
              org
                .at((round + i) % 2, v)
                .http.approveActivity(
                  envelope("ACTIVITY_TYPE_APPROVE_ACTIVITY", org.orgId, { fingerprint: pending.fingerprint as string }),
                ),
            ),
          ),
        );
        const context = `${shape.label}, round ${round}: ${JSON.stringify(outcomes.map((o) => (o.ok ? o.activity.status : `${o.code} ${o.message}`)))}`;
        const accepted = outcomes.filter((o) => o.ok);
        const refused = outcomes.filter((o) => !o.ok);
        // Votes needed beyond the submitter's; every later one finds the activity settled.
        const needed = shape.threshold - 1;
        assert.equal(accepted.length, needed, context);
        for (const o of refused) {
          assert.equal(!o.ok && o.code, FAILED_PRECONDITION, context);
          assert.match(!o.ok ? o.message : "", /votes are accepted only while it awaits consensus/, context);
        }
        // Ground truth: one user row, the activity COMPLETED with that user as its result,
        // exactly the votes that counted, and one COMPLETED in its history.
        const created = await rows("SELECT id FROM users WHERE organization_id = $1 AND name = $2", org.orgId, userName);
        assert.equal(created.length, 1, `users named ${userName}: ${context}`);
        const { activity } = await org
          .at(1 - (round % 2), 0)
          .http.getActivity({ organizationId: org.orgId, activityId: pending.id as string });
        const final = activity as AnyRec;
        assert.equal(final.status, COMPLETED, context);
        assert.deepEqual(final.result?.createUsersResult?.userIds, [created[0]!.id], context);
        assert.equal(final.votes.length, shape.threshold, context);
        assert.equal(new Set((final.votes as AnyRec[]).map((v) => v.userId)).size, shape.threshold, context);
        assert.equal(await count("SELECT COUNT(*) AS n FROM activities WHERE fingerprint = $1", pending.fingerprint), 1);
      }
    }
  });

  it("an approval at one node racing a rejection at the other: one of them settles the activity, the other is refused", async (t) => {
    const org = await newOrg("approve-reject", 3, 2);
    const seen = new Set<string>();
    for (let round = 0; round < 6; round++) {
      const userName = uniq(`race-${round}`);
      const pending = (
        await org.at(0, 0).http.createUsers(
          envelope("ACTIVITY_TYPE_CREATE_USERS_V4", org.orgId, {
            users: [{ userName, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
          }),
        )
      ).activity as AnyRec;
      assert.equal(pending.status, CONSENSUS);
      const fingerprint = pending.fingerprint as string;
      const [a, b] = round % 2 === 0 ? [0, 1] : [1, 0];
      const [approved, rejected] = await Promise.all([
        outcome(org.at(a, 1).http.approveActivity(envelope("ACTIVITY_TYPE_APPROVE_ACTIVITY", org.orgId, { fingerprint }))),
        outcome(org.at(b, 2).http.rejectActivity(envelope("ACTIVITY_TYPE_REJECT_ACTIVITY", org.orgId, { fingerprint }))),
      ]);
      const context = `round ${round}: approve ${JSON.stringify(approved).slice(0, 300)}, reject ${JSON.stringify(rejected).slice(0, 300)}`;
      const final = (
        (await org.at(b, 0).http.getActivity({ organizationId: org.orgId, activityId: pending.id as string })).activity as AnyRec
      ).status as string;
      seen.add(final);
      const users = await count("SELECT COUNT(*) AS n FROM users WHERE organization_id = $1 AND name = $2", org.orgId, userName);
      if (final === COMPLETED) {
        assert.ok(approved.ok && !rejected.ok && rejected.code === FAILED_PRECONDITION, context);
        assert.equal(users, 1, context);
      } else {
        assert.equal(final, "ACTIVITY_STATUS_REJECTED", context);
        assert.ok(rejected.ok && !approved.ok && approved.code === FAILED_PRECONDITION, context);
        assert.equal(users, 0, context);
      }
    }
    t.diagnostic(`final states seen: ${[...seen].join(", ")}`);
  });

  it("one signed body sent to both nodes at once is one activity (idempotency across nodes)", async () => {
    const org = await newOrg("twins", 1, 1);
    for (let round = 0; round < 6; round++) {
      const userName = uniq(`twin-${round}`);
      const signed = await org.at(0, 0).http.stampCreateUsers(
        envelope("ACTIVITY_TYPE_CREATE_USERS_V4", org.orgId, {
          users: [{ userName, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
        }),
      );
      const path = new URL(signed.url).pathname;
      // Two copies at each node, all at once: only the fingerprint tells them apart from new work.
      const answers = await Promise.all([0, 1, 0, 1].map((n) => postSigned({ ...signed, url: `${nodes[n]!.url}${path}` })));
      const context = `round ${round}: ${JSON.stringify(answers.map((a) => [a.status, a.json.activity?.id ?? a.json.message]))}`;
      assert.ok(
        answers.every((a) => a.status === 200 && a.json.activity?.status === COMPLETED),
        context,
      );
      assert.equal(new Set(answers.map((a) => a.json.activity.id)).size, 1, context);
      assert.equal(
        await count("SELECT COUNT(*) AS n FROM users WHERE organization_id = $1 AND name = $2", org.orgId, userName),
        1,
        context,
      );
      assert.equal(
        await count(
          "SELECT COUNT(*) AS n FROM activities WHERE organization_id = $1 AND fingerprint = $2",
          org.orgId,
          answers[0]!.json.activity.fingerprint,
        ),
        1,
      );
    }
  });

  it("a governance change answered by one node governs the very next request on the other", async () => {
    const org = await newOrg("governance", 1, 1);
    // A non-root user with an API key, at each node.
    const key = generateP256KeyPair();
    const made = await org.at(0, 0).sdk.createUsers({
      users: [
        {
          userName: "ursula",
          apiKeys: [{ apiKeyName: "ursula-key", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
          authenticators: [],
          oauthProviders: [],
          userTags: [],
        },
      ],
    });
    const userId = made.userIds[0]!;
    const ursula = nodes.map((n) => partyFor(n.url, key, userId, org.orgId));

    /** Ursula creates a user tag at `node`: allowed (COMPLETED) or denied (403 / 7). */
    async function expect(node: number, allowed: boolean, step: string): Promise<void> {
      const o = await outcome(
        ursula[node]!.http.createUserTag(envelope("ACTIVITY_TYPE_CREATE_USER_TAG", org.orgId, { userTagName: uniq("tag"), userIds: [] })),
      );
      if (allowed)
        assert.ok(
          o.ok && o.activity.status === COMPLETED,
          `${step}: expected COMPLETED at node ${"AB"[node]}, got ${JSON.stringify(o).slice(0, 500)}`,
        );
      else
        assert.ok(
          !o.ok && o.code === PERMISSION_DENIED,
          `${step}: expected a denial at node ${"AB"[node]}, got ${JSON.stringify(o).slice(0, 500)}`,
        );
    }

    for (let round = 0; round < 4; round++) {
      const [x, y] = round % 2 === 0 ? [0, 1] : [1, 0];
      const R = org.at(x, 0);
      const step = (s: string) => `round ${round}, change at ${"AB"[x]}, request at ${"AB"[y]}: ${s}`;
      // Both nodes have decided with the current set (their caches hold it).
      await expect(x, false, step("no policy"));
      await expect(y, false, step("no policy"));
      const allow = await R.sdk.createPolicy({
        policyName: uniq("allow"),
        effect: "EFFECT_ALLOW",
        condition: "activity.kind == 'CREATE_USER_TAG'",
        consensus: `approvers.any(user, user.id == '${userId}')`,
        notes: "",
      });
      await expect(y, true, step("after an allow"));
      const deny = await R.sdk.createPolicy({
        policyName: uniq("deny"),
        effect: "EFFECT_DENY",
        condition: "activity.kind == 'CREATE_USER_TAG'",
        notes: "",
      });
      await expect(y, false, step("after a deny"));
      await R.sdk.deletePolicies({ policyIds: [deny.policyId] });
      await expect(y, true, step("after deleting the deny"));
      await R.sdk.updatePolicy({ policyId: allow.policyId, policyEffect: "EFFECT_DENY" });
      await expect(y, false, step("after turning the allow into a deny"));
      await R.sdk.deletePolicies({ policyIds: [allow.policyId] });
      await expect(y, false, step("after deleting it (implicit deny)"));
      // The root quorum is governance too: Ursula in it (threshold 1) may do anything...
      await R.sdk.updateRootQuorum({ threshold: 1, userIds: [org.users[0]!.userId, userId] });
      await expect(y, true, step("as a root quorum member"));
      // ...and no longer once she is out of it (changed by Ursula herself, at the other node).
      await ursula[y]!.sdk.updateRootQuorum({ threshold: 1, userIds: [org.users[0]!.userId] });
      await expect(x, false, step("out of the root quorum again"));
    }
  });

  it("a key revoked or a user renamed at one node is refused or renamed at once by both, whose remembered look-ups held it", async () => {
    const org = await newOrg("credentials", 1, 1);
    const whoami = (p: Party) => p.sdk.getWhoami({ organizationId: org.orgId });
    for (let round = 0; round < 4; round++) {
      const [x, y] = round % 2 === 0 ? [0, 1] : [1, 0];
      const step = (s: string) => `round ${round}, change at ${"AB"[x]}: ${s}`;
      const key = generateP256KeyPair();
      const name = uniq("carol");
      const made = await org.at(x, 0).sdk.createUsers({
        users: [
          {
            userName: name,
            apiKeys: [{ apiKeyName: "carol-key", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          },
        ],
      });
      const userId = made.userIds[0]!;
      const carol = nodes.map((n) => partyFor(n.url, key, userId, org.orgId));
      // Both nodes look her key up more than once: each remembers it (docs/storage.md §3.1).
      for (let i = 0; i < 3; i++) for (const p of carol) assert.equal((await whoami(p)).username, name, step("before"));
      const renamed = uniq("carol-renamed");
      await org.at(x, 0).sdk.updateUserName({ userId, userName: renamed });
      for (const n of [y, x]) assert.equal((await whoami(carol[n]!)).username, renamed, step(`renamed, asked at ${"AB"[n]}`));
      const { apiKeys } = await org.at(x, 0).sdk.getApiKeys({ userId });
      await org.at(x, 0).sdk.deleteApiKeys({ userId, apiKeyIds: apiKeys.map((k) => k.apiKeyId) });
      // No wait: the next request, at the other node first.
      for (const n of [y, x]) {
        const answer = await whoami(carol[n]!).then(
          (w) => w,
          (e: unknown) => e,
        );
        assert.ok(
          answer instanceof Error && /could not find public key/.test(answer.message),
          step(`revoked, asked at ${"AB"[n]}: ${answer instanceof Error ? answer.message : JSON.stringify(answer)}`),
        );
      }
    }
  });

  it("a key deleted or exported at one node is never signed with at the other, whose remembered signer held it", async () => {
    const org = await newOrg("keys", 1, 1);
    const R = org.at(0, 0);
    // A non-root user signs, under a policy that reads the wallet: root users are not governed by policies.
    const key = generateP256KeyPair();
    const made = await R.sdk.createUsers({
      users: [
        {
          userName: "signer",
          apiKeys: [{ apiKeyName: "signer-key", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
          authenticators: [],
          oauthProviders: [],
          userTags: [],
        },
      ],
    });
    const [A, B] = nodes.map((node) => partyFor(node.url, key, made.userIds[0]!, org.orgId));
    await R.sdk.createPolicy({
      policyName: uniq("unexported"),
      effect: "EFFECT_ALLOW",
      condition: "activity.resource == 'PRIVATE_KEY' && wallet.exported == false",
      notes: "",
    });
    const wallet = await R.sdk.createWallet({
      walletName: uniq("w"),
      accounts: [0, 1].map((i) => ({
        curve: "CURVE_SECP256K1" as const,
        pathFormat: "PATH_FORMAT_BIP32" as const,
        path: `m/44'/60'/0'/0/${i}`,
        addressFormat: "ADDRESS_FORMAT_ETHEREUM" as const,
      })),
    });
    const [kept, doomed] = wallet.addresses as [string, string];
    let n = 0;
    const sign = (p: Party, signWith: string) =>
      outcome(
        p.http.signRawPayload(
          envelope("ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", org.orgId, {
            signWith,
            payload: (n++).toString(16).padStart(64, "0"),
            encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
            hashFunction: "HASH_FUNCTION_NO_OP",
          }),
        ),
      );
    // Both nodes sign twice with each account: the second time from the signer they remembered.
    for (const p of [A!, B!, A!, B!]) for (const a of [kept, doomed]) assert.equal((await sign(p, a)).ok, true);
    const accounts = await R.sdk.getWalletAccounts({ walletId: wallet.walletId });
    const doomedId = accounts.accounts.find((a: AnyRec) => a.address === doomed)!.walletAccountId;
    await R.sdk.deleteWalletAccounts({ walletAccountIds: [doomedId], deleteWithoutExport: true });
    const refused = await sign(B!, doomed);
    assert.ok(
      !refused.ok && refused.code === NOT_FOUND,
      `node B signed with an account node A deleted: ${JSON.stringify(refused).slice(0, 300)}`,
    );
    assert.equal((await sign(B!, kept)).ok, true, "the other account of the wallet still signs at node B");
    // The policy sees an export made at the other node on the very next request.
    await R.sdk.exportWallet({ walletId: wallet.walletId, targetPublicKey: generateP256KeyPair().publicKey });
    const denied = await sign(B!, kept);
    assert.ok(
      !denied.ok && denied.code === PERMISSION_DENIED,
      `node B signed with a wallet exported at node A: ${JSON.stringify(denied).slice(0, 300)}`,
    );
    // The keys version moved with the key writes (triggers): creation, deletion, export.
    const version = (await rows("select keys_version from organizations where id = $1", org.orgId))[0]!.keys_version;
    assert.ok(Number(version) >= 3, `keys_version ${version}`);
  });

  it("webhook workers on both nodes never deliver one attempt twice, under load through both", async (t) => {
    const ENDPOINTS = 6;
    const PER_ENDPOINT = 30;
    const orgs = [];
    const firsts: string[] = [];
    const endpointPath = new Map<string, string>(); // endpoint id → receiver path
    for (let i = 0; i < ENDPOINTS; i++) {
      const org = await newOrg(`hooks-${i}`, 1, 1);
      const p = `/hook/${i}`;
      // Created at one node; the very next activity goes through the other, whose listener
      // cache must see the new endpoint (its event is then delivered like any other).
      const ep = await org
        .at(i % 2, 0)
        .sdk.createWebhookEndpoint({ url: receiver.url(p), name: uniq("ep"), subscriptions: [{ eventType: "ACTIVITY_UPDATES" }] });
      endpointPath.set(ep.endpointId, p);
      const first = await org.at(1 - (i % 2), 0).sdk.createUserTag({ userTagName: uniq("first"), userIds: [] });
      assert.equal(first.activity.status, COMPLETED);
      firsts.push(first.activity.id);
      orgs.push(org);
    }
    // The load: every organization's activities, spread over both nodes, 16 in flight.
    const jobs = orgs.flatMap((org, i) => Array.from({ length: PER_ENDPOINT }, (_, k) => ({ org, node: (i + k) % 2 })));
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let j = next++; j < jobs.length; j = next++) {
          const { org, node } = jobs[j]!;
          const res = await org.at(node, 0).sdk.createUserTag({ userTagName: uniq("load"), userIds: [] });
          assert.equal(res.activity.status, COMPLETED);
        }
      }),
    );
    const orgIds = orgs.map((o) => o.orgId);
    for (const id of firsts)
      assert.equal(await count("SELECT COUNT(*) AS n FROM webhook_events WHERE activity_id = $1", id), 1, `the event of ${id}`);
    const events = await count("SELECT COUNT(*) AS n FROM webhook_events WHERE organization_id = ANY($1)", orgIds);
    // One per activity above (and at most one per organization for its endpoint's creation).
    assert.ok(events >= ENDPOINTS * (PER_ENDPOINT + 1) && events <= ENDPOINTS * (PER_ENDPOINT + 2), `events: ${events}`);
    const ids = [...endpointPath.keys()];
    const settled = await until(
      "every delivery to the test endpoints delivered",
      async () => {
        const r = await rows("SELECT event_id, endpoint_id, status, attempts FROM webhook_deliveries WHERE endpoint_id = ANY($1)", ids);
        return r.length === events && r.every((d) => d.status === "delivered") ? r : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 200, describe: () => ({ received: receiver.deliveries.length }) },
    );
    // A lease that lapsed would show up here as a late duplicate: give stragglers a moment,
    // polled (the receipts must stop growing), then compare.
    let last = -1;
    await until(
      "receipts settled",
      () => {
        const n = receiver.deliveries.length;
        const stable = n === last;
        last = n;
        return stable;
      },
      { timeoutMs: 10_000, intervalMs: 500 },
    );

    const byKey = new Map<string, Delivery[]>();
    for (const d of receiver.deliveries) {
      const k = `${d.path} ${d.eventId}`;
      byKey.set(k, [...(byKey.get(k) ?? []), d]);
    }
    let retried = 0;
    for (const row of settled) {
      const p = endpointPath.get(String(row.endpoint_id))!;
      const got = byKey.get(`${p} ${row.event_id}`) ?? [];
      const failedFirst = /[0-4]$/.test(String(row.event_id));
      if (failedFirst) retried++;
      const want = failedFirst ? 2 : 1;
      const desc = `event ${row.event_id} at ${p}: ${JSON.stringify(got)}`;
      assert.equal(got.length, want, `deliveries (one per attempt; ${failedFirst ? "the first answered 500" : "answered 200"}): ${desc}`);
      assert.equal(Number(row.attempts), want, `attempts recorded: ${desc}`);
      assert.deepEqual(
        got.map((d) => d.answered),
        failedFirst ? [500, 200] : [200],
        desc,
      );
    }
    assert.equal(byKey.size, events, "no delivery of an event the database does not know");
    assert.ok(retried > 0, "some first attempts failed (retries exercised)");
    // Both workers took part: the receiver saw connections from both processes.
    const pids = nodes.map((n) => n.proc.pid!);
    const share = pids.map((pid) => receiver.deliveries.filter((d) => d.sender === pid).length);
    const unknown = receiver.deliveries.filter((d) => d.sender === undefined).length;
    t.diagnostic(
      `${receiver.deliveries.length} deliveries (${retried} events retried once); sent by node A ${share[0]}, node B ${share[1]}, unattributed ${unknown}`,
    );
    // Who sent what is read from Linux's /proc; elsewhere only the counts above are checked.
    if (existsSync("/proc/net/tcp"))
      assert.ok(
        share.every((s) => s > 0),
        `deliveries per node ${JSON.stringify(share)} (${unknown} unattributed): both nodes' workers must deliver`,
      );
  });
});
