// `sigil seed` (docs/benchmarks.md §3): a small seed, in several batches, is data the API serves as its own:
// every list_suborgs filter finds its sample sub-organization, a deep cursor pages on,
// get_user reads a seeded user, and the seeded root key submits an activity.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import path from "node:path";
import type { FastifyInstance } from "fastify";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { engines, newInstance, type Instance } from "../helpers/server.ts";
import { openService, type Service } from "../../src/service.ts";
import { testApp } from "../helpers/inproc.ts";
import type { SeedResult } from "../../src/cli/seed.ts";

const run = promisify(execFile);
const BIN = path.resolve(import.meta.dirname, "../../bin/sigil.mjs");
const SIZE = { suborgs: 45, activities: 30, users: 12 };

for (const engine of engines()) {
  describe(`sigil seed (${engine.name})`, { skip: engine.skip, timeout: 120_000 }, () => {
    let inst: Instance;
    let seed: SeedResult;
    let service: Service;
    let app: FastifyInstance;

    before(async () => {
      inst = await newInstance(engine.name);
      const args = [
        "seed",
        "--json",
        "--suborgs",
        String(SIZE.suborgs),
        "--activities",
        String(SIZE.activities),
        "--users",
        String(SIZE.users),
      ];
      // Batches of 7: every table is written over several transactions.
      const { stdout } = await run(process.execPath, [BIN, ...args, "--batch", "7", "--wallet-every", "20"], { env: inst.env });
      seed = JSON.parse(stdout) as SeedResult;
      service = await openService([], inst.env);
      app = testApp(service);
      await app.ready();
    });
    after(async () => {
      await app?.close();
      await service?.store.close();
      await inst?.cleanup();
    });

    async function post(p: string, body: Record<string, unknown>) {
      const raw = JSON.stringify({ organizationId: seed.organizationId, ...body });
      const { stampHeaderName, stampHeaderValue } = await new ApiKeyStamper({
        apiPublicKey: seed.apiPublicKey,
        apiPrivateKey: seed.apiPrivateKey,
      }).stamp(raw);
      const res = await app.inject({
        method: "POST",
        url: p,
        headers: { "content-type": "application/json", [stampHeaderName]: stampHeaderValue },
        payload: raw,
      });
      return { status: res.statusCode, json: res.json() as Record<string, unknown> };
    }

    it("reports what it wrote", () => {
      assert.deepEqual({ suborgs: seed.counts.suborgs, activities: seed.counts.activities, users: seed.counts.users }, SIZE);
      assert.ok(seed.counts.rows > 3 * SIZE.suborgs + 3 * SIZE.activities, JSON.stringify(seed.counts));
    });

    it("every list_suborgs filter finds its sample sub-organization, and only it", async () => {
      const filters = Object.keys(seed.samples.filters).sort();
      assert.deepEqual(filters, ["CREDENTIAL_ID", "EMAIL", "NAME", "PHONE_NUMBER", "PUBLIC_KEY", "USERNAME", "WALLET_ACCOUNT_ADDRESS"]);
      for (const f of filters) {
        const { value, suborgId } = seed.samples.filters[f]!;
        const res = await post("/public/v1/query/list_suborgs", { filterType: f, filterValue: value });
        assert.equal(res.status, 200, JSON.stringify(res.json));
        assert.deepEqual(res.json.organizationIds, [suborgId], f);
      }
    });

    it("pages on from a deep cursor, in both lists", async () => {
      const all = await post("/public/v1/query/list_suborgs", { paginationOptions: { limit: "100" } });
      const ids = all.json.organizationIds as string[];
      assert.equal(ids.length, SIZE.suborgs);
      const at = ids.indexOf(seed.samples.deepSuborgId!);
      assert.ok(at > 0);
      const next = await post("/public/v1/query/list_suborgs", { paginationOptions: { limit: "3", after: seed.samples.deepSuborgId } });
      assert.deepEqual(next.json.organizationIds, ids.slice(at + 1, at + 4));
      const back = await post("/public/v1/query/list_suborgs", { paginationOptions: { limit: "3", before: seed.samples.deepSuborgId } });
      assert.deepEqual(back.json.organizationIds, ids.slice(at - 3, at));

      type A = { id: string; status: string; votes: { selection: string }[] };
      const acts = (await post("/public/v1/query/list_activities", { paginationOptions: { limit: "100" } })).json.activities as A[];
      assert.equal(acts.length, SIZE.activities);
      assert.ok(
        acts.every(
          (a) => a.status === "ACTIVITY_STATUS_COMPLETED" && a.votes.length === 1 && a.votes[0]!.selection === "VOTE_SELECTION_APPROVED",
        ),
      );
      const k = acts.findIndex((a) => a.id === seed.samples.deepActivityId);
      const after = (
        await post("/public/v1/query/list_activities", { paginationOptions: { limit: "4", after: seed.samples.deepActivityId } })
      ).json.activities as A[];
      assert.deepEqual(
        after.map((a) => a.id),
        acts.slice(k + 1, k + 5).map((a) => a.id),
      );
    });

    it("get_user reads a seeded user with its API key; the seeded root key submits an activity", async () => {
      const u = await post("/public/v1/query/get_user", { userId: seed.samples.userId });
      assert.equal(u.status, 200, JSON.stringify(u.json));
      assert.equal((u.json.user as { apiKeys: unknown[] }).apiKeys.length, 1);
      const users = await post("/public/v1/query/list_users", {});
      assert.equal((users.json.users as unknown[]).length, SIZE.users);
      const res = await post("/public/v1/submit/create_user_tag", {
        type: "ACTIVITY_TYPE_CREATE_USER_TAG",
        timestampMs: String(Date.now()),
        parameters: { userTagName: "after-seed", userIds: [] },
      });
      assert.equal(res.status, 200, JSON.stringify(res.json));
      assert.equal((res.json.activity as { status: string }).status, "ACTIVITY_STATUS_COMPLETED");
      const first = (await post("/public/v1/query/list_activities", { paginationOptions: { limit: "1" } })).json.activities as {
        id: string;
      }[];
      assert.equal(
        first[0]!.id,
        (res.json.activity as { id: string }).id,
        "seeded activities lie in the past: the new one is listed first",
      );
    });
  });
}
