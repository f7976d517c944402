// delete_oauth_providers (docs/oauth.md §6.2): detach identities from a user; all or nothing.
import { it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, completed, notFound, invalidRequest, perEngine, type Harness } from "../helpers/inproc.ts";
import { nonceOf, sigilToken } from "../helpers/oidc-tokens.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { newId } from "../../src/store/util.ts";
import { createOauthProvidersV2 } from "../../src/activities/oauth/create_oauth_providers.ts";
import { deleteUsers } from "../../src/activities/users/delete_users.ts";

const TYPE = "ACTIVITY_TYPE_DELETE_OAUTH_PROVIDERS";

async function attach(h: Harness, userId: string, sub: string): Promise<string> {
  const res = await h.submit("create_oauth_providers", "ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2", {
    userId,
    oauthProviders: [{ providerName: "x", oidcToken: await sigilToken(h, { sub, aud: "del" }) }],
  });
  return completed(res, createOauthProvidersV2).providerIds[0]!;
}

perEngine("delete_oauth_providers", (h) => {
  it("detaches through the official SDK; the identity no longer logs in and may be attached again", async () => {
    const [user, other] = await addUsersWithKeys(h(), 2);
    const sub = `x:${newId()}`;
    const id = await attach(h(), user!.userId, sub);
    const sdk = await h().sdk();
    const { providerIds } = await sdk.deleteOauthProviders({ userId: user!.userId, providerIds: [id] });
    assert.deepEqual(providerIds, [id]);
    const list = await h().query("get_oauth_providers", { userId: user!.userId });
    assert.deepEqual(list.json.oauthProviders, []);
    const key = generateP256KeyPair();
    notFound(
      await h().submit("oauth_login", "ACTIVITY_TYPE_OAUTH_LOGIN", {
        oidcToken: await sigilToken(h(), { sub, aud: "del", nonce: nonceOf(key.publicKey) }),
        publicKey: key.publicKey,
      }),
    );
    await attach(h(), other!.userId, sub);
  });

  it("an id that is not the user's (or unknown) is 404 and nothing is removed", async () => {
    const [a, b] = await addUsersWithKeys(h(), 2);
    const mine = await attach(h(), a!.userId, `x:${newId()}`);
    const theirs = await attach(h(), b!.userId, `x:${newId()}`);
    notFound(await h().submit("delete_oauth_providers", TYPE, { userId: a!.userId, providerIds: [mine, theirs] }), /no OAuth provider/);
    notFound(await h().submit("delete_oauth_providers", TYPE, { userId: newId(), providerIds: [mine] }), /no user/);
    invalidRequest(await h().submit("delete_oauth_providers", TYPE, { userId: a!.userId, providerIds: [] }));
    const rows = await h().service.store.db.selectFrom("oauth_providers").select("id").where("id", "in", [mine, theirs]).execute();
    assert.equal(rows.length, 2);
  });

  it("deleting a user removes its providers with it", async () => {
    const [user] = await addUsersWithKeys(h(), 1);
    const id = await attach(h(), user!.userId, `x:${newId()}`);
    completed(await h().submit("delete_users", "ACTIVITY_TYPE_DELETE_USERS", { userIds: [user!.userId] }), deleteUsers);
    const rows = await h().service.store.db.selectFrom("oauth_providers").select("id").where("id", "=", id).execute();
    assert.equal(rows.length, 0);
  });
});
