import { it } from "node:test";
import assert from "node:assert/strict";
import { encryptOauth2ClientSecret } from "@turnkey/crypto";
import { generateP256 } from "../../src/crypto/p256.ts";
import { openClientSecretSealed } from "../../src/store/oauth2-credentials.ts";
import { assertIdempotent, completed, invalidRequest, notFound, perEngine } from "../helpers/inproc.ts";
import { clientSecretKey, newCredential } from "../helpers/oauth-provider.ts";
import { updateOauth2Credential } from "../../src/activities/oauth2/update_oauth2_credential.ts";

const OP = "update_oauth2_credential";
const TYPE = "ACTIVITY_TYPE_UPDATE_OAUTH2_CREDENTIAL";

perEngine("update_oauth2_credential", (h) => {
  const row = (id: string) =>
    h().service.store.db.selectFrom("oauth2_credentials").selectAll().where("id", "=", id).executeTakeFirstOrThrow();

  it("replaces provider, client id and secret (re-sealed); the record shows the new envelope", async () => {
    const { oauth2CredentialId } = await newCredential(h(), { provider: "OAUTH2_PROVIDER_X", clientId: "old", clientSecret: "old-secret" });
    const encryptedClientSecret = await encryptOauth2ClientSecret("new-secret", await clientSecretKey(h()));
    const sdk = await h().sdk();
    const out = await sdk.updateOauth2Credential({
      oauth2CredentialId,
      provider: "OAUTH2_PROVIDER_DISCORD",
      clientId: "new",
      encryptedClientSecret,
    });
    assert.equal(out.oauth2CredentialId, oauth2CredentialId);
    const r = await row(oauth2CredentialId);
    assert.equal(r.provider, "OAUTH2_PROVIDER_DISCORD");
    assert.equal(r.client_id, "new");
    assert.equal(r.encrypted_client_secret, encryptedClientSecret);
    assert.equal(await openClientSecretSealed(h().service.masterKey, r), "new-secret");
    assert.ok(!JSON.stringify(r).includes("new-secret"));
    const got = (await h().query("get_oauth2_credential", { oauth2CredentialId })).json.oauth2Credential;
    assert.equal(got.clientId, "new");
    assert.equal(got.encryptedClientSecret, encryptedClientSecret);
  });

  it("the same body twice is one activity", async () => {
    const { oauth2CredentialId } = await newCredential(h(), { provider: "OAUTH2_PROVIDER_X", clientId: "c", clientSecret: "s" });
    const encryptedClientSecret = await encryptOauth2ClientSecret("s2", await clientSecretKey(h()));
    await assertIdempotent(h(), OP, TYPE, { oauth2CredentialId, provider: "OAUTH2_PROVIDER_X", clientId: "c2", encryptedClientSecret });
  });

  it("an unknown id and another organization's credential are 404 (OAUTH2_CREDENTIAL_NOT_FOUND), unchanged", async () => {
    const { oauth2CredentialId } = await newCredential(h(), { provider: "OAUTH2_PROVIDER_X", clientId: "mine", clientSecret: "s" });
    const encryptedClientSecret = await encryptOauth2ClientSecret("s", await clientSecretKey(h()));
    const params = { provider: "OAUTH2_PROVIDER_X", clientId: "theirs", encryptedClientSecret };
    notFound(await h().submit(OP, TYPE, { oauth2CredentialId, ...params }, { as: await h().newOrg() }), /OAUTH2_CREDENTIAL_NOT_FOUND/);
    notFound(
      await h().submit(OP, TYPE, { oauth2CredentialId: "00000000-0000-4000-8000-000000000000", ...params }),
      /OAUTH2_CREDENTIAL_NOT_FOUND/,
    );
    assert.equal((await row(oauth2CredentialId)).client_id, "mine");
  });

  it("an undecryptable secret or a bad field is 400 naming it; the credential is unchanged", async () => {
    const { oauth2CredentialId } = await newCredential(h(), {
      provider: "OAUTH2_PROVIDER_X",
      clientId: "keep",
      clientSecret: "keep-secret",
    });
    const elsewhere = await encryptOauth2ClientSecret("s", generateP256().publicUncompressed);
    invalidRequest(
      await h().submit(OP, TYPE, { oauth2CredentialId, provider: "OAUTH2_PROVIDER_X", clientId: "c", encryptedClientSecret: elsewhere }),
      /could not be decrypted/,
      ["parameters.encryptedClientSecret"],
    );
    const good = await encryptOauth2ClientSecret("s", await clientSecretKey(h()));
    invalidRequest(
      await h().submit(OP, TYPE, { oauth2CredentialId: "x", provider: "OAUTH2_PROVIDER_X", clientId: "c", encryptedClientSecret: good }),
      /oauth2 credential id/,
      ["parameters.oauth2CredentialId"],
    );
    invalidRequest(
      await h().submit(OP, TYPE, { oauth2CredentialId, provider: "X", clientId: "c", encryptedClientSecret: good }),
      /provider must be one of/,
      ["parameters.provider"],
    );
    invalidRequest(
      await h().submit(OP, TYPE, { oauth2CredentialId, provider: "OAUTH2_PROVIDER_X", encryptedClientSecret: good }),
      /must be set/,
      ["parameters.clientId"],
    );
    const r = await row(oauth2CredentialId);
    assert.equal(r.client_id, "keep");
    assert.equal(await openClientSecretSealed(h().service.masterKey, r), "keep-secret");
    completed(
      await h().submit(OP, TYPE, { oauth2CredentialId, provider: "OAUTH2_PROVIDER_X", clientId: "keep", encryptedClientSecret: good }),
      updateOauth2Credential,
    );
  });
});
