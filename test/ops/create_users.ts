import { it } from "node:test";
import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import {
  assertIdempotent,
  completed,
  conflict,
  exhausted,
  invalidRequest,
  onSqlite,
  perEngine,
  publicKey,
  userParams,
  UUID,
  type Json,
} from "../helpers/inproc.ts";

import { SoftPasskey, queryWithPasskey } from "../helpers/webauthn.ts";
import { failsWith, twoOfTwo } from "../helpers/inproc.ts";
import { sigilToken } from "../helpers/oidc-tokens.ts";
import { DEFAULT_OAUTH_SETTINGS } from "../../src/logins/oauth/configure.ts";
import { createApiKeysV2 } from "../../src/activities/credentials/create_api_keys.ts";
import { createUserTag } from "../../src/activities/users/create_user_tag.ts";
import { createUsersV4 } from "../../src/activities/users/create_users.ts";

const OP = "create_users";
const V4 = "ACTIVITY_TYPE_CREATE_USERS_V4";
const key = (over: Json = {}) => ({ apiKeyName: "k", publicKey: publicKey(), curveType: "API_KEY_CURVE_P256", ...over });
const ed25519 = () =>
  (generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" }) as Buffer).subarray(12).toString("hex");

onSqlite("create_users", (h) => {
  it("creates users with keys and tags; get_user shows them", async () => {
    const tag = completed(
      await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "ops", userIds: [] }),
      createUserTag,
    );
    const k = key();
    const res = await h().submit(OP, V4, {
      users: [
        userParams({
          userName: "alice",
          userEmail: "Alice@Example.com",
          userPhoneNumber: "+14155550100",
          apiKeys: [k],
          userTags: [tag.userTagId],
        }),
        userParams({ userName: "bob", apiKeys: [key({ curveType: "API_KEY_CURVE_ED25519", publicKey: ed25519() })] }),
      ],
    });
    const { userIds } = completed(res, createUsersV4);
    assert.equal(userIds.length, 2);
    for (const id of userIds) assert.match(id, UUID);
    assert.equal(res.json.activity.type, V4);
    assert.equal(res.json.activity.intent.createUsersIntentV4.users[0].userName, "alice");
    const { user } = (await h().query("get_user", { userId: userIds[0] })).json;
    assert.equal(user.userName, "alice");
    assert.equal(user.userEmail, "Alice@Example.com");
    assert.equal(user.userPhoneNumber, "+14155550100");
    assert.deepEqual(user.userTags, [tag.userTagId]);
    assert.equal(user.apiKeys[0].credential.publicKey, k.publicKey);
  });

  it("V3 (older clients) is accepted at the same path, with its own intent name", async () => {
    const res = await h().submit(OP, "ACTIVITY_TYPE_CREATE_USERS_V3", { users: [userParams()] });
    completed(res, createUsersV4);
    assert.ok(res.json.activity.intent.createUsersIntentV3);
  });

  it("unknown parameter fields are dropped, not stored", async () => {
    const res = await h().submit(OP, V4, { users: [userParams({ surprise: 1 })], extra: true });
    completed(res, createUsersV4);
    assert.deepEqual(Object.keys(res.json.activity.intent.createUsersIntentV4), ["users"]);
    assert.equal(res.json.activity.intent.createUsersIntentV4.users[0].surprise, undefined);
  });

  it("the same body twice is one activity", async () => {
    await assertIdempotent(h(), OP, V4, { users: [userParams({ userName: "idem" })] });
  });

  const refused: [string, Json, RegExp, string][] = [
    ["no users", { users: [] }, /users must hold 1 to 100/, "parameters.users"],
    ["more than 100 users", { users: Array.from({ length: 101 }, () => userParams()) }, /1 to 100/, "parameters.users"],
    ["a blank userName", { users: [userParams({ userName: "  " })] }, /userName must be 1 to 256/, "parameters.users[0].userName"],
    ["a 257-character userName", { users: [userParams({ userName: "x".repeat(257) })] }, /userName/, "parameters.users[0].userName"],
    ["a bad email", { users: [userParams({ userEmail: "not-an-email" })] }, /valid email/, "parameters.users[0].userEmail"],
    ["a bad phone number", { users: [userParams({ userPhoneNumber: "555-0100" })] }, /E.164/, "parameters.users[0].userPhoneNumber"],
    [
      "more than 10 keys",
      { users: [userParams({ apiKeys: Array.from({ length: 11 }, () => key()) })] },
      /apiKeys must hold at most 10/,
      "parameters.users[0].apiKeys",
    ],
    [
      "a non-hex public key",
      { users: [userParams({ apiKeys: [key({ publicKey: "zz".repeat(33) })] })] },
      /hex-encoded/,
      "parameters.users[0].apiKeys[0].publicKey",
    ],
    [
      "a public key off the curve",
      { users: [userParams({ apiKeys: [key({ publicKey: "04" + "11".repeat(64) })] })] },
      /not a valid point/,
      "parameters.users[0].apiKeys[0].publicKey",
    ],
    [
      "an unknown curve",
      { users: [userParams({ apiKeys: [key({ curveType: "API_KEY_CURVE_RSA" })] })] },
      /API_KEY_CURVE_P256/,
      "parameters.users[0].apiKeys[0].curveType",
    ],
    [
      "a zero expiration",
      { users: [userParams({ apiKeys: [key({ expirationSeconds: "0" })] })] },
      /expiration/,
      "parameters.users[0].apiKeys[0].expirationSeconds",
    ],
    [
      "an expiration over ten years",
      { users: [userParams({ apiKeys: [key({ expirationSeconds: "315360001" })] })] },
      /at most 315360000/,
      "parameters.users[0].apiKeys[0].expirationSeconds",
    ],
    [
      "an unknown user tag",
      { users: [userParams({ userTags: ["00000000-0000-4000-8000-000000000000"] })] },
      /no user tag/,
      "parameters.users[0].userTags",
    ],
    [
      "a passkey authenticator without its fields",
      { users: [userParams({ authenticators: [{}] })] },
      /must be set/,
      "parameters.users[0].authenticators[0].authenticatorName",
    ],
    [
      "more than 10 passkeys",
      { users: [userParams({ authenticators: Array.from({ length: 11 }, () => new SoftPasskey().registration()) })] },
      /authenticators must hold at most 10/,
      "parameters.users[0].authenticators",
    ],
    [
      "an OAuth provider without its fields",
      { users: [userParams({ oauthProviders: [{}] })] },
      /must be set/,
      "parameters.users[0].oauthProviders[0].providerName",
    ],
    [
      "a missing userName",
      { users: [{ apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }] },
      /must be set/,
      "parameters.users[0].userName",
    ],
  ];
  for (const [what, params, message, field] of refused) {
    it(`refuses ${what} (400, naming the field)`, async () => {
      invalidRequest(await h().submit(OP, V4, params), message, [field]);
    });
  }

  it("refuses a body whose type the path does not accept", async () => {
    invalidRequest(await h().submit(OP, "ACTIVITY_TYPE_CREATE_USER_TAG", { users: [userParams()] }));
  });

  it("refuses a stale or future timestampMs", async () => {
    for (const t of [Date.now() - 301_000, Date.now() + 61_000]) {
      invalidRequest(await h().submit(OP, V4, { users: [userParams()] }, { timestampMs: String(t) }), /timestampMs/, ["timestampMs"]);
    }
  });

  it("refuses U+0000 in a string (400 on both engines' behalf)", async () => {
    invalidRequest(await h().submit(OP, V4, { users: [userParams({ userName: "a\u0000b" })] }), undefined, [
      "parameters.users[0].userName",
    ]);
  });

  it("caps a user at 10 long-lived keys (429); an 11th expiring key evicts the oldest (docs/organizations.md §3.2)", async () => {
    const tenEach = [...Array.from({ length: 10 }, () => key()), ...Array.from({ length: 10 }, () => key({ expirationSeconds: "3600" }))];
    const { userIds } = completed(await h().submit(OP, V4, { users: [userParams({ apiKeys: tenEach.slice(0, 10) })] }), createUsersV4);
    completed(
      await h().submit("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", { userId: userIds[0], apiKeys: tenEach.slice(10) }),
      createApiKeysV2,
    );
    exhausted(
      await h().submit("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", { userId: userIds[0], apiKeys: [key()] }),
      /maximum long-lived/,
    );
    completed(
      await h().submit("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", {
        userId: userIds[0],
        apiKeys: [key({ expirationSeconds: "60" })],
      }),
      createApiKeysV2,
    );
    assert.equal((await h().query("get_api_keys", { userId: userIds[0] })).json.apiKeys.length, 20);
  });
});

perEngine("create_users uniqueness", (h) => {
  it("an email is unique per organization, case-insensitively (409); other organizations may reuse it", async () => {
    completed(await h().submit(OP, V4, { users: [userParams({ userEmail: "dup@example.com" })] }), createUsersV4);
    conflict(await h().submit(OP, V4, { users: [userParams({ userEmail: "DUP@example.com" })] }), /email already exists/);
    conflict(await h().submit(OP, V4, { users: [userParams({ userEmail: "x@example.com" }), userParams({ userEmail: "X@example.com" })] }));
    const other = await h().newOrg();
    completed(await h().submit(OP, V4, { users: [userParams({ userEmail: "dup@example.com" })] }, { as: other }), createUsersV4);
  });

  it("a batch whose second user is refused (409 duplicate key, 400 key off the curve) creates no user and records no activity", async () => {
    const count = async () => [
      (await h().query("list_users")).json.users.length,
      (await h().query("list_activities", { paginationOptions: { limit: "100" } })).json.activities.length,
    ];
    const before = await count();
    const k = key();
    conflict(
      await h().submit(OP, V4, { users: [userParams({ apiKeys: [k] }), userParams({ apiKeys: [k] })] }),
      /public key already exists/,
    );
    const offCurve = key({ publicKey: "02" + "ff".repeat(32) });
    invalidRequest(
      await h().submit(OP, V4, { users: [userParams({ userEmail: "good@example.com" }), userParams({ apiKeys: [offCurve] })] }),
      /users\[1\]\.apiKeys\[0\]\.publicKey: public key is not a valid point/,
    );
    assert.deepEqual(await count(), before);
  });
});

perEngine("create_users with passkeys", (h) => {
  it("creates users with OAuth providers: every token verified (no nonce), identities stored and shown; a bad token or a taken identity creates nobody", async () => {
    const sub = `x:${crypto.randomUUID()}`;
    const token = await sigilToken(h(), { sub, aud: "users-app" });
    const res = await h().submit(OP, V4, {
      users: [userParams({ userName: "oauth-user", oauthProviders: [{ providerName: "X", oidcToken: token }] })],
    });
    const [userId] = completed(res, createUsersV4).userIds;
    const user = (await h().query("get_user", { userId })).json.user as Json;
    assert.deepEqual(
      (user.oauthProviders as Json[]).map((p) => [p.providerName, p.issuer, p.audience, p.subject]),
      [["X", DEFAULT_OAUTH_SETTINGS.publicUrl, "users-app", sub]],
    );
    const before = (await h().service.store.db.selectFrom("users").select("id").execute()).length;
    failsWith(
      await h().submit(OP, V4, {
        users: [
          userParams({ userName: "a" }),
          userParams({ userName: "b", oauthProviders: [{ providerName: "X", oidcToken: await sigilToken(h(), { ttl: -600 }) }] }),
        ],
      }),
      400,
      3,
      "INVALID_OIDC_TOKEN",
      /expired/,
      ["parameters.users[1].oauthProviders[0].oidcToken"],
    );
    failsWith(
      await h().submit(OP, V4, {
        users: [userParams({ userName: "c" }), userParams({ userName: "d", oauthProviders: [{ providerName: "X", oidcToken: token }] })],
      }),
      409,
      6,
      "OAUTH_PROVIDER_ALREADY_EXISTS",
      /already attached/,
    );
    assert.equal((await h().service.store.db.selectFrom("users").select("id").execute()).length, before);
  });

  it("a 2-of-2 organization: the OAuth provider's token is verified again at the approval, which creates the user with it", async () => {
    const { a, b } = await twoOfTwo(h());
    const sub = `x:${crypto.randomUUID()}`;
    const res = await h().submit(
      OP,
      V4,
      { users: [userParams({ userName: "later", oauthProviders: [{ providerName: "X", oidcToken: await sigilToken(h(), { sub }) }] })] },
      { as: a },
    );
    assert.equal(res.json.activity?.status, "ACTIVITY_STATUS_CONSENSUS_NEEDED", JSON.stringify(res.json));
    const approved = await h().submit(
      "approve_activity",
      "ACTIVITY_TYPE_APPROVE_ACTIVITY",
      { fingerprint: res.json.activity.fingerprint },
      { as: b },
    );
    const [userId] = completed(approved, createUsersV4).userIds;
    const rows = await h()
      .service.store.db.selectFrom("oauth_providers")
      .select(["user_id", "subject"])
      .where("subject", "=", sub)
      .execute();
    assert.deepEqual(rows, [{ user_id: userId, subject: sub }]);
  });

  it("creates a user whose passkey is stored with it and signs as it", async () => {
    const pk = new SoftPasskey();
    const res = await h().submit(OP, V4, {
      users: [userParams({ userName: "with passkey", authenticators: [pk.registration({ name: "laptop" })] })],
    });
    const [userId] = completed(res, createUsersV4).userIds;
    const user = (await h().query("get_user", { userId })).json.user as Json;
    assert.deepEqual(
      user.authenticators.map((a: Json) => [a.authenticatorName, a.credentialId]),
      [["laptop", pk.id]],
    );
    const who = await queryWithPasskey(h(), pk, "whoami", { organizationId: h().root.organizationId });
    assert.equal(who.json.userId, userId);
  });

  it("a passkey already registered in the organization refuses the whole request (409)", async () => {
    const pk = new SoftPasskey();
    completed(await h().submit(OP, V4, { users: [userParams({ authenticators: [pk.registration()] })] }), createUsersV4);
    const before = (await h().query("list_users")).json.users.length;
    conflict(await h().submit(OP, V4, { users: [userParams(), userParams({ authenticators: [pk.registration()] })] }), /already exists/);
    assert.equal((await h().query("list_users")).json.users.length, before);
  });
});
