// create_read_write_session V2 (docs/sessions-and-network.md §7.1): a session key made by the
// service, returned as a credential bundle that @turnkey/crypto's decryptCredentialBundle opens.
import { it } from "node:test";
import assert from "node:assert/strict";
import { decryptCredentialBundle, getPublicKey } from "@turnkey/crypto";
import { uint8ArrayToHexString } from "@turnkey/encoding";
import {
  completed,
  failsWith,
  forbidden,
  invalidRequest,
  notFound,
  onSqlite,
  perEngine,
  UUID,
  type Creds,
  type Harness,
  type Json,
} from "../helpers/inproc.ts";
import { generateP256KeyPair, type P256KeyPair } from "../../src/crypto/keygen.ts";
import { createReadWriteSessionV2 } from "../../src/activities/sessions/create_read_write_session.ts";
import { createSessionProfile } from "../../src/activities/sessions/create_session_profile.ts";
import { stampLogin } from "../../src/activities/sessions/stamp_login.ts";
import { subOrganization } from "../helpers/sub-organizations.ts";

const OP = "create_read_write_session";
const TYPE = "ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2";

/** Submits it with a fresh target key; returns the result and the decrypted session key as Creds. */
async function rwSession(
  h: Harness,
  params: Json = {},
  as: Creds = h.root,
  organizationId?: string,
): Promise<{ r: Json; creds: Creds; target: P256KeyPair }> {
  const target = generateP256KeyPair();
  const res = await h.submit(
    OP,
    TYPE,
    { targetPublicKey: target.publicKey, ...params },
    { as, ...(organizationId ? { organizationId } : {}) },
  );
  const r = completed(res, createReadWriteSessionV2);
  const privateKey = decryptCredentialBundle(r.credentialBundle, target.privateKey);
  const publicKey = uint8ArrayToHexString(getPublicKey(privateKey, true));
  return { r, creds: { organizationId: r.organizationId, userId: r.userId, key: { publicKey, privateKey } }, target };
}

async function keyOf(h: Harness, userId: string, publicKey: string, as: Creds = h.root): Promise<Json | undefined> {
  const keys = (await h.query("get_api_keys", { userId }, { as })).json.apiKeys as Json[];
  return keys.find((k) => k.credential.publicKey === publicKey);
}

onSqlite("create_read_write_session", (h) => {
  it("returns a bundle decryptCredentialBundle opens to the private key of a new session key that stamps requests", async () => {
    const { r, creds } = await rwSession(h(), { expirationSeconds: "600" });
    assert.equal(r.organizationId, h().root.organizationId);
    assert.equal(r.userId, h().root.userId);
    assert.equal(r.username, "root");
    assert.match(r.apiKeyId, UUID);
    const key = await keyOf(h(), h().root.userId, creds.key.publicKey);
    assert.ok(key, "the decrypted key's public key is the registered session key");
    assert.equal(key.apiKeyId, r.apiKeyId);
    assert.equal(key.credential.type, "CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256");
    assert.equal(key.expirationSeconds, "600");
    assert.match(key.apiKeyName, /^Read Write Session - /);
    const whoami = await h().query("whoami", {}, { as: creds });
    assert.equal(whoami.status, 200);
    assert.equal(whoami.json.userId, h().root.userId);
  });

  it("a bundle opens only with the target key", async () => {
    const { r } = await rwSession(h());
    assert.throws(() => decryptCredentialBundle(r.credentialBundle, generateP256KeyPair().privateKey));
  });

  it("apiKeyName names the key; invalidateExisting revokes the earlier read-write sessions only", async () => {
    const login = generateP256KeyPair();
    completed(await h().submit("stamp_login", "ACTIVITY_TYPE_STAMP_LOGIN", { publicKey: login.publicKey }), stampLogin);
    const first = await rwSession(h(), { apiKeyName: "first" });
    assert.equal((await keyOf(h(), h().root.userId, first.creds.key.publicKey))?.apiKeyName, "first");
    const second = await rwSession(h(), { invalidateExisting: true });
    assert.equal(await keyOf(h(), h().root.userId, first.creds.key.publicKey), undefined);
    assert.ok(await keyOf(h(), h().root.userId, second.creds.key.publicKey));
    assert.ok(await keyOf(h(), h().root.userId, login.publicKey), "a login session is not a read-write session");
  });

  for (const [what, params, field] of [
    ["a missing targetPublicKey", {}, "parameters.targetPublicKey"],
    ["a targetPublicKey off the curve", { targetPublicKey: "04" + "00".repeat(64) }, "parameters.targetPublicKey"],
    ["a malformed userId", { targetPublicKey: generateP256KeyPair().publicKey, userId: "x" }, "parameters.userId"],
    ["expirationSeconds 0", { targetPublicKey: generateP256KeyPair().publicKey, expirationSeconds: "0" }, "parameters.expirationSeconds"],
  ] as const) {
    it(`refuses ${what} (400), no key made`, async () => {
      const before = ((await h().query("get_api_keys", { userId: h().root.userId })).json.apiKeys as Json[]).length;
      invalidRequest(await h().submit(OP, TYPE, params), undefined, [field]);
      assert.equal(((await h().query("get_api_keys", { userId: h().root.userId })).json.apiKeys as Json[]).length, before);
    });
  }

  it("userId: another user of the organization, as policies allow; a user of another organization is not found", async () => {
    const res = await h().submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V3", {
      users: [{ userName: "other", apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    const other = completed(res, "createUsersResult").userIds[0] as string;
    const { r } = await rwSession(h(), { userId: other });
    assert.equal(r.userId, other);
    assert.equal(r.username, "other");
    const sub = await subOrganization(h());
    notFound(await h().submit(OP, TYPE, { targetPublicKey: generateP256KeyPair().publicKey, userId: sub.userId }), /no user/);
  });

  it("a parent's credential may start it in a sub-organization: the session is the parent user's own", async () => {
    const sub = await subOrganization(h());
    const { r, creds } = await rwSession(h(), {}, h().root, sub.organizationId);
    assert.deepEqual([r.organizationId, r.userId], [h().root.organizationId, h().root.userId]);
    assert.ok(await keyOf(h(), h().root.userId, creds.key.publicKey));
    // Never a session for the sub-organization's user.
    notFound(
      await h().submit(
        OP,
        TYPE,
        { targetPublicKey: generateP256KeyPair().publicKey, userId: sub.userId },
        { organizationId: sub.organizationId },
      ),
      /no user/,
    );
  });

  it("made by a profiled session, the new session keeps the profile (and its scope)", async () => {
    const profileId = completed(
      await h().submit("create_session_profile", "ACTIVITY_TYPE_CREATE_SESSION_PROFILE", {
        sessionProfileName: "rw only",
        scope: "activity.kind == 'CREATE_READ_WRITE_SESSION'",
      }),
      createSessionProfile,
    ).sessionProfileId;
    const login = generateP256KeyPair();
    completed(
      await h().submit("stamp_login", "ACTIVITY_TYPE_STAMP_LOGIN", { publicKey: login.publicKey, sessionProfileId: profileId }),
      stampLogin,
    );
    const scoped: Creds = { ...h().root, key: login };
    const { creds } = await rwSession(h(), {}, scoped);
    assert.equal((await keyOf(h(), h().root.userId, creds.key.publicKey))?.credential.sessionProfileId, profileId);
    forbidden(
      await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "t", userIds: [] }, { as: creds }),
      /session's scope/,
    );
  });
});

perEngine("create_read_write_session", (h) => {
  it("a session for a user who does not exist is 404 and nothing is written", async () => {
    failsWith(
      await h().submit(OP, TYPE, { targetPublicKey: generateP256KeyPair().publicKey, userId: "00000000-0000-4000-8000-000000000000" }),
      404,
      5,
      "REQUEST_INVALID",
      /no user/,
    );
  });
});
