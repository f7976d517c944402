// oauth (docs/logins.md §9.6): the legacy OIDC login. A token whose nonce commits to the
// target key logs in the user holding its identity and returns a credential bundle that
// @turnkey/crypto opens; a nonce over another key, or an identity nobody holds, is refused.
import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, failsWith, notFound, perEngine, type Harness } from "../helpers/inproc.ts";
import { nonceOf, sigilToken } from "../helpers/oidc-tokens.ts";
import { openBundle, targetKey } from "../helpers/credential-bundles.ts";
import { newId } from "../../src/store/util.ts";
import { oauth } from "../../src/activities/oauth/oauth.ts";

const OP = "oauth";
const TYPE = "ACTIVITY_TYPE_OAUTH";

/** A sub-organization of the root whose root user signs in with `token`'s identity. */
async function oauthSubOrg(h: Harness, token: string): Promise<{ orgId: string; userId: string }> {
  const res = await h.submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
    subOrganizationName: `oauth-${newId().slice(0, 8)}`,
    rootQuorumThreshold: 1,
    rootUsers: [{ userName: "oauth", apiKeys: [], authenticators: [], oauthProviders: [{ providerName: "google", oidcToken: token }] }],
  });
  const r = completed(res, "createSubOrganizationResultV8");
  return { orgId: r.subOrganizationId, userId: r.rootUserIds[0] };
}

perEngine("oauth", (h) => {
  it("the parent's backend trades the token for a credential bundle; it opens with @turnkey/crypto and stamps whoami", async () => {
    const sub = `x:${newId()}`;
    const user = await oauthSubOrg(h(), await sigilToken(h(), { sub }));
    const target = targetKey();
    const token = await sigilToken(h(), { sub, nonce: nonceOf(target.publicKey) });
    // The parent's id as target: the holder is found below it, as for oauth_login.
    const res = await h().submit(OP, TYPE, { oidcToken: token, targetPublicKey: target.publicKey, apiKeyName: "legacy oauth" });
    const r = completed(res, oauth);
    assert.equal(r.userId, user.userId);
    const credential = openBundle(r.credentialBundle, target);
    const who = await h().query("whoami", {}, { as: { organizationId: user.orgId, userId: user.userId, key: credential } });
    assert.equal(who.status, 200, JSON.stringify(who.json));
    assert.equal(who.json.userId, user.userId);
    const key = await h().service.store.db.selectFrom("api_keys").selectAll().where("id", "=", r.apiKeyId).executeTakeFirstOrThrow();
    assert.equal(key.name, "legacy oauth");
    assert.equal(key.public_key, credential.publicKey);
    // Another target key cannot open it.
    assert.throws(() => openBundle(r.credentialBundle, targetKey()));
  });

  it("a nonce over another key, a missing nonce, or an identity nobody holds is refused; nothing issued", async () => {
    const sub = `x:${newId()}`;
    const user = await oauthSubOrg(h(), await sigilToken(h(), { sub }));
    const target = targetKey();
    failsWith(
      await h().submit(OP, TYPE, {
        oidcToken: await sigilToken(h(), { sub, nonce: nonceOf(targetKey().publicKey) }),
        targetPublicKey: target.publicKey,
      }),
      400,
      3,
      "INVALID_OIDC_TOKEN",
      /targetPublicKey/,
    );
    failsWith(
      await h().submit(OP, TYPE, { oidcToken: await sigilToken(h(), { sub }), targetPublicKey: target.publicKey }),
      400,
      3,
      "INVALID_OIDC_TOKEN",
      /nonce/,
    );
    notFound(
      await h().submit(OP, TYPE, {
        oidcToken: await sigilToken(h(), { sub: `x:${newId()}`, nonce: nonceOf(target.publicKey) }),
        targetPublicKey: target.publicKey,
      }),
      /no user with this OAuth identity/,
    );
    const keys = await h().service.store.db.selectFrom("api_keys").select("id").where("user_id", "=", user.userId).execute();
    assert.equal(keys.length, 0);
  });
});
