import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, invalidRequest, notFound, onSqlite, publicKey } from "../helpers/inproc.ts";

onSqlite("get_api_key", (h) => {
  it("answers one key with its credential, name and expiration", async () => {
    const pk = publicKey();
    const [apiKeyId] = completed(
      await h().submit("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", {
        userId: h().root.userId,
        apiKeys: [{ apiKeyName: "ci", publicKey: pk, curveType: "API_KEY_CURVE_P256", expirationSeconds: "600" }],
      }),
      "createApiKeysResult",
    ).apiKeyIds;
    const { apiKey } = (await h().query("get_api_key", { apiKeyId })).json;
    assert.equal(apiKey.apiKeyId, apiKeyId);
    assert.equal(apiKey.apiKeyName, "ci");
    assert.equal(apiKey.expirationSeconds, "600");
    assert.deepEqual(apiKey.credential, { publicKey: pk, type: "CREDENTIAL_TYPE_API_KEY_P256" });
  });

  it("an unknown key, or another organization's, is 404; a malformed id is 400", async () => {
    notFound(await h().query("get_api_key", { apiKeyId: "00000000-0000-4000-8000-000000000000" }), /no api key/);
    const mine = (await h().query("get_api_keys")).json.apiKeys[0].apiKeyId;
    notFound(await h().query("get_api_key", { apiKeyId: mine }, { as: await h().newOrg() }));
    invalidRequest(await h().query("get_api_key", { apiKeyId: "k" }), /api key id/, ["apiKeyId"]);
  });
});
