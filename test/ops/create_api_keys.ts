import { it } from "node:test";
import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { addUsersWithKeys, assertIdempotent, completed, conflict, exhausted, forbidden, invalidRequest, notFound, onSqlite, perEngine, publicKey, UUID, type Json } from "../helpers/inproc.ts";
import { createApiKeysV2 } from "../../src/activities/credentials/create_api_keys.ts";

const OP = "create_api_keys";
const V2 = "ACTIVITY_TYPE_CREATE_API_KEYS_V2";
const MISSING = "00000000-0000-4000-8000-000000000000";
const key = (over: Json = {}) => ({ apiKeyName: "k", publicKey: publicKey(), curveType: "API_KEY_CURVE_P256", ...over });
const ed25519 = () => (generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" }) as Buffer).subarray(12).toString("hex");
const k1 = () => Buffer.from(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true)).toString("hex");

onSqlite("create_api_keys", (h) => {
  it("adds P-256, secp256k1 and Ed25519 keys, expiring or not; get_api_keys lists them", async () => {
    const [u] = await addUsersWithKeys(h(), 1);
    const keys = [key(), key({ curveType: "API_KEY_CURVE_SECP256K1", publicKey: k1() }), key({ curveType: "API_KEY_CURVE_ED25519", publicKey: ed25519(), expirationSeconds: "3600" })];
    const { apiKeyIds } = completed(await h().submit(OP, V2, { userId: u!.userId, apiKeys: keys }), createApiKeysV2);
    assert.equal(apiKeyIds.length, 3);
    for (const id of apiKeyIds) assert.match(id, UUID);
    const listed = (await h().query("get_api_keys", { userId: u!.userId })).json.apiKeys as Json[];
    for (const k of keys) assert.ok(listed.some((l) => l.credential.publicKey === k.publicKey), k.publicKey);
  });

  it("V1 (P-256 only, no curveType) is accepted at the same path", async () => {
    const res = await h().submit(OP, "ACTIVITY_TYPE_CREATE_API_KEYS", { userId: h().root.userId, apiKeys: [{ apiKeyName: "v1", publicKey: publicKey() }] });
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

  it("a user holds at most 10 long-lived and 10 expiring keys (429); the request that would pass the cap adds nothing", async () => {
    const [u] = await addUsersWithKeys(h(), 1);
    completed(await h().submit(OP, V2, { userId: u!.userId, apiKeys: Array.from({ length: 9 }, () => key()) }), createApiKeysV2);
    completed(await h().submit(OP, V2, { userId: u!.userId, apiKeys: Array.from({ length: 10 }, () => key({ expirationSeconds: "600" })) }), createApiKeysV2);
    exhausted(await h().submit(OP, V2, { userId: u!.userId, apiKeys: [key()] }), /long-lived/);
    exhausted(await h().submit(OP, V2, { userId: u!.userId, apiKeys: [key({ expirationSeconds: "600" })] }), /short-lived/);
    assert.equal((await h().query("get_api_keys", { userId: u!.userId })).json.apiKeys.length, 20);
  });
});
