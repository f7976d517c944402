// create_read_only_session (docs/sessions-and-network.md §7.2): a token sent as X-Session that
// reads and never writes.
import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, onSqlite, perEngine, type Harness, type Json } from "../helpers/inproc.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { createReadOnlySession } from "../../src/activities/sessions/create_read_only_session.ts";
import { stampLogin } from "../../src/activities/sessions/stamp_login.ts";

const OP = "create_read_only_session";
const TYPE = "ACTIVITY_TYPE_CREATE_READ_ONLY_SESSION";

async function readOnly(h: Harness): Promise<Json> {
  return completed(await h.submit(OP, TYPE, {}), createReadOnlySession);
}

const withSession = (h: Harness, path: string, body: Json, token: string) =>
  h.post(path, JSON.stringify({ organizationId: h.root.organizationId, ...body }), {
    "content-type": "application/json",
    "X-Session": token,
  });

async function activityCount(h: Harness): Promise<number> {
  return ((await h.query("list_activities", { paginationOptions: { limit: "100" } })).json.activities as Json[]).length;
}

onSqlite("create_read_only_session", (h) => {
  it("returns the SDK's result fields and a token that expires in an hour", async () => {
    const r = await readOnly(h());
    assert.equal(r.organizationId, h().root.organizationId);
    assert.equal(r.userId, h().root.userId);
    assert.equal(r.username, "root");
    const now = Math.floor(Date.now() / 1000);
    assert.ok(Number(r.sessionExpiry) > now + 3590 && Number(r.sessionExpiry) <= now + 3601, r.sessionExpiry);
    const claims = JSON.parse(atob(r.session.split(".")[1])) as Json;
    assert.equal(claims.session_type, "SESSION_TYPE_READ_ONLY");
    assert.equal(claims.user_id, h().root.userId);
  });

  it("the token reads as its user (X-Session), and an activity sent with it is a 403 and nothing is recorded", async () => {
    const { session } = await readOnly(h());
    const who = await withSession(h(), "/public/v1/query/whoami", {}, session);
    assert.equal(who.status, 200, JSON.stringify(who.json));
    assert.equal(who.json.userId, h().root.userId);
    const users = await withSession(h(), "/public/v1/query/list_users", {}, session);
    assert.equal(users.status, 200);
    const before = await activityCount(h());
    const write = await withSession(
      h(),
      "/public/v1/submit/create_user_tag",
      { type: "ACTIVITY_TYPE_CREATE_USER_TAG", timestampMs: String(Date.now()), parameters: { userTagName: "ro", userIds: [] } },
      session,
    );
    assert.equal(write.status, 403, JSON.stringify(write.json));
    assert.match(write.json.message, /read-only session/);
    assert.equal(await activityCount(h()), before);
  });

  it("a tampered token, a login session JWT, and a token with a stamp are refused (401)", async () => {
    const { session } = await readOnly(h());
    const [head, payload, sig] = session.split(".");
    const forged = JSON.parse(atob(payload!)) as Json;
    forged.exp += 3600;
    const tampered = `${head}.${Buffer.from(JSON.stringify(forged)).toString("base64url")}.${sig}`;
    assert.equal((await withSession(h(), "/public/v1/query/whoami", {}, tampered)).status, 401);
    const login = completed(
      await h().submit("stamp_login", "ACTIVITY_TYPE_STAMP_LOGIN", { publicKey: generateP256KeyPair().publicKey }),
      stampLogin,
    );
    assert.equal((await withSession(h(), "/public/v1/query/whoami", {}, login.session)).status, 401);
    const two = await h().post("/public/v1/query/whoami", JSON.stringify({ organizationId: h().root.organizationId }), {
      "X-Session": session,
      "X-Stamp": "e30",
    });
    assert.equal(two.status, 401);
  });

  it("another root organization cannot be read with it", async () => {
    const { session } = await readOnly(h());
    const other = await h().newOrg("Other");
    const res = await h().post("/public/v1/query/list_users", JSON.stringify({ organizationId: other.organizationId }), {
      "X-Session": session,
    });
    assert.equal(res.status, 401);
  });
});

perEngine("create_read_only_session", (h) => {
  it("a parent's credential may not start it in a sub-organization (403)", async () => {
    const res = await h().submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
      subOrganizationName: "ro-sub",
      rootQuorumThreshold: 1,
      rootUsers: [{ userName: "u", apiKeys: [], authenticators: [], oauthProviders: [] }],
    });
    const sub = completed(res, "createSubOrganizationResultV8").subOrganizationId as string;
    assert.equal((await h().submit(OP, TYPE, {}, { organizationId: sub })).status, 403);
  });
});
