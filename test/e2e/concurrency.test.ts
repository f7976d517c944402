// End-to-end: caps and read-modify-write activities under REAL concurrency. Many official SDK
// clients submit at once (Promise.all) against the running service; afterwards the outcome
// must be one that some serial order of the accepted requests could have produced:
//   - no 5xx, whatever interleaving the database chose;
//   - every cap holds exactly (the surplus answered 429 RESOURCE_EXHAUSTED, nothing written);
//   - the root quorum is exactly one request's (members AND threshold), never a blend;
//   - partial updates of one policy are all kept (no lost update);
//   - a root user keeps its last API key however many deletes race.
// On PostgreSQL the activities run in parallel transactions (the interesting engine); SQLite
// serializes activities (group commit), so there the same assertions are cheap and must hold
// too. HTTP statuses come from the shared recording proxy; ground truth (row counts, the root
// quorum, which no query returns) is read straight from the instance's database, read-only.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import Database from "better-sqlite3";
import { TurnkeyRequestError as HttpRequestError } from "@turnkey/http";
import { TurnkeyRequestError as SdkRequestError } from "@turnkey/sdk-server";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { generateP256KeyPair, type P256KeyPair } from "../../src/crypto/keygen.ts";
import { RecordingProxy, partyFor, type AnyRec, type Exchange, type Party } from "../helpers/policy-harness.ts";

const COMPLETED = "ACTIVITY_STATUS_COMPLETED";
const CONSENSUS = "ACTIVITY_STATUS_CONSENSUS_NEEDED";
const RESOURCE_EXHAUSTED = 8;
const FAILED_PRECONDITION = 9;
const NOT_FOUND = 5;

const uniq = (label: string) => `${label}-${randomBytes(4).toString("hex")}`;
const nowMs = () => String(Date.now());
const key = (name: string, k: P256KeyPair) => ({ apiKeyName: name, publicKey: k.publicKey, curveType: "API_KEY_CURVE_P256" as const });

/** Read-only SQL on the instance's database, either engine (`?` placeholders). */
interface Sql {
  all(text: string, ...values: unknown[]): Promise<AnyRec[]>;
  close(): Promise<void>;
}

function openSql(inst: Instance): Sql {
  const url = inst.env.DATABASE_URL;
  if (url) {
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    return {
      all: async (text, ...values) => {
        let i = 0;
        return (
          await pool.query(
            text.replace(/\?/g, () => `$${++i}`),
            values,
          )
        ).rows as AnyRec[];
      },
      close: () => pool.end(),
    };
  }
  const db = new Database(path.join(inst.dataDir, "sigil.db"), { readonly: true, fileMustExist: true });
  return {
    all: async (text, ...values) => db.prepare(text).all(...values) as AnyRec[],
    close: async () => void db.close(),
  };
}

/** What one concurrent call came back with: the activity, or the SDK error's gRPC code. */
type Outcome = { ok: true; activity: AnyRec } | { ok: false; code: number; message: string };

async function outcome(p: Promise<{ activity: AnyRec }>): Promise<Outcome> {
  try {
    return { ok: true, activity: (await p).activity };
  } catch (e) {
    if (e instanceof HttpRequestError || e instanceof SdkRequestError) return { ok: false, code: e.code, message: e.message };
    throw e;
  }
}

for (const engine of engines()) {
  describe(`concurrency (${engine.name})`, { skip: engine.skip, timeout: 240_000 }, () => {
    let inst: Instance | undefined;
    let server: RunningServer | undefined;
    let proxy: RecordingProxy | undefined;
    let sql: Sql | undefined;
    let init: InitResult;
    let root: Party;

    before(async () => {
      // Loopback webhook URLs for the endpoint cap; one attempt so the (unreachable)
      // destinations cost the dispatcher next to nothing.
      inst = await newInstance(engine.name, { SIGIL_WEBHOOKS_ALLOW_LOOPBACK: "true", SIGIL_WEBHOOKS_MAX_ATTEMPTS: "1" });
      init = await sigilInit(inst, ["--name", "Concurrency Org"]);
      server = await startServer(inst);
      proxy = new RecordingProxy(server.url);
      await proxy.start();
      sql = openSql(inst);
      root = partyFor(proxy.url, { publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey }, init.userId, init.organizationId);
    });

    after(async () => {
      await proxy?.stop();
      await sql?.close();
      await server?.stop();
      await inst?.cleanup();
    });

    /**
     * Runs the calls all at once; returns their outcomes and the HTTP statuses the proxy saw
     * for them. No other request is in flight during a test, so the proxy's new exchanges on
     * `op` are exactly these.
     */
    async function concurrently(
      op: string,
      calls: (() => Promise<{ activity: AnyRec }>)[],
    ): Promise<{ outcomes: Outcome[]; statuses: number[] }> {
      const seen = proxy!.exchanges.length;
      const outcomes = await Promise.all(calls.map((c) => outcome(c())));
      const mine = proxy!.exchanges.slice(seen).filter((e: Exchange) => e.path === `/public/v1/submit/${op}`);
      assert.equal(mine.length, calls.length, `exchanges on ${op}`);
      const statuses = mine.map((e) => e.status);
      const fivexx = mine.filter((e) => e.status >= 500);
      assert.equal(fivexx.length, 0, `${op}: ${fivexx.length} of ${calls.length} answered 5xx, e.g. ${fivexx[0]?.body}`);
      return { outcomes, statuses };
    }

    /** A fresh sub-organization with root users (each with the given keys) and a threshold. */
    async function newOrg(
      label: string,
      roots: P256KeyPair[][],
      threshold = 1,
    ): Promise<{ orgId: string; rootIds: string[]; parties: Party[] }> {
      const res = await root.sdk.createSubOrganization({
        subOrganizationName: uniq(label),
        rootUsers: roots.map((keys, i) => ({
          userName: `${label}-root-${i}`,
          apiKeys: keys.map((k, j) => key(`${label}-${i}-${j}`, k)),
          authenticators: [],
          oauthProviders: [],
        })),
        rootQuorumThreshold: threshold,
      });
      assert.equal(res.activity.status, COMPLETED);
      const rootIds = res.rootUserIds ?? [];
      assert.equal(rootIds.length, roots.length);
      const parties = roots.map((keys, i) => partyFor(proxy!.url, keys[0]!, rootIds[i]!, res.subOrganizationId));
      return { orgId: res.subOrganizationId, rootIds, parties };
    }

    async function addUsers(by: Party, n: number, label: string): Promise<string[]> {
      const res = await by.sdk.createUsers({
        users: Array.from({ length: n }, (_, i) => ({
          userName: `${label}-${i}`,
          apiKeys: [],
          authenticators: [],
          oauthProviders: [],
          userTags: [],
        })),
      });
      assert.equal(res.activity.status, COMPLETED);
      assert.equal(res.userIds.length, n);
      return res.userIds;
    }

    async function rootQuorum(orgId: string): Promise<{ threshold: number; members: string[] }> {
      const [org] = await sql!.all("SELECT root_quorum_threshold AS t FROM organizations WHERE id = ?", orgId);
      const members = await sql!.all("SELECT user_id FROM root_quorum_members WHERE organization_id = ? ORDER BY user_id", orgId);
      return { threshold: Number(org!.t), members: members.map((m) => String(m.user_id)) };
    }

    const count = async (table: string, column: string, id: string, extra = "") =>
      Number((await sql!.all(`SELECT COUNT(*) AS n FROM ${table} WHERE ${column} = ?${extra}`, id))[0]!.n);

    it("64 concurrent update_root_quorum: no 5xx, and the final quorum is exactly one completed request's", async () => {
      const { orgId, rootIds, parties } = await newOrg("quorum", [[generateP256KeyPair()]]);
      const [r] = parties;
      const users = await addUsers(r!, 12, "member");
      // Request i: the root user plus 1–3 others (overlapping between requests, so members
      // of two requests collide), and a threshold of 1 or 2. A request authorized after a
      // threshold-2 quorum committed waits for consensus instead: that is a 200 too.
      const asks = Array.from({ length: 64 }, (_, i) => {
        const others = [users[i % 12]!, users[(i * 5 + 1) % 12]!, users[(i * 7 + 3) % 12]!].slice(0, 1 + (i % 3));
        const userIds = [...new Set([rootIds[0]!, ...others])];
        return { userIds, threshold: i % 4 === 3 && userIds.length > 1 ? 2 : 1 };
      });
      const { outcomes, statuses } = await concurrently(
        "update_root_quorum",
        asks.map(
          (a) => () =>
            r!.http.updateRootQuorum({
              type: "ACTIVITY_TYPE_UPDATE_ROOT_QUORUM",
              timestampMs: nowMs(),
              organizationId: orgId,
              parameters: a,
            }),
        ),
      );
      assert.ok(
        statuses.every((s) => s === 200),
        `statuses: ${JSON.stringify(statuses)}`,
      );
      const completed = asks.filter((_, i) => {
        const o = outcomes[i]!;
        assert.ok(o.ok, `request ${i}: ${!o.ok && o.message}`);
        assert.ok([COMPLETED, CONSENSUS].includes(o.activity.status), `request ${i}: ${o.activity.status}`);
        return o.activity.status === COMPLETED;
      });
      assert.ok(completed.length >= 1, "no update_root_quorum completed");
      const final = await rootQuorum(orgId);
      const matches = completed.filter(
        (a) => a.threshold === final.threshold && JSON.stringify([...a.userIds].sort()) === JSON.stringify(final.members),
      );
      assert.ok(matches.length >= 1, `final quorum ${JSON.stringify(final)} is no completed request's (${completed.length} completed)`);
    });

    it("24 concurrent create_api_keys for one user: exactly 10 long-lived keys, the rest 429", async () => {
      const { parties, rootIds } = await newOrg("keys", [[generateP256KeyPair()]]);
      const [r] = parties;
      const userId = rootIds[0]!;
      // The root user already holds one key: 9 more fit.
      const { outcomes, statuses } = await concurrently(
        "create_api_keys",
        Array.from({ length: 24 }, (_, i) => () => r!.sdk.createApiKeys({ userId, apiKeys: [key(`k${i}`, generateP256KeyPair())] })),
      );
      const ok = outcomes.filter((o) => o.ok);
      const refused = outcomes.filter((o) => !o.ok);
      assert.equal(ok.length, 9, `completed: ${ok.length}; statuses ${JSON.stringify(statuses)}`);
      for (const o of refused) assert.equal(!o.ok && o.code, RESOURCE_EXHAUSTED, JSON.stringify(o));
      assert.equal(statuses.filter((s) => s === 429).length, 15);
      assert.equal(await count("api_keys", "user_id", userId, " AND expires_at IS NULL"), 10);
      const { apiKeys } = await r!.sdk.getApiKeys({ userId });
      assert.equal(apiKeys.length, 10);
    });

    it("30 concurrent create_webhook_endpoint: exactly 20 endpoints, the rest 429", async () => {
      const { orgId, parties } = await newOrg("hooks", [[generateP256KeyPair()]]);
      const [r] = parties;
      const { outcomes, statuses } = await concurrently(
        "create_webhook_endpoint",
        Array.from(
          { length: 30 },
          (_, i) => () =>
            r!.sdk.createWebhookEndpoint({
              url: `http://127.0.0.1:9/hook-${i}`,
              name: `hook-${i}`,
              subscriptions: [{ eventType: "ACTIVITY_UPDATES" }],
            }),
        ),
      );
      assert.equal(outcomes.filter((o) => o.ok).length, 20, `statuses ${JSON.stringify(statuses)}`);
      for (const o of outcomes.filter((o) => !o.ok)) assert.equal(!o.ok && o.code, RESOURCE_EXHAUSTED, JSON.stringify(o));
      assert.equal(statuses.filter((s) => s === 429).length, 10);
      assert.equal(await count("webhook_endpoints", "organization_id", orgId), 20);
    });

    it("30 concurrent create_policy with 10 places left: exactly 100 policies, the rest 429", async () => {
      const { orgId, parties } = await newOrg("policies", [[generateP256KeyPair()]]);
      const [r] = parties;
      const filler = Array.from({ length: 90 }, (_, i) => ({
        policyName: `fill-${i}`,
        effect: "EFFECT_ALLOW" as const,
        condition: "false",
        notes: "",
      }));
      const batch = await r!.sdk.createPolicies({ policies: filler });
      assert.equal(batch.activity.status, COMPLETED);
      const { outcomes, statuses } = await concurrently(
        "create_policy",
        Array.from(
          { length: 30 },
          (_, i) => () => r!.sdk.createPolicy({ policyName: `race-${i}`, effect: "EFFECT_ALLOW", condition: "false", notes: "" }),
        ),
      );
      assert.equal(outcomes.filter((o) => o.ok).length, 10, `statuses ${JSON.stringify(statuses)}`);
      for (const o of outcomes.filter((o) => !o.ok)) assert.equal(!o.ok && o.code, RESOURCE_EXHAUSTED, JSON.stringify(o));
      assert.equal(await count("policies", "organization_id", orgId), 100);
    });

    it("concurrent partial update_policy of the same policies: every change is kept", async () => {
      const { orgId, parties } = await newOrg("updates", [[generateP256KeyPair()]]);
      const [r] = parties;
      const created = await r!.sdk.createPolicies({
        policies: Array.from({ length: 10 }, (_, i) => ({
          policyName: `p-${i}`,
          effect: "EFFECT_ALLOW" as const,
          condition: "false",
          notes: "old",
        })),
      });
      const ids = created.policyIds;
      // Per policy, three requests each change a different field; none may undo another.
      await concurrently(
        "update_policy",
        ids.flatMap((policyId, i) => [
          () => r!.sdk.updatePolicy({ policyId, policyName: `renamed-${i}` }),
          () => r!.sdk.updatePolicy({ policyId, policyNotes: `noted-${i}` }),
          () => r!.sdk.updatePolicy({ policyId, policyCondition: `activity.kind == 'K${i}'` }),
        ]),
      );
      const rows = await sql!.all("SELECT id, name, notes, condition FROM policies WHERE organization_id = ?", orgId);
      for (const [i, id] of ids.entries()) {
        const row = rows.find((p) => p.id === id);
        assert.deepEqual(
          { name: row?.name, notes: row?.notes, condition: row?.condition },
          { name: `renamed-${i}`, notes: `noted-${i}`, condition: `activity.kind == 'K${i}'` },
          `policy ${i}`,
        );
      }
    });

    it("8 concurrent delete_api_keys of a root user's 8 keys: the last key stays", async () => {
      const keys = Array.from({ length: 8 }, () => generateP256KeyPair());
      // A second root user signs, so no request is signed by a key being deleted.
      const { rootIds, parties } = await newOrg("lastkey", [keys, [generateP256KeyPair()]]);
      const [, signer] = parties;
      const owner = rootIds[0]!;
      const { apiKeys } = await signer!.sdk.getApiKeys({ userId: owner });
      assert.equal(apiKeys.length, 8);
      const { outcomes } = await concurrently(
        "delete_api_keys",
        apiKeys.map((k) => () => signer!.sdk.deleteApiKeys({ userId: owner, apiKeyIds: [k.apiKeyId] })),
      );
      assert.equal(outcomes.filter((o) => o.ok).length, 7);
      const refused = outcomes.filter((o) => !o.ok);
      assert.equal(refused.length, 1);
      assert.equal(!refused[0]!.ok && refused[0]!.code, FAILED_PRECONDITION, JSON.stringify(refused[0]));
      assert.equal(await count("api_keys", "user_id", owner), 1);
    });

    it("tagging racing delete_users and delete_user_tags: no 5xx, only documented refusals", async () => {
      const { parties } = await newOrg("tags", [[generateP256KeyPair()]]);
      const [r] = parties;
      const users = await addUsers(r!, 16, "tagged");
      const tags: string[] = [];
      for (let i = 0; i < 8; i++) tags.push((await r!.sdk.createUserTag({ userTagName: `tag-${i}`, userIds: [] })).userTagId);
      // Per i, on the same user and tag at once: tag the user (new tag), re-tag it (update_user),
      // create a user carrying the tag; delete the user; delete the tag.
      const calls: (() => Promise<{ activity: AnyRec }>)[] = [];
      for (let i = 0; i < 8; i++) {
        const [u, v, t] = [users[2 * i]!, users[2 * i + 1]!, tags[i]!];
        calls.push(() => r!.sdk.createUserTag({ userTagName: `new-${i}`, userIds: [u, v] }));
        calls.push(() => r!.sdk.updateUser({ userId: v, userTagIds: [t] }));
        calls.push(() =>
          r!.sdk.createUsers({ users: [{ userName: `late-${i}`, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [t] }] }),
        );
        calls.push(() => r!.sdk.deleteUsers({ userIds: [u, v] }));
        calls.push(() => r!.sdk.deleteUserTags({ userTagIds: [t] }));
      }
      const seen = proxy!.exchanges.length;
      const outcomes = await Promise.all(calls.map((c) => outcome(c())));
      const fivexx = proxy!.exchanges.slice(seen).filter((e) => e.status >= 500);
      assert.equal(fivexx.length, 0, `${fivexx.length} of ${calls.length} answered 5xx, e.g. ${fivexx[0]?.path}: ${fivexx[0]?.body}`);
      // A user or tag deleted first is unknown to the later request: 404, or 400 for a tag
      // named inside a user's parameters.
      for (const o of outcomes) if (!o.ok) assert.ok([NOT_FOUND, 3].includes(o.code), JSON.stringify(o));
      // What was answered as done is done: a deleted tag has no members left, a deleted
      // user no memberships (the foreign keys would refuse leftovers; this catches a delete
      // answered COMPLETED that in fact removed nothing).
      for (let i = 0; i < 8; i++) {
        const del = outcomes[5 * i + 3]!;
        if (del.ok) assert.equal(await count("users", "id", users[2 * i]!), 0);
        const delTag = outcomes[5 * i + 4]!;
        if (delTag.ok) assert.equal(await count("user_tag_members", "tag_id", tags[i]!), 0);
      }
    });

    it("delete_users racing update_root_quorum: no 5xx, no deleted user in the quorum", async () => {
      const { orgId, rootIds, parties } = await newOrg("deleters", [[generateP256KeyPair()]]);
      const [r] = parties;
      const users = await addUsers(r!, 16, "victim");
      const asks = Array.from({ length: 8 }, (_, i) => ({ threshold: 1, userIds: [rootIds[0]!, users[2 * i]!, users[2 * i + 1]!] }));
      const calls: (() => Promise<{ activity: AnyRec }>)[] = [];
      for (const [i, a] of asks.entries()) {
        calls.push(() =>
          r!.http.updateRootQuorum({
            type: "ACTIVITY_TYPE_UPDATE_ROOT_QUORUM",
            timestampMs: nowMs(),
            organizationId: orgId,
            parameters: a,
          }),
        );
        calls.push(() => r!.sdk.deleteUsers({ userIds: [users[2 * i]!] }));
        calls.push(() => r!.sdk.deleteUsers({ userIds: [users[2 * i + 1]!] }));
      }
      const seen = proxy!.exchanges.length;
      const outcomes = await Promise.all(calls.map((c) => outcome(c())));
      const fivexx = proxy!.exchanges.slice(seen).filter((e) => e.status >= 500);
      assert.equal(fivexx.length, 0, `${fivexx.length} of ${calls.length} answered 5xx, e.g. ${fivexx[0]?.path}: ${fivexx[0]?.body}`);
      // Refusals are the documented ones: a root member can't be deleted (9); a quorum
      // naming a deleted user is unknown (5).
      for (const o of outcomes) if (!o.ok) assert.ok([FAILED_PRECONDITION, NOT_FOUND].includes(o.code), JSON.stringify(o));
      const completed = asks.filter((_, i) => {
        const o = outcomes[3 * i]!;
        return o.ok && o.activity.status === COMPLETED;
      });
      const final = await rootQuorum(orgId);
      const existing = new Set((await sql!.all("SELECT id FROM users WHERE organization_id = ?", orgId)).map((u) => String(u.id)));
      for (const m of final.members) assert.ok(existing.has(m), `root quorum member ${m} was deleted`);
      if (completed.length) {
        assert.ok(
          completed.some((a) => JSON.stringify([...a.userIds].sort()) === JSON.stringify(final.members)),
          `final quorum ${JSON.stringify(final)} is no completed request's`,
        );
      } else {
        assert.deepEqual(final.members, [rootIds[0]]);
      }
    });
  });
}
