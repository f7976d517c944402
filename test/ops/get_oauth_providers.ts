// get_oauth_providers (docs/oauth.md §6.2): a user's providers, or the organization's without userId.
import { it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, completed, notFound, perEngine, type Creds, type Harness, type Json } from "../helpers/inproc.ts";
import { sigilToken } from "../helpers/oidc-tokens.ts";
import { newId } from "../../src/store/util.ts";
import { createOauthProvidersV2 } from "../../src/activities/oauth/create_oauth_providers.ts";

async function attach(h: Harness, as: Creds, userId: string, sub: string, aud: string): Promise<string> {
  const res = await h.submit(
    "create_oauth_providers",
    "ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2",
    {
      userId,
      oauthProviders: [{ providerName: `p-${aud}`, oidcToken: await sigilToken(h, { sub, aud }) }],
    },
    { as },
  );
  return completed(res, createOauthProvidersV2).providerIds[0]!;
}

perEngine("get_oauth_providers", (h) => {
  it("a user's providers, oldest first, through the official SDK; without userId the organization's", async () => {
    const org = await h().newOrg("providers-org");
    const [a, b] = await addUsersWithKeys(h(), 2, org);
    const sub = `x:${newId()}`;
    const p1 = await attach(h(), org, a!.userId, sub, "one");
    const p2 = await attach(h(), org, a!.userId, sub, "two");
    const p3 = await attach(h(), org, b!.userId, `x:${newId()}`, "three");
    const sdk = await h().sdk(org);
    const mine = await sdk.getOauthProviders({ organizationId: org.organizationId, userId: a!.userId });
    assert.deepEqual(
      mine.oauthProviders.map((p) => [p.providerId, p.providerName, p.audience, p.subject]),
      [
        [p1, "p-one", "one", sub],
        [p2, "p-two", "two", sub],
      ],
    );
    const all = await h().query("get_oauth_providers", {}, { as: org });
    assert.deepEqual((all.json.oauthProviders as Json[]).map((p) => p.providerId).sort(), [p1, p2, p3].sort());
    // list_users carries them too (one extra query per page).
    const users = await h().query("list_users", {}, { as: org });
    const byId = new Map((users.json.users as Json[]).map((u) => [u.userId, u.oauthProviders.length]));
    assert.equal(byId.get(a!.userId), 2);
    assert.equal(byId.get(b!.userId), 1);
  });

  it("a user of another organization is 404; an organization without providers lists none", async () => {
    const org = await h().newOrg("providers-empty");
    notFound(await h().query("get_oauth_providers", { userId: h().root.userId }, { as: org }), /no user/);
    const none = await h().query("get_oauth_providers", {}, { as: org });
    assert.deepEqual(none.json, { oauthProviders: [] });
  });
});
