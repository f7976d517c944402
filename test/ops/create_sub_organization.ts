import { it } from "node:test";
import assert from "node:assert/strict";
import { assertIdempotent, completed, conflict, forbidden, invalidRequest, onSqlite, precondition, publicKey, UUID, type Creds, type Json } from "../helpers/inproc.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";

const OP = "create_sub_organization";
const V8 = "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8";
const rootUser = (over: Json = {}) => ({ userName: "r", apiKeys: [], authenticators: [], oauthProviders: [], ...over });
const params = (over: Json = {}) => ({ subOrganizationName: "sub", rootQuorumThreshold: 1, rootUsers: [rootUser()], ...over });

onSqlite("create_sub_organization", (h) => {
  it("creates a sub-organization whose root users can act in it", async () => {
    const key = generateP256KeyPair();
    const res = await h().submit(OP, V8, params({
      rootQuorumThreshold: 2,
      disableEmailAuth: true,
      rootUsers: [
        rootUser({ userName: "alice", userEmail: "a@example.com", apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }] }),
        rootUser({ userName: "bob" }),
      ],
    }));
    const { subOrganizationId, rootUserIds } = completed(res, "createSubOrganizationResultV8");
    assert.match(subOrganizationId, UUID);
    assert.equal(rootUserIds.length, 2);
    assert.equal(res.json.activity.organizationId, h().root.organizationId);
    const alice: Creds = { organizationId: subOrganizationId, userId: rootUserIds[0], key };
    const who = await h().query("whoami", {}, { as: alice });
    assert.deepEqual(who.json, { organizationId: subOrganizationId, organizationName: "sub", userId: rootUserIds[0], username: "alice" });
    const listed = await h().query("list_suborgs");
    assert.ok(listed.json.organizationIds.includes(subOrganizationId));
  });

  it("V7 (older clients) answers with its own intent and result names", async () => {
    const res = await h().submit(OP, "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7", params());
    completed(res, "createSubOrganizationResultV7");
    assert.ok(res.json.activity.intent.createSubOrganizationIntentV7);
  });

  it("the same body twice is one sub-organization", async () => {
    const before = (await h().query("list_suborgs", { paginationOptions: { limit: "100" } })).json.organizationIds.length;
    await assertIdempotent(h(), OP, V8, params({ subOrganizationName: "idem" }));
    assert.equal((await h().query("list_suborgs", { paginationOptions: { limit: "100" } })).json.organizationIds.length, before + 1);
  });

  const refused: [string, Json, RegExp, string][] = [
    ["a blank name", params({ subOrganizationName: " " }), /subOrganizationName/, "parameters.subOrganizationName"],
    ["no root users", params({ rootUsers: [] }), /rootUsers must hold 1 to 100/, "parameters.rootUsers"],
    ["a zero threshold", params({ rootQuorumThreshold: 0 }), /positive integer/, "parameters.rootQuorumThreshold"],
    ["a fractional threshold", params({ rootQuorumThreshold: 1.5 }), /positive integer/, "parameters.rootQuorumThreshold"],
    ["a threshold above the root users", params({ rootQuorumThreshold: 2 }), /must not exceed/, "parameters.rootQuorumThreshold"],
    ["a wallet", params({ wallet: { walletName: "w" } }), /not supported/, "parameters.wallet"],
    ["a verification token", params({ verificationToken: "t" }), /not supported/, "parameters.verificationToken"],
    ["a client signature", params({ clientSignature: {} }), /not supported/, "parameters.clientSignature"],
    ["a passkey", params({ rootUsers: [rootUser({ authenticators: [{}] })] }), /not supported/, "parameters.rootUsers[0].authenticators"],
    ["a non-boolean setting", params({ disableSmsAuth: "yes" }), /boolean/i, "parameters.disableSmsAuth"],
    ["a bad root user email", params({ rootUsers: [rootUser({ userEmail: "@" })] }), /valid email/, "parameters.rootUsers[0].userEmail"],
  ];
  for (const [what, p, message, field] of refused) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().submit(OP, V8, p), message, [field]);
    });
  }

  it("refuses two root users with one email (409) and creates nothing", async () => {
    const before = (await h().query("list_suborgs", { paginationOptions: { limit: "100" } })).json.organizationIds.length;
    conflict(await h().submit(OP, V8, params({ rootUsers: [rootUser({ userEmail: "s@example.com" }), rootUser({ userEmail: "S@example.com" })] })));
    assert.equal((await h().query("list_suborgs", { paginationOptions: { limit: "100" } })).json.organizationIds.length, before);
  });

  it("nests at most 8 levels (400, FAILED_PRECONDITION)", async () => {
    let parent: Creds = h().root;
    for (let depth = 1; depth < 8; depth++) {
      const key = generateP256KeyPair();
      const res = await h().submit(OP, V8, params({ rootUsers: [rootUser({ apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }] })] }), { as: parent });
      const r = completed(res, "createSubOrganizationResultV8");
      parent = { organizationId: r.subOrganizationId, userId: r.rootUserIds[0], key };
    }
    precondition(await h().submit(OP, V8, params({ rootUsers: [rootUser({ apiKeys: [{ apiKeyName: "k", publicKey: publicKey(), curveType: "API_KEY_CURVE_P256" }] })] }), { as: parent }), /at most 8 levels/);
  });

  it("a parent's credential cannot create an organization inside its sub-organization (403)", async () => {
    const { subOrganizationId } = completed(await h().submit(OP, V8, params()), "createSubOrganizationResultV8");
    forbidden(await h().submit(OP, V8, params(), { organizationId: subOrganizationId }));
  });
});
