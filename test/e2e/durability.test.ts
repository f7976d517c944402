// Crash durability: the server is SIGKILLed while create_user_tag requests are in flight.
// After a restart on the same data, every activity answered 200 must be there, complete,
// with its tag; and nothing may be half-written (an activity without its result or vote,
// a tag without its activity, an activity without its tag).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { engines, newInstance, sigilInit, startServer, type Instance, type InitResult, type RunningServer } from "../helpers/server.ts";
import { goodStamp, rawPost, stampedPost, type KeyPair } from "../helpers/raw-http.ts";

const TAG = "/public/v1/submit/create_user_tag";
const CONCURRENCY = 8;
/** Answers to collect before the kill. */
const TARGET = 150;
/** Requests that must be on the wire when the kill is sent. */
const MIN_IN_FLIGHT = 4;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface ActivityJson {
  id: string;
  organizationId: string;
  status: string;
  type: string;
  intent: { createUserTagIntent?: { userTagName?: string } };
  result: { createUserTagResult?: { userTagId?: string; userIds?: string[] } };
  votes: Array<{ userId: string; publicKey: string; selection: string }>;
}

/** Runs `fn` over `items`, `n` at a time. */
async function pool<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

for (const engine of engines()) {
  describe(`durability under SIGKILL (${engine.name})`, { skip: engine.skip, timeout: 180_000 }, () => {
    let inst: Instance;
    let server: RunningServer;
    let root: InitResult;
    let rootKey: KeyPair;
    /** activity id → tag name, for every request answered 200. */
    const answered = new Map<string, string>();
    /** tag name → the exact bytes sent and their stamp, for every request put on the wire. */
    const sent = new Map<string, { body: string; stamp: string }>();
    /** Tag names whose request died with a connection error: outcome unknown. */
    const unknown: string[] = [];
    /** Anything else: non-200 answers, or connection errors before the kill. */
    const unexpected: string[] = [];
    let inFlightAtKill = -1;
    let activitiesAfterRestart: ActivityJson[] = [];

    const tagBody = (name: string) =>
      JSON.stringify({
        parameters: { userTagName: name, userIds: [] },
        organizationId: root.organizationId,
        timestampMs: String(Date.now()),
        type: "ACTIVITY_TYPE_CREATE_USER_TAG",
      });

    async function listAllActivities(): Promise<ActivityJson[]> {
      const all: ActivityJson[] = [];
      let after: string | undefined;
      for (let page = 0; page < 100; page++) {
        const res = await stampedPost(
          server.url,
          "/public/v1/query/list_activities",
          JSON.stringify({ organizationId: root.organizationId, paginationOptions: { limit: "100", ...(after ? { after } : {}) } }),
          rootKey,
        );
        assert.equal(res.status, 200, res.text);
        const acts = res.json.activities as ActivityJson[];
        all.push(...acts);
        if (acts.length < 100) return all;
        after = acts[acts.length - 1]!.id;
      }
      throw new Error("list_activities did not end within 100 pages");
    }

    async function listTags(): Promise<Array<{ tagId: string; tagName: string }>> {
      const res = await stampedPost(
        server.url,
        "/public/v1/query/list_user_tags",
        JSON.stringify({ organizationId: root.organizationId }),
        rootKey,
      );
      assert.equal(res.status, 200, res.text);
      return res.json.userTags as Array<{ tagId: string; tagName: string }>;
    }

    before(async () => {
      inst = await newInstance(engine.name);
      root = await sigilInit(inst, ["--name", "Durability Org"]);
      rootKey = { publicKey: root.apiPublicKey, privateKey: root.apiPrivateKey };
      server = await startServer(inst);
    });

    after(async () => {
      await server?.stop();
      await inst?.cleanup();
    });

    it(`answers ≥${TARGET} create_user_tag requests, then is SIGKILLed with requests in flight`, async (t) => {
      let killed: Promise<void> | undefined;
      let inFlight = 0;
      let n = 0;
      const deadline = Date.now() + 40_000;
      const firstServer = server;

      async function worker(): Promise<void> {
        while (!killed) {
          if (Date.now() > deadline) throw new Error(`no kill point reached in time; answered ${answered.size}`);
          const name = `dur-${engine.name}-${String(++n).padStart(5, "0")}`;
          const body = tagBody(name);
          const stamp = await goodStamp(rootKey, body);
          if (killed) break;
          sent.set(name, { body, stamp });
          inFlight++;
          try {
            const res = await rawPost(firstServer.url, TAG, body, { "X-Stamp": stamp });
            if (res.status === 200) {
              const a = res.json.activity as ActivityJson;
              assert.equal(a.status, "ACTIVITY_STATUS_COMPLETED", res.text);
              answered.set(a.id, name);
            } else {
              unexpected.push(`${name}: HTTP ${res.status} ${res.text.slice(0, 300)}`);
            }
          } catch (err) {
            if (killed) unknown.push(name);
            else unexpected.push(`${name}: ${String((err as Error).cause ?? err)} before the kill`);
          } finally {
            inFlight--;
          }
          if (!killed && answered.size >= TARGET && inFlight >= MIN_IN_FLIGHT) {
            inFlightAtKill = inFlight;
            killed = firstServer.kill();
          }
        }
      }

      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      await killed;
      assert.ok(firstServer.proc.signalCode === "SIGKILL", `server ended with ${firstServer.proc.signalCode}/${firstServer.proc.exitCode}`);
      assert.deepEqual(unexpected, []);
      assert.ok(answered.size >= TARGET, `only ${answered.size} answered`);
      assert.ok(inFlightAtKill >= MIN_IN_FLIGHT, `in flight at kill: ${inFlightAtKill}`);
      // Every request sent is accounted for exactly once: answered or unknown.
      assert.equal(answered.size + unknown.length, sent.size);
      assert.equal(new Set(answered.values()).size, answered.size, "two answers carried the same tag");
      t.diagnostic(`answered ${answered.size}, unknown outcome ${unknown.length}, in flight at kill ${inFlightAtKill}`);

      server = await startServer(inst);
    });

    it("every activity answered 200 is COMPLETED with its createUserTagResult after the restart", async () => {
      assert.ok(answered.size >= TARGET);
      const problems: string[] = [];
      await pool([...answered], CONCURRENCY, async ([id, name]) => {
        const res = await stampedPost(
          server.url,
          "/public/v1/query/get_activity",
          JSON.stringify({ organizationId: root.organizationId, activityId: id }),
          rootKey,
        );
        if (res.status !== 200) return void problems.push(`${id}: HTTP ${res.status} ${res.text.slice(0, 200)}`);
        const a = res.json.activity as ActivityJson;
        if (a.id !== id) problems.push(`${id}: got activity ${a.id}`);
        if (a.status !== "ACTIVITY_STATUS_COMPLETED") problems.push(`${id}: status ${a.status}`);
        if (!UUID.test(a.result?.createUserTagResult?.userTagId ?? "")) problems.push(`${id}: result ${JSON.stringify(a.result)}`);
        if (a.intent?.createUserTagIntent?.userTagName !== name) problems.push(`${id}: intent ${JSON.stringify(a.intent)}`);
      });
      assert.deepEqual(problems, []);
    });

    it("list_user_tags holds every answered tag, and only tags that were requested", async () => {
      const tags = await listTags();
      const names = new Set(tags.map((t) => t.tagName));
      assert.equal(names.size, tags.length, "duplicate tag names");
      const missing = [...answered.values()].filter((name) => !names.has(name));
      assert.deepEqual(missing, []);
      const strangers = [...names].filter((name) => !sent.has(name));
      assert.deepEqual(strangers, []);
    });

    it("no half-written activities: every stored activity is COMPLETED with its result, vote and tag", async (t) => {
      activitiesAfterRestart = await listAllActivities();
      const ids = new Set(activitiesAfterRestart.map((a) => a.id));
      assert.equal(ids.size, activitiesAfterRestart.length, "an activity was listed twice");
      for (const id of answered.keys()) assert.ok(ids.has(id), `answered activity ${id} missing from list_activities`);

      const tags = await listTags();
      const tagIdByName = new Map(tags.map((t) => [t.tagName, t.tagId]));
      const problems: string[] = [];
      for (const a of activitiesAfterRestart) {
        const name = a.intent?.createUserTagIntent?.userTagName ?? "";
        const tagId = a.result?.createUserTagResult?.userTagId;
        if (a.type !== "ACTIVITY_TYPE_CREATE_USER_TAG") problems.push(`${a.id}: type ${a.type}`);
        if (a.status !== "ACTIVITY_STATUS_COMPLETED") problems.push(`${a.id}: status ${a.status}`);
        if (!tagId) problems.push(`${a.id}: no result ${JSON.stringify(a.result)}`);
        else if (tagIdByName.get(name) !== tagId) problems.push(`${a.id}: tag ${name} is ${tagIdByName.get(name)}, result says ${tagId}`);
        if (a.votes?.length !== 1 || a.votes[0]!.userId !== root.userId || a.votes[0]!.selection !== "VOTE_SELECTION_APPROVED") {
          problems.push(`${a.id}: votes ${JSON.stringify(a.votes?.map((v) => [v.userId, v.selection]))}`);
        }
        // An activity nobody was told about may only come from a request whose outcome is unknown.
        if (!answered.has(a.id) && !unknown.includes(name)) problems.push(`${a.id}: unexpected activity for ${name}`);
      }
      assert.deepEqual(problems, []);
      t.diagnostic(`${activitiesAfterRestart.length - answered.size} of ${unknown.length} unknown-outcome requests were committed`);
      // One tag per activity and one activity per tag: no tag survived without its activity.
      assert.equal(tags.length, activitiesAfterRestart.length);
    });

    it("retrying the unknown-outcome requests with the same bytes resolves each to one complete activity", async () => {
      const byName = new Map(activitiesAfterRestart.map((a) => [a.intent.createUserTagIntent?.userTagName ?? "", a.id]));
      for (const name of unknown) {
        const { body, stamp } = sent.get(name)!;
        const res = await rawPost(server.url, TAG, body, { "X-Stamp": stamp });
        assert.equal(res.status, 200, `${name}: ${res.text}`);
        const a = res.json.activity as ActivityJson;
        assert.equal(a.status, "ACTIVITY_STATUS_COMPLETED");
        assert.ok(a.result.createUserTagResult?.userTagId);
        const earlier = byName.get(name);
        if (earlier) assert.equal(a.id, earlier, `${name}: the retry made a second activity`);
      }
      // Replaying an answered request gives back its activity rather than a new one.
      const [firstId, firstName] = [...answered][0]!;
      const { body, stamp } = sent.get(firstName)!;
      const replay = await rawPost(server.url, TAG, body, { "X-Stamp": stamp });
      assert.equal(replay.status, 200, replay.text);
      assert.equal(replay.json.activity.id, firstId);

      const activities = await listAllActivities();
      const tags = await listTags();
      assert.equal(activities.length, answered.size + unknown.length);
      assert.equal(tags.length, activities.length);
    });

    it("the restarted server takes new activities", async () => {
      const res = await stampedPost(server.url, TAG, tagBody(`dur-${engine.name}-after-restart`), rootKey);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.activity.status, "ACTIVITY_STATUS_COMPLETED");
      const health = await fetch(server.url + "/healthz");
      assert.equal(health.status, 200);
    });
  });
}
