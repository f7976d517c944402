// Rate limits end to end: token buckets per credential, per organization and per client
// address, answered 429 with the SDK's error body (code 8, RATE_LIMIT_EXCEEDED) and
// Retry-After; a limited submission creates no activity. Then two `sigil serve` processes
// sharing Redis (127.0.0.1:6379 here and in CI): over a bounded load spread across both, the
// sum admitted stays within one bucket's allowance — not one per process.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { Turnkey, TurnkeyRequestError } from "@turnkey/sdk-server";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { goodStamp } from "../helpers/raw-http.ts";
import { generateP256KeyPair, type P256KeyPair } from "../../src/crypto/keygen.ts";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

interface Answer {
  status: number;
  retryAfter: string | null;
  json: { code?: number; message?: string; details?: { turnkeyErrorCode?: string }[]; activity?: { id: string } };
}

async function post(baseUrl: string, path: string, body: string, headers: Record<string, string>): Promise<Answer> {
  const res = await fetch(baseUrl + path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), json: (await res.json()) as Answer["json"] };
}

let seq = 0;
async function tag(baseUrl: string, key: P256KeyPair, organizationId: string): Promise<Answer> {
  const body = JSON.stringify({
    type: "ACTIVITY_TYPE_CREATE_USER_TAG",
    timestampMs: String(Date.now()),
    organizationId,
    parameters: { userTagName: `t-${++seq}-${randomBytes(3).toString("hex")}`, userIds: [] },
  });
  return post(baseUrl, "/public/v1/submit/create_user_tag", body, { "X-Stamp": await goodStamp(key, body) });
}

function assertLimited(a: Answer): void {
  assert.equal(a.status, 429, JSON.stringify(a.json));
  assert.equal(a.json.code, 8);
  assert.equal(a.json.details?.[0]?.turnkeyErrorCode, "RATE_LIMIT_EXCEEDED");
  assert.match(a.json.message ?? "", /rate limit exceeded/);
  assert.match(a.retryAfter ?? "", /^[1-9][0-9]*$/);
}

const activityCount = async (sdk: ReturnType<Turnkey["apiClient"]>) =>
  (await sdk.getActivities({ paginationOptions: { limit: "100" } })).activities.length;

for (const engine of engines()) {
  describe(`rate limits (${engine.name})`, { skip: engine.skip, timeout: 180_000 }, () => {
    let inst: Instance;
    let root: InitResult;
    let rootKey: P256KeyPair;
    let reader: P256KeyPair;
    const servers: RunningServer[] = [];

    before(async () => {
      inst = await newInstance(engine.name);
      root = await sigilInit(inst);
      rootKey = { publicKey: root.apiPublicKey, privateKey: root.apiPrivateKey };
      // A second key of the root user reads the results: its own credential bucket.
      reader = generateP256KeyPair();
      const s = await startServer(inst, ["--rate-limit-address", "0"]);
      await new Turnkey({
        apiBaseUrl: s.url,
        apiPublicKey: rootKey.publicKey,
        apiPrivateKey: rootKey.privateKey,
        defaultOrganizationId: root.organizationId,
      })
        .apiClient()
        .createApiKeys({
          userId: root.userId,
          apiKeys: [{ apiKeyName: "reader", publicKey: reader.publicKey, curveType: "API_KEY_CURVE_P256" }],
        });
      await s.stop();
    });
    after(async () => {
      for (const s of servers) await s.stop();
      await inst?.cleanup();
    });
    const start = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
      const s = await startServer({ ...inst, env: { ...inst.env, ...env } }, args);
      servers.push(s);
      return s;
    };
    const stopAll = async () => {
      for (const s of servers.splice(0)) await s.stop();
    };
    const readerSdk = (url: string) =>
      new Turnkey({
        apiBaseUrl: url,
        apiPublicKey: reader.publicKey,
        apiPrivateKey: reader.privateKey,
        defaultOrganizationId: root.organizationId,
      }).apiClient();

    it("per credential (one process, in memory): a burst of twice the rate, then 429 + Retry-After; refused submissions create nothing", async () => {
      const s = await start(["--rate-limit-credential", "3", "--rate-limit-organization", "0", "--rate-limit-address", "0"]);
      const before = await activityCount(readerSdk(s.url));
      const t0 = Date.now();
      const answers = await Promise.all(Array.from({ length: 20 }, () => tag(s.url, rootKey, root.organizationId)));
      const seconds = (Date.now() - t0) / 1000;
      const admitted = answers.filter((a) => a.status === 200);
      for (const a of answers.filter((x) => x.status !== 200)) assertLimited(a);
      assert.ok(admitted.length >= 6, `admitted ${admitted.length}`);
      assert.ok(admitted.length <= 6 + Math.ceil(seconds * 3), `admitted ${admitted.length} in ${seconds}s`);
      const ids = new Set(admitted.map((a) => a.json.activity!.id));
      // Exactly the admitted submissions became activities.
      assert.equal((await activityCount(readerSdk(s.url))) - before, ids.size);
      // The official SDK surfaces the same error.
      const sdk = new Turnkey({
        apiBaseUrl: s.url,
        apiPublicKey: rootKey.publicKey,
        apiPrivateKey: rootKey.privateKey,
        defaultOrganizationId: root.organizationId,
      }).apiClient();
      let limited: unknown;
      for (let i = 0; i < 10 && !limited; i++)
        limited = await sdk.getWhoami({}).then(
          () => undefined,
          (e: unknown) => e,
        );
      assert.ok(limited instanceof TurnkeyRequestError, String(limited));
      assert.equal(limited.code, 8);
      await stopAll();
    });

    it("per organization: every credential of the organization draws from one bucket", async () => {
      const s = await start(["--rate-limit-credential", "0", "--rate-limit-organization", "2", "--rate-limit-address", "0"]);
      const answers: Answer[] = [];
      for (let i = 0; i < 8; i++) answers.push(await tag(s.url, i % 2 ? rootKey : reader, root.organizationId));
      const admitted = answers.filter((a) => a.status === 200).length;
      assert.ok(admitted >= 4 && admitted <= 5, `admitted ${admitted}`);
      for (const a of answers.filter((x) => x.status !== 200)) assertLimited(a);
      await stopAll();
    });

    it("per client address: checked before anything, unstamped requests included", async () => {
      const s = await start(["--rate-limit-address", "2", "--rate-limit-credential", "0", "--rate-limit-organization", "0"]);
      const answers: Answer[] = [];
      for (let i = 0; i < 8; i++) answers.push(await post(s.url, "/public/v1/query/whoami", "{}", {}));
      // Unstamped: 401 while tokens last, 429 after.
      assert.ok(
        answers.slice(0, 4).every((a) => a.status === 401),
        JSON.stringify(answers.map((a) => a.status)),
      );
      assert.ok(
        answers.slice(5).every((a) => a.status === 429),
        JSON.stringify(answers.map((a) => a.status)),
      );
      assertLimited(answers[7]!);
      assert.match(answers[7]!.json.message ?? "", /client address 127\.0\.0\.1/);
      // Health checks are not API calls: never limited.
      const health = await fetch(`${s.url}/healthz`);
      assert.equal(health.status, 200);
      await stopAll();
    });

    it("two processes sharing Redis: the sum admitted over a bounded load stays within one bucket", async () => {
      const env = { REDIS_URL };
      const limits = ["--rate-limit-credential", "5", "--rate-limit-organization", "0", "--rate-limit-address", "0"];
      const [a, b] = [await start(limits, env), await start(limits, env)];
      // A fresh credential: its bucket in Redis is new.
      const key = generateP256KeyPair();
      await readerSdk(a.url).createApiKeys({
        userId: root.userId,
        apiKeys: [{ apiKeyName: `load-${randomBytes(3).toString("hex")}`, publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
      });
      const before = await activityCount(readerSdk(b.url));
      const perServer = new Map<string, number>([
        [a.url, 0],
        [b.url, 0],
      ]);
      let admitted = 0;
      let limitedCount = 0;
      const t0 = Date.now();
      const windowMs = 2_000;
      // 4 workers, alternating servers, until the window is over.
      await Promise.all(
        Array.from({ length: 4 }, async (_, w) => {
          for (let i = 0; Date.now() - t0 < windowMs; i++) {
            const url = (i + w) % 2 ? a.url : b.url;
            const ans = await tag(url, key, root.organizationId);
            if (ans.status === 200) {
              admitted++;
              perServer.set(url, perServer.get(url)! + 1);
            } else {
              assertLimited(ans);
              limitedCount++;
            }
          }
        }),
      );
      const seconds = (Date.now() - t0) / 1000;
      // One bucket: burst 10 + 5/s. Two separate buckets would admit about twice that.
      const allowance = 10 + Math.ceil(seconds * 5);
      assert.ok(admitted <= allowance, `admitted ${admitted} > ${allowance} in ${seconds}s`);
      assert.ok(admitted >= 10, `admitted ${admitted}`);
      assert.ok(limitedCount > 0, "the load must exceed the limit");
      assert.ok(perServer.get(a.url)! > 0 && perServer.get(b.url)! > 0, JSON.stringify([...perServer]));
      assert.equal((await activityCount(readerSdk(b.url))) - before, admitted);
      await stopAll();
    });
  });
}
