import { it } from "node:test";
import assert from "node:assert/strict";
import { failsWith, invalidRequest, notFound, onSqlite, UUID } from "../helpers/inproc.ts";

onSqlite("get_user", (h) => {
  it("answers the user with its API keys, tags and timestamps", async () => {
    const { user } = (await h().query("get_user", { userId: h().root.userId })).json;
    assert.equal(user.userId, h().root.userId);
    assert.equal(user.userName, "root");
    assert.equal(user.apiKeys.length, 1);
    assert.equal(user.apiKeys[0].credential.publicKey, h().root.key.publicKey);
    assert.match(user.apiKeys[0].apiKeyId, UUID);
    assert.deepEqual(user.authenticators, []);
    assert.deepEqual(user.userTags, []);
    assert.match(user.createdAt.seconds, /^\d+$/);
  });

  it("an unknown user, or another organization's, is 404; a malformed or missing id is 400", async () => {
    notFound(await h().query("get_user", { userId: "00000000-0000-4000-8000-000000000000" }), /no user/);
    notFound(await h().query("get_user", { userId: h().root.userId }, { as: await h().newOrg() }));
    invalidRequest(await h().query("get_user", { userId: "root" }), /user id/, ["userId"]);
    invalidRequest(await h().query("get_user", {}), /must be set/, ["userId"]);
  });

  it("a malformed organizationId is 400 naming it; an unknown one is 401 like an unknown key", async () => {
    invalidRequest(await h().query("get_user", { userId: h().root.userId }, { organizationId: "not-a-uuid" }), /organizationId/, [
      "organizationId",
    ]);
    failsWith(
      await h().query("get_user", { userId: h().root.userId }, { organizationId: "00000000-0000-4000-8000-000000000000" }),
      401,
      16,
      "PUBLIC_KEY_NOT_FOUND",
    );
  });
});
