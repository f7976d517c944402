import { it } from "node:test";
import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import {
  addUsersWithKeys,
  assertIdempotent,
  completed,
  conflict,
  exhausted,
  forbidden,
  invalidRequest,
  notFound,
  onSqlite,
  perEngine,
  publicKey,
  UUID,
  type Json,
} from "../helpers/inproc.ts";
import { createApiKeysV2 } from "../../src/activities/credentials/create_api_keys.ts";

const OP = "create_api_keys";
const V2 = "ACTIVITY_TYPE_CREATE_API_KEYS_V2";
const MISSING = "00000000-0000-4000-8000-000000000000";
const key = (over: Json = {}) => ({ apiKeyName: "k", publicKey: publicKey(), curveType: "API_KEY_CURVE_P256", ...over });
const ed25519 = () =>
  (generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" }) as Buffer).subarray(12).toString("hex");
const k1 = () => Buffer.from(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true)).toString("hex");

onSqlite("create_api_keys", (h) => {
  it("adds P-256, secp256k1 and Ed25519 keys, expiring or not; get_api_keys lists them", async () => {
    const [u] = await addUsersWithKeys(h(), 1);
    const keys = [
      key(),
      key({ curveType: "API_KEY_CURVE_SECP256K1", publicKey: k1() }),
      key({ curveType: "API_KEY_CURVE_ED25519", publicKey: ed25519(), expirationSeconds: "3600" }),
    ];
    const { apiKeyIds } = completed(await h().submit(OP, V2, { userId: u!.userId, apiKeys: keys }), createApiKeysV2);
    assert.equal(apiKeyIds.length, 3);
    for (const id of apiKeyIds) assert.match(id, UUID);
    const listed = (await h().query("get_api_keys", { userId: u!.userId })).json.apiKeys as Json[];
    for (const k of keys)
      assert.ok(
        listed.some((l) => l.credential.publicKey === k.publicKey),
        k.publicKey,
      );
  });

  it("V1 (P-256 only, no curveType) is accepted at the same path", async () => {
    const res = await h().submit(OP, "ACTIVITY_TYPE_CREATE_API_KEYS", {
      userId: h().root.userId,
      apiKeys: [{ apiKeyName: "v1", publicKey: publicKey() }],
    });
    completed(res, createApiKeysV2);
    assert.ok(res.json.activity.intent.createApiKeysIntent);
  });

  it("the same body twice is one activity", async () => {
    await assertIdempotent(h(), OP, V2, { userId: h().root.userId, apiKeys: [key({ expirationSeconds: "60" })] });
  });

  it("a non-root user may add keys to itself without a policy, but not to another user (403)", async () => {
    const [a, b] = await addUsersWithKeys(h(), 2);
    completed(await h().submit(OP, V2, { userId: a!.userId, apiKeys: [key()] }, { as: a }), createApiKeysV2);
    forbidden(await h().submit(OP, V2, { userId: b!.userId, apiKeys: [key()] }, { as: a }));
  });

  it("an unknown user is 404", async () => {
    notFound(await h().submit(OP, V2, { userId: MISSING, apiKeys: [key()] }), /no user/);
  });

  const refused: [string, Json, string][] = [
    ["no keys", { apiKeys: [] }, "parameters.apiKeys"],
    ["more than 10 keys", { apiKeys: Array.from({ length: 11 }, () => key()) }, "parameters.apiKeys"],
    ["a bad curve", { apiKeys: [key({ curveType: "P256" })] }, "parameters.apiKeys[0].curveType"],
    ["a key of another curve than named", { apiKeys: [key({ curveType: "API_KEY_CURVE_ED25519" })] }, "parameters.apiKeys[0].publicKey"],
    ["a short key", { apiKeys: [key({ publicKey: "02abcd" })] }, "parameters.apiKeys[0].publicKey"],
    ["a non-numeric expiration", { apiKeys: [key({ expirationSeconds: "1h" })] }, "parameters.apiKeys[0].expirationSeconds"],
    ["an expiration over ten years", { apiKeys: [key({ expirationSeconds: "999999999" })] }, "parameters.apiKeys[0].expirationSeconds"],
    ["a blank key name", { apiKeys: [key({ apiKeyName: "" })] }, "parameters.apiKeys[0].apiKeyName"],
  ];
  for (const [what, params, field] of refused) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().submit(OP, V2, { userId: h().root.userId, ...params }), undefined, [field]);
    });
  }
});

perEngine("create_api_keys limits and uniqueness", (h) => {
  it("a public key is unique per organization (409)", async () => {
    const [u] = await addUsersWithKeys(h(), 1);
    conflict(await h().submit(OP, V2, { userId: h().root.userId, apiKeys: [key({ publicKey: u!.key.publicKey })] }), /already exists/);
  });

  /** The user's keys as stored, oldest first (the eviction order of docs/organizations.md §3.2). */
  const rowsOf = (userId: string) =>
    h()
      .service.store.db.selectFrom("api_keys")
      .select(["id", "public_key", "expires_at", "credential_type"])
      .where("user_id", "=", userId)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
  const expiring = (n: number) => Array.from({ length: n }, () => key({ expirationSeconds: "600" }));

  it("a user holds at most 10 long-lived keys (429, nothing added); an 11th expiring key evicts the oldest expiring one instead of failing", async () => {
    const [u] = await addUsersWithKeys(h(), 1);
    completed(await h().submit(OP, V2, { userId: u!.userId, apiKeys: Array.from({ length: 9 }, () => key()) }), createApiKeysV2);
    completed(await h().submit(OP, V2, { userId: u!.userId, apiKeys: expiring(4) }), createApiKeysV2);
    completed(await h().submit(OP, V2, { userId: u!.userId, apiKeys: expiring(6) }), createApiKeysV2);
    exhausted(await h().submit(OP, V2, { userId: u!.userId, apiKeys: [key()] }), /long-lived/);
    assert.equal((await rowsOf(u!.userId)).length, 20);

    const before = (await rowsOf(u!.userId)).filter((k) => k.expires_at !== null);
    const eleventh = key({ expirationSeconds: "600" });
    completed(await h().submit(OP, V2, { userId: u!.userId, apiKeys: [eleventh] }), createApiKeysV2);
    const listed = ((await h().query("get_api_keys", { userId: u!.userId })).json.apiKeys as Json[]).map(
      (k) => k.credential.publicKey as string,
    );
    assert.equal(listed.length, 20);
    assert.ok(listed.includes(eleventh.publicKey));
    assert.ok(!listed.includes(before[0]!.public_key), "the oldest expiring key made room");
    for (const k of before.slice(1)) assert.ok(listed.includes(k.public_key), "no other key went");

    // Ten at once replace all ten; the long-lived keys stay.
    const ten = expiring(10);
    completed(await h().submit(OP, V2, { userId: u!.userId, apiKeys: ten }), createApiKeysV2);
    const after = await rowsOf(u!.userId);
    assert.deepEqual(
      after
        .filter((k) => k.expires_at !== null)
        .map((k) => k.public_key)
        .sort(),
      ten.map((k) => k.publicKey).sort(),
    );
    assert.equal(after.filter((k) => k.expires_at === null).length, 10);
  });

  it("expired keys make room first: live expiring keys stay while expired ones cover the need", async () => {
    const [u] = await addUsersWithKeys(h(), 1);
    completed(await h().submit(OP, V2, { userId: u!.userId, apiKeys: expiring(10) }), createApiKeysV2);
    const all = await rowsOf(u!.userId);
    // Two keys expire: the newest two, so that evicting by age would have picked others.
    const gone = all
      .filter((k) => k.expires_at !== null)
      .slice(-2)
      .map((k) => k.id);
    await h()
      .service.store.db.updateTable("api_keys")
      .set({ expires_at: Date.now() - 1 })
      .where("id", "in", gone)
      .execute();
    const fresh = expiring(2);
    completed(await h().submit(OP, V2, { userId: u!.userId, apiKeys: fresh }), createApiKeysV2);
    const now = await rowsOf(u!.userId);
    assert.ok(!now.some((k) => gone.includes(k.id)), "the expired keys are deleted");
    const live = now.filter((k) => k.expires_at !== null).map((k) => k.id);
    assert.equal(live.length, 10);
    for (const k of all.filter((k) => k.expires_at !== null && !gone.includes(k.id)))
      assert.ok(live.includes(k.id), "every live key stayed");
  });

  it("15 concurrent requests each adding one expiring key: all complete and the user holds exactly 10 live expiring keys, all new", async () => {
    const [u] = await addUsersWithKeys(h(), 1);
    completed(await h().submit(OP, V2, { userId: u!.userId, apiKeys: expiring(10) }), createApiKeysV2);
    const old = new Set((await rowsOf(u!.userId)).filter((k) => k.expires_at !== null).map((k) => k.id));
    const results = await Promise.all(Array.from({ length: 15 }, () => h().submit(OP, V2, { userId: u!.userId, apiKeys: expiring(1) })));
    for (const r of results) completed(r, createApiKeysV2);
    const live = (await rowsOf(u!.userId)).filter((k) => k.expires_at !== null);
    assert.equal(live.length, 10);
    for (const k of live) assert.ok(!old.has(k.id), "the ten earlier keys were evicted first");
  });
});
