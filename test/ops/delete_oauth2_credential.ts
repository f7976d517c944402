import { it } from "node:test";
import assert from "node:assert/strict";
import { assertIdempotent, completed, invalidRequest, notFound, perEngine } from "../helpers/inproc.ts";
import { newCredential } from "../helpers/oauth-provider.ts";
import { deleteOauth2Credential } from "../../src/activities/oauth2/delete_oauth2_credential.ts";

const OP = "delete_oauth2_credential";
const TYPE = "ACTIVITY_TYPE_DELETE_OAUTH2_CREDENTIAL";

perEngine("delete_oauth2_credential", (h) => {
  const exists = async (id: string) =>
    (await h().service.store.db.selectFrom("oauth2_credentials").select("id").where("id", "=", id).executeTakeFirst()) !== undefined;

  it("deletes the credential and its sealed secret; a second delete is 404", async () => {
    const { oauth2CredentialId } = await newCredential(h(), { provider: "OAUTH2_PROVIDER_X", clientId: "c", clientSecret: "s" });
    const sdk = await h().sdk();
    assert.equal((await sdk.deleteOauth2Credential({ oauth2CredentialId })).oauth2CredentialId, oauth2CredentialId);
    assert.equal(await exists(oauth2CredentialId), false);
    notFound(await h().submit(OP, TYPE, { oauth2CredentialId }), /OAUTH2_CREDENTIAL_NOT_FOUND/);
    notFound(await h().query("get_oauth2_credential", { oauth2CredentialId }), /OAUTH2_CREDENTIAL_NOT_FOUND/);
  });

  it("the same body twice is one activity", async () => {
    const { oauth2CredentialId } = await newCredential(h(), { provider: "OAUTH2_PROVIDER_X", clientId: "c", clientSecret: "s" });
    const activity = await assertIdempotent(h(), OP, TYPE, { oauth2CredentialId });
    assert.deepEqual(activity.result, { deleteOauth2CredentialResult: { oauth2CredentialId } });
  });

  it("another organization's credential is 404 and stays", async () => {
    const { oauth2CredentialId } = await newCredential(h(), { provider: "OAUTH2_PROVIDER_X", clientId: "c", clientSecret: "s" });
    notFound(await h().submit(OP, TYPE, { oauth2CredentialId }, { as: await h().newOrg() }), /OAUTH2_CREDENTIAL_NOT_FOUND/);
    assert.equal(await exists(oauth2CredentialId), true);
    completed(await h().submit(OP, TYPE, { oauth2CredentialId }), deleteOauth2Credential);
  });

  it("a malformed or missing id is 400", async () => {
    invalidRequest(await h().submit(OP, TYPE, { oauth2CredentialId: "nope" }), /oauth2 credential id/, ["parameters.oauth2CredentialId"]);
    invalidRequest(await h().submit(OP, TYPE, {}), /must be set/, ["parameters.oauth2CredentialId"]);
  });
});
