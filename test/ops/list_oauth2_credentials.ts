import { it } from "node:test";
import assert from "node:assert/strict";
import { invalidRequest, perEngine } from "../helpers/inproc.ts";
import { newCredential } from "../helpers/oauth-provider.ts";

const OP = "list_oauth2_credentials";

perEngine("list_oauth2_credentials", (h) => {
  it("an organization without credentials: an empty list", async () => {
    const org = await h().newOrg("no-creds");
    assert.deepEqual((await h().query(OP, {}, { as: org })).json, { oauth2Credentials: [] });
  });

  it("the organization's own credentials, oldest first, secrets only as envelopes (through the official SDK)", async () => {
    const org = await h().newOrg("creds");
    const a = await newCredential(h(), { provider: "OAUTH2_PROVIDER_X", clientId: "a", clientSecret: "secret-a", as: org });
    const b = await newCredential(h(), { provider: "OAUTH2_PROVIDER_DISCORD", clientId: "b", clientSecret: "secret-b", as: org });
    await newCredential(h(), { provider: "OAUTH2_PROVIDER_X", clientId: "elsewhere", clientSecret: "s" });
    const sdk = await h().sdk(org);
    const { oauth2Credentials } = await sdk.listOauth2Credentials({ organizationId: org.organizationId });
    assert.deepEqual(
      oauth2Credentials.map((c) => [c.oauth2CredentialId, c.clientId, c.provider, c.encryptedClientSecret]),
      [
        [a.oauth2CredentialId, "a", "OAUTH2_PROVIDER_X", a.encryptedClientSecret],
        [b.oauth2CredentialId, "b", "OAUTH2_PROVIDER_DISCORD", b.encryptedClientSecret],
      ],
    );
    assert.ok(!JSON.stringify(oauth2Credentials).includes("secret-a"));
  });

  it("a malformed organizationId is 400", async () => {
    invalidRequest(await h().query(OP, { organizationId: "x" }), /organization id/, ["organizationId"]);
  });
});
