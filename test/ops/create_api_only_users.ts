import { it } from "node:test";
import assert from "node:assert/strict";
import {
  addUsersWithKeys,
  assertIdempotent,
  completed,
  conflict,
  forbidden,
  invalidRequest,
  onSqlite,
  perEngine,
  publicKey,
  UUID,
  type Json,
} from "../helpers/inproc.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { createApiOnlyUsers } from "../../src/activities/users/create_api_only_users.ts";
import { createUserTag } from "../../src/activities/users/create_user_tag.ts";

const OP = "create_api_only_users";
const TYPE = "ACTIVITY_TYPE_CREATE_API_ONLY_USERS";
/** SDK type `apiApiKeyParams`: no curveType (P-256). */
const key = (over: Json = {}) => ({ apiKeyName: "k", publicKey: publicKey(), ...over });
const apiOnly = (over: Json = {}): Json => ({ userName: `bot-${crypto.randomUUID().slice(0, 8)}`, userTags: [], apiKeys: [], ...over });

onSqlite(OP, (h) => {
  it("creates users with P-256 keys, email and tags; get_user shows them, with no passkeys or providers; the key stamps requests", async () => {
    const tag = completed(
      await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "bots", userIds: [] }),
      createUserTag,
    );
    const pair = generateP256KeyPair();
    const res = await h().submit(OP, TYPE, {
      apiOnlyUsers: [
        apiOnly({
          userName: "ci-bot",
          userEmail: "CI@Example.com",
          userTags: [tag.userTagId],
          apiKeys: [key({ publicKey: pair.publicKey, expirationSeconds: "3600" })],
        }),
        apiOnly({ userName: "no-keys" }),
      ],
    });
    const { userIds } = completed(res, createApiOnlyUsers);
    assert.equal(userIds.length, 2);
    for (const id of userIds) assert.match(id, UUID);
    assert.equal(res.json.activity.type, TYPE);
    assert.equal(res.json.activity.intent.createApiOnlyUsersIntent.apiOnlyUsers[0].userName, "ci-bot");
    assert.deepEqual(res.json.activity.result.createApiOnlyUsersResult.userIds, userIds);

    const { user } = (await h().query("get_user", { userId: userIds[0] })).json;
    assert.equal(user.userName, "ci-bot");
    assert.equal(user.userEmail, "CI@Example.com");
    assert.deepEqual(user.userTags, [tag.userTagId]);
    assert.deepEqual([user.authenticators, user.oauthProviders], [[], []]);
    assert.equal(user.apiKeys.length, 1);
    assert.deepEqual(
      [user.apiKeys[0].credential.publicKey, user.apiKeys[0].credential.type, user.apiKeys[0].expirationSeconds],
      [pair.publicKey, "CREDENTIAL_TYPE_API_KEY_P256", "3600"],
    );
    const whoami = await h().query("whoami", {}, { as: { organizationId: h().root.organizationId, userId: userIds[0]!, key: pair } });
    assert.equal(whoami.status, 200);
    assert.equal(whoami.json.userId, userIds[0]);
  });

  it("fields the SDK type does not have (authenticators, oauthProviders, curveType) are dropped, not applied", async () => {
    const res = await h().submit(OP, TYPE, {
      apiOnlyUsers: [
        apiOnly({
          authenticators: [{ authenticatorName: "x" }],
          oauthProviders: [{ providerName: "p", oidcToken: "t" }],
          apiKeys: [key({ curveType: "API_KEY_CURVE_ED25519" })],
        }),
      ],
    });
    const [userId] = completed(res, createApiOnlyUsers).userIds;
    assert.deepEqual(Object.keys(res.json.activity.intent.createApiOnlyUsersIntent.apiOnlyUsers[0]).sort(), [
      "apiKeys",
      "userName",
      "userTags",
    ]);
    const { user } = (await h().query("get_user", { userId })).json;
    assert.equal(user.apiKeys[0].credential.type, "CREDENTIAL_TYPE_API_KEY_P256");
  });

  it("the same body twice is one activity", async () => {
    await assertIdempotent(h(), OP, TYPE, { apiOnlyUsers: [apiOnly({ userName: "idem" })] });
  });

  const refused: [string, Json, RegExp | undefined, string][] = [
    ["no users", { apiOnlyUsers: [] }, /apiOnlyUsers must hold 1 to 100/, "parameters.apiOnlyUsers"],
    ["more than 100 users", { apiOnlyUsers: Array.from({ length: 101 }, () => apiOnly()) }, /1 to 100/, "parameters.apiOnlyUsers"],
    ["a missing userTags", { apiOnlyUsers: [{ userName: "x", apiKeys: [] }] }, /must be set/, "parameters.apiOnlyUsers[0].userTags"],
    ["a missing apiKeys", { apiOnlyUsers: [{ userName: "x", userTags: [] }] }, /must be set/, "parameters.apiOnlyUsers[0].apiKeys"],
    ["a blank userName", { apiOnlyUsers: [apiOnly({ userName: " " })] }, /userName/, "parameters.apiOnlyUsers[0].userName"],
    ["a bad email", { apiOnlyUsers: [apiOnly({ userEmail: "nope" })] }, /valid email/, "parameters.apiOnlyUsers[0].userEmail"],
    [
      "more than 10 keys",
      { apiOnlyUsers: [apiOnly({ apiKeys: Array.from({ length: 11 }, () => key()) })] },
      /at most 10/,
      "parameters.apiOnlyUsers[0].apiKeys",
    ],
    [
      "a public key off the curve",
      { apiOnlyUsers: [apiOnly({ apiKeys: [key({ publicKey: "04" + "11".repeat(64) })] })] },
      /not a valid point/,
      "parameters.apiOnlyUsers[0].apiKeys[0].publicKey",
    ],
    [
      "a zero expiration",
      { apiOnlyUsers: [apiOnly({ apiKeys: [key({ expirationSeconds: "0" })] })] },
      /expiration/,
      "parameters.apiOnlyUsers[0].apiKeys[0].expirationSeconds",
    ],
    [
      "an unknown user tag",
      { apiOnlyUsers: [apiOnly({ userTags: ["00000000-0000-4000-8000-000000000000"] })] },
      /no user tag/,
      "parameters.apiOnlyUsers[0].userTags",
    ],
  ];
  for (const [what, params, message, field] of refused) {
    it(`refuses ${what} (400, naming the field)`, async () => {
      invalidRequest(await h().submit(OP, TYPE, params), message, [field]);
    });
  }

  it("policies govern it as USER / CREATE / CREATE_API_ONLY_USERS: a non-root user needs a policy", async () => {
    const org = await h().newOrg("api-only policy");
    const [member] = await addUsersWithKeys(h(), 1, org);
    forbidden(await h().submit(OP, TYPE, { apiOnlyUsers: [apiOnly()] }, { as: member }));
    completed(
      await h().submit(
        "create_policy",
        "ACTIVITY_TYPE_CREATE_POLICY_V3",
        {
          policyName: "api-only users",
          effect: "EFFECT_ALLOW",
          condition: "activity.resource == 'USER' && activity.action == 'CREATE' && activity.kind == 'CREATE_API_ONLY_USERS'",
          consensus: "",
          notes: "",
        },
        { as: org },
      ),
      "createPolicyResult",
    );
    completed(await h().submit(OP, TYPE, { apiOnlyUsers: [apiOnly()] }, { as: member }), createApiOnlyUsers);
    // The policy names this kind only: create_users stays refused.
    forbidden(
      await h().submit(
        "create_users",
        "ACTIVITY_TYPE_CREATE_USERS_V4",
        { users: [{ userName: "x", apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }] },
        { as: member },
      ),
    );
  });
});

perEngine(`${OP} uniqueness and atomicity`, (h) => {
  it("a key already in the organization (409) or an email taken (409) creates nobody and records nothing", async () => {
    const count = async () => [
      (await h().query("list_users")).json.users.length,
      (await h().query("list_activities", { paginationOptions: { limit: "100" } })).json.activities.length,
    ];
    const before = await count();
    conflict(
      await h().submit(OP, TYPE, { apiOnlyUsers: [apiOnly(), apiOnly({ apiKeys: [key({ publicKey: h().root.key.publicKey })] })] }),
      /public key already exists/,
    );
    completed(await h().submit(OP, TYPE, { apiOnlyUsers: [apiOnly({ userEmail: "bot@example.com" })] }), createApiOnlyUsers);
    const afterOne = await count();
    assert.deepEqual(afterOne, [before[0]! + 1, before[1]! + 1]);
    conflict(await h().submit(OP, TYPE, { apiOnlyUsers: [apiOnly({ userEmail: "BOT@example.com" })] }), /email already exists/);
    assert.deepEqual(await count(), afterOne);
  });
});
