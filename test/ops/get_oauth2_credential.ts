import { it } from "node:test";
import assert from "node:assert/strict";
import { invalidRequest, notFound, perEngine } from "../helpers/inproc.ts";
import { newCredential } from "../helpers/oauth-provider.ts";

const OP = "get_oauth2_credential";

perEngine("get_oauth2_credential", (h) => {
  it("the record with every swagger field; the secret only as the submitted envelope (through the official SDK)", async () => {
    const { oauth2CredentialId, encryptedClientSecret } = await newCredential(h(), {
      provider: "OAUTH2_PROVIDER_DISCORD",
      clientId: "disc-1",
      clientSecret: "top-secret-get",
    });
    const sdk = await h().sdk();
    const { oauth2Credential } = await sdk.getOauth2Credential({ organizationId: h().root.organizationId, oauth2CredentialId });
    assert.deepEqual(Object.keys(oauth2Credential).sort(), [
      "clientId",
      "createdAt",
      "encryptedClientSecret",
      "oauth2CredentialId",
      "organizationId",
      "provider",
      "updatedAt",
    ]);
    assert.equal(oauth2Credential.oauth2CredentialId, oauth2CredentialId);
    assert.equal(oauth2Credential.organizationId, h().root.organizationId);
    assert.equal(oauth2Credential.provider, "OAUTH2_PROVIDER_DISCORD");
    assert.equal(oauth2Credential.clientId, "disc-1");
    assert.equal(oauth2Credential.encryptedClientSecret, encryptedClientSecret);
    assert.match(oauth2Credential.createdAt.seconds, /^\d+$/);
    assert.match(oauth2Credential.updatedAt.nanos, /^\d+$/);
    assert.ok(!JSON.stringify(oauth2Credential).includes("top-secret-get"));
  });

  it("another organization's credential and an unknown id are 404", async () => {
    const { oauth2CredentialId } = await newCredential(h(), { provider: "OAUTH2_PROVIDER_X", clientId: "c", clientSecret: "s" });
    notFound(await h().query(OP, { oauth2CredentialId }, { as: await h().newOrg() }), /OAUTH2_CREDENTIAL_NOT_FOUND/);
    notFound(await h().query(OP, { oauth2CredentialId: "00000000-0000-4000-8000-000000000000" }), /OAUTH2_CREDENTIAL_NOT_FOUND/);
  });

  it("a malformed or missing id is 400 naming the field", async () => {
    invalidRequest(await h().query(OP, { oauth2CredentialId: "bad" }), /oauth2 credential id/, ["oauth2CredentialId"]);
    invalidRequest(await h().query(OP, {}), /must be set/, ["oauth2CredentialId"]);
  });
});
