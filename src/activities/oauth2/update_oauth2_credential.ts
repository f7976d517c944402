import { Type, type Static } from "@sinclair/typebox";
import { notFound } from "../../errors.ts";
import { Id } from "../../schemas/common.ts";
import { findOauth2Credential, sealClientSecret } from "../../store/oauth2-credentials.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { ClientId, EncryptedClientSecret, Provider, decryptClientSecret } from "./fields.ts";

const Params = Type.Object({
  oauth2CredentialId: Id("oauth2 credential"),
  provider: Provider,
  clientId: ClientId,
  encryptedClientSecret: EncryptedClientSecret,
});
type P = Static<typeof Params>;

async function execute(ctx: ExecuteContext, p: P) {
  const { tx, organization, now } = ctx;
  const current = await findOauth2Credential(tx, organization.id, p.oauth2CredentialId);
  if (!current)
    throw notFound(`OAUTH2_CREDENTIAL_NOT_FOUND: no OAuth 2.0 credential ${p.oauth2CredentialId} in organization ${organization.id}`);
  const secret = await decryptClientSecret(ctx.services, p.encryptedClientSecret);
  await tx
    .updateTable("oauth2_credentials")
    .set({
      provider: p.provider,
      client_id: p.clientId,
      client_secret_sealed: await sealClientSecret(ctx.services.masterKey, current.id, secret),
      encrypted_client_secret: p.encryptedClientSecret,
      updated_at: now,
    })
    .where("id", "=", current.id)
    .where("organization_id", "=", organization.id)
    .execute();
  return { oauth2CredentialId: current.id };
}

export const updateOauth2Credential = defineActivity({
  type: "ACTIVITY_TYPE_UPDATE_OAUTH2_CREDENTIAL",
  resource: "AUTH",
  action: "UPDATE",
  kind: "UPDATE_OAUTH2_CREDENTIAL",
  summary: "Replace an OAuth 2.0 credential's provider, client id and (encrypted) client secret.",
  params: Params,
  returns: Type.Object({ oauth2CredentialId: Type.String() }),
  execute,
});
