import { it } from "node:test";
import assert from "node:assert/strict";
import { encryptOauth2ClientSecret } from "@turnkey/crypto";
import { generateP256 } from "../../src/crypto/p256.ts";
import { openClientSecretSealed } from "../../src/store/oauth2-credentials.ts";
import { assertIdempotent, completed, invalidRequest, perEngine, UUID } from "../helpers/inproc.ts";
import { clientSecretKey } from "../helpers/oauth-provider.ts";
import { createOauth2Credential } from "../../src/activities/oauth2/create_oauth2_credential.ts";

const OP = "create_oauth2_credential";
const TYPE = "ACTIVITY_TYPE_CREATE_OAUTH2_CREDENTIAL";

perEngine("create_oauth2_credential", (h) => {
  it("through the official SDK: the secret encrypted with encryptOauth2ClientSecret to our published key is stored sealed, never in plaintext", async () => {
    const secret = `s3cr3t-${Date.now()}`;
    const encryptedClientSecret = await encryptOauth2ClientSecret(secret, await clientSecretKey(h()));
    const sdk = await h().sdk();
    const out = await sdk.createOauth2Credential({ provider: "OAUTH2_PROVIDER_X", clientId: "x-client-1", encryptedClientSecret });
    assert.match(out.oauth2CredentialId, UUID);
    const row = await h()
      .service.store.db.selectFrom("oauth2_credentials")
      .selectAll()
      .where("id", "=", out.oauth2CredentialId)
      .executeTakeFirstOrThrow();
    assert.equal(row.organization_id, h().root.organizationId);
    assert.equal(row.provider, "OAUTH2_PROVIDER_X");
    assert.equal(row.client_id, "x-client-1");
    assert.equal(row.encrypted_client_secret, encryptedClientSecret);
    assert.ok(!JSON.stringify(row).includes(secret), "no plaintext secret in the row");
    assert.equal(await openClientSecretSealed(h().service.masterKey, row), secret);
    // The activity record holds the envelope as submitted, not the secret.
    const activities = await h().service.store.db.selectFrom("activities").selectAll().where("type", "=", TYPE).execute();
    assert.ok(activities.length > 0 && !JSON.stringify(activities).includes(secret));
  });

  it("Google, Apple and generic OIDC credentials too", async () => {
    const key = await clientSecretKey(h());
    for (const provider of ["OAUTH2_PROVIDER_GOOGLE", "OAUTH2_PROVIDER_APPLE", "OAUTH2_PROVIDER_OIDC", "OAUTH2_PROVIDER_DISCORD"]) {
      const res = await h().submit(OP, TYPE, {
        provider,
        clientId: `${provider}.client`,
        encryptedClientSecret: await encryptOauth2ClientSecret("s", key),
      });
      assert.match(completed(res, createOauth2Credential).oauth2CredentialId, UUID);
    }
  });

  it("the same body twice is one activity", async () => {
    const encryptedClientSecret = await encryptOauth2ClientSecret("s", await clientSecretKey(h()));
    await assertIdempotent(h(), OP, TYPE, { provider: "OAUTH2_PROVIDER_DISCORD", clientId: "d-1", encryptedClientSecret });
  });

  it("a secret encrypted to another key (e.g. the SDK's production default) is 400 naming encryptedClientSecret, nothing stored", async () => {
    const before = (await h().service.store.db.selectFrom("oauth2_credentials").select("id").execute()).length;
    const elsewhere = await encryptOauth2ClientSecret("s", generateP256().publicUncompressed);
    invalidRequest(
      await h().submit(OP, TYPE, { provider: "OAUTH2_PROVIDER_X", clientId: "c", encryptedClientSecret: elsewhere }),
      /encryptedClientSecret.*could not be decrypted/,
      ["parameters.encryptedClientSecret"],
    );
    const production = await encryptOauth2ClientSecret("s");
    invalidRequest(
      await h().submit(OP, TYPE, { provider: "OAUTH2_PROVIDER_X", clientId: "c", encryptedClientSecret: production }),
      /could not be decrypted/,
      ["parameters.encryptedClientSecret"],
    );
    invalidRequest(
      await h().submit(OP, TYPE, { provider: "OAUTH2_PROVIDER_X", clientId: "c", encryptedClientSecret: "00ff" }),
      /too short/,
      ["parameters.encryptedClientSecret"],
    );
    assert.equal((await h().service.store.db.selectFrom("oauth2_credentials").select("id").execute()).length, before);
  });

  it("each field is validated: provider, clientId, encryptedClientSecret", async () => {
    const encryptedClientSecret = await encryptOauth2ClientSecret("s", await clientSecretKey(h()));
    invalidRequest(
      await h().submit(OP, TYPE, { provider: "OAUTH2_PROVIDER_FACEBOOK", clientId: "c", encryptedClientSecret }),
      /provider must be one of/,
      ["parameters.provider"],
    );
    invalidRequest(
      await h().submit(OP, TYPE, { provider: "OAUTH2_PROVIDER_X", clientId: "", encryptedClientSecret }),
      /client_id must be set/,
      ["parameters.clientId"],
    );
    invalidRequest(await h().submit(OP, TYPE, { provider: "OAUTH2_PROVIDER_X", encryptedClientSecret }), /must be set/, [
      "parameters.clientId",
    ]);
    invalidRequest(
      await h().submit(OP, TYPE, { provider: "OAUTH2_PROVIDER_X", clientId: "c".repeat(513), encryptedClientSecret }),
      /client_id/,
      ["parameters.clientId"],
    );
    invalidRequest(await h().submit(OP, TYPE, { provider: "OAUTH2_PROVIDER_X", clientId: "a b", encryptedClientSecret }), /client_id/, [
      "parameters.clientId",
    ]);
    invalidRequest(
      await h().submit(OP, TYPE, { provider: "OAUTH2_PROVIDER_X", clientId: "c", encryptedClientSecret: "plain secret" }),
      /hex envelope/,
      ["parameters.encryptedClientSecret"],
    );
    invalidRequest(
      await h().submit(OP, TYPE, { provider: "OAUTH2_PROVIDER_X", clientId: "c", encryptedClientSecret: "ab".repeat(5000) }),
      /hex envelope/,
      ["parameters.encryptedClientSecret"],
    );
  });
});
