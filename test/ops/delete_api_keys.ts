import { it } from "node:test";
import assert from "node:assert/strict";
import {
  addUsersWithKeys,
  assertIdempotent,
  completed,
  failsWith,
  forbidden,
  invalidRequest,
  notFound,
  onSqlite,
  precondition,
  publicKey,
} from "../helpers/inproc.ts";
import { createAuthenticatorsV2 } from "../../src/activities/authenticators/create_authenticators.ts";
import { deleteApiKeys } from "../../src/activities/credentials/delete_api_keys.ts";
import { updateRootQuorum } from "../../src/activities/organizations/update_root_quorum.ts";
import { stampLogin } from "../../src/activities/sessions/stamp_login.ts";

const OP = "delete_api_keys";
const TYPE = "ACTIVITY_TYPE_DELETE_API_KEYS";
const MISSING = "00000000-0000-4000-8000-000000000000";

onSqlite("delete_api_keys", (h) => {
  const addKey = async (userId: string) =>
    completed(
      await h().submit("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", {
        userId,
        apiKeys: [{ apiKeyName: "x", publicKey: publicKey(), curveType: "API_KEY_CURVE_P256" }],
      }),
      "createApiKeysResult",
    ).apiKeyIds[0] as string;
  const keyIdsOf = async (userId: string) =>
    ((await h().query("get_api_keys", { userId })).json.apiKeys as { apiKeyId: string }[]).map((k) => k.apiKeyId);

  it("deletes a user's keys: the deleted credential stops working", async () => {
    const [u] = await addUsersWithKeys(h(), 1);
    const [own] = await keyIdsOf(u!.userId);
    const res = await h().submit(OP, TYPE, { userId: u!.userId, apiKeyIds: [own, own] });
    assert.deepEqual(completed(res, deleteApiKeys), { apiKeyIds: [own] });
    failsWith(await h().query("whoami", {}, { as: u }), 401, 16, "PUBLIC_KEY_NOT_FOUND");
  });

  it("the same body twice is one activity", async () => {
    await assertIdempotent(h(), OP, TYPE, { userId: h().root.userId, apiKeyIds: [await addKey(h().root.userId)] });
  });

  it("a non-root user may delete its own keys without a policy, not another user's (403)", async () => {
    const [a, b] = await addUsersWithKeys(h(), 2);
    completed(await h().submit(OP, TYPE, { userId: a!.userId, apiKeyIds: [await addKey(a!.userId)] }, { as: a }), deleteApiKeys);
    forbidden(await h().submit(OP, TYPE, { userId: b!.userId, apiKeyIds: await keyIdsOf(b!.userId) }, { as: a }));
  });

  it("refuses a root user's last key (400, FAILED_PRECONDITION), allows it while another remains", async () => {
    const root = h().root.userId;
    const keys = await keyIdsOf(root);
    precondition(await h().submit(OP, TYPE, { userId: root, apiKeyIds: keys }), /last lasting credential/);
    const extra = await addKey(root);
    completed(await h().submit(OP, TYPE, { userId: root, apiKeyIds: [extra] }), deleteApiKeys);
  });

  it("a session key is no lasting credential: a root user keeping only a session is refused; a passkey is one", async () => {
    const { SoftPasskey } = await import("../helpers/webauthn.ts");
    const [u] = await addUsersWithKeys(h(), 1);
    completed(
      await h().submit("update_root_quorum", "ACTIVITY_TYPE_UPDATE_ROOT_QUORUM", { threshold: 1, userIds: [h().root.userId, u!.userId] }),
      updateRootQuorum,
    );
    const own = await keyIdsOf(u!.userId);
    // A session for u (its key lives 15 minutes).
    const session = publicKey();
    completed(await h().submit("stamp_login", "ACTIVITY_TYPE_STAMP_LOGIN", { publicKey: session }, { as: u }), stampLogin);
    precondition(await h().submit(OP, TYPE, { userId: u!.userId, apiKeyIds: own }, { as: u }), /last lasting credential/);
    const pk = new SoftPasskey();
    completed(
      await h().submit(
        "create_authenticators",
        "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2",
        { userId: u!.userId, authenticators: [pk.registration()] },
        { as: u },
      ),
      createAuthenticatorsV2,
    );
    completed(await h().submit(OP, TYPE, { userId: u!.userId, apiKeyIds: own }, { as: u }), deleteApiKeys);
  });

  it("a key of another user, or an unknown key, is 404 and nothing is deleted", async () => {
    const [a, b] = await addUsersWithKeys(h(), 2);
    const [bKey] = await keyIdsOf(b!.userId);
    const aKey = await addKey(a!.userId);
    notFound(await h().submit(OP, TYPE, { userId: a!.userId, apiKeyIds: [aKey, bKey] }), /has no api key/);
    notFound(await h().submit(OP, TYPE, { userId: a!.userId, apiKeyIds: [MISSING] }));
    notFound(await h().submit(OP, TYPE, { userId: MISSING, apiKeyIds: [aKey] }), /no user/);
    assert.ok((await keyIdsOf(a!.userId)).includes(aKey));
  });

  for (const [what, apiKeyIds] of [
    ["no ids", []],
    ["more than 100 ids", Array.from({ length: 101 }, () => MISSING)],
  ] as const) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().submit(OP, TYPE, { userId: h().root.userId, apiKeyIds }), /apiKeyIds must hold 1 to 100/, [
        "parameters.apiKeyIds",
      ]);
    });
  }
});
