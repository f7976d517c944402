import { it } from "node:test";
import assert from "node:assert/strict";
import { failsWith, onSqlite } from "../helpers/inproc.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";

onSqlite("whoami", (h) => {
  it("answers the caller's user and organization, through the official SDK client", async () => {
    const who = await (await h().sdk()).getWhoami({});
    assert.equal(who.organizationId, h().root.organizationId);
    assert.equal(who.userId, h().root.userId);
    assert.equal(who.username, "root");
    assert.equal(who.organizationName, "Test Org");
  });

  it("a parent's credential in a sub-organization answers with the parent's user", async () => {
    const sub = await h().submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
      subOrganizationName: "child",
      rootQuorumThreshold: 1,
      rootUsers: [{ userName: "c", apiKeys: [], authenticators: [], oauthProviders: [] }],
    });
    const subId = sub.json.activity.result.createSubOrganizationResultV8.subOrganizationId;
    const res = await h().query("whoami", {}, { organizationId: subId });
    assert.equal(res.status, 200);
    assert.equal(res.json.organizationId, h().root.organizationId);
    assert.equal(res.json.userId, h().root.userId);
  });

  it("refuses a request without a stamp, with a bad stamp and with an unknown key", async () => {
    const body = JSON.stringify({ organizationId: h().root.organizationId });
    failsWith(await h().post("/public/v1/query/whoami", body), 401, 16, "SIGNATURE_MISSING");
    failsWith(await h().post("/public/v1/query/whoami", body, { "X-Stamp": "not-a-stamp" }), 401, 16, "UNAUTHENTICATED");
    const stranger = { ...h().root, key: generateP256KeyPair() };
    failsWith(await h().query("whoami", {}, { as: stranger }), 401, 16, "PUBLIC_KEY_NOT_FOUND", /could not find public key/);
  });

  it("an unknown organization is answered like an unknown key", async () => {
    failsWith(await h().query("whoami", {}, { organizationId: "00000000-0000-4000-8000-000000000000" }), 401, 16, "PUBLIC_KEY_NOT_FOUND");
  });
});
