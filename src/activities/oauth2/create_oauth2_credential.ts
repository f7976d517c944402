import { Type, type Static } from "@sinclair/typebox";
import { exhausted } from "../../errors.ts";
import { lockOrganization } from "../../store/locks.ts";
import { newId } from "../../store/util.ts";
import { MAX_OAUTH2_CREDENTIALS_PER_ORGANIZATION, sealClientSecret } from "../../store/oauth2-credentials.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { ClientId, EncryptedClientSecret, Provider, decryptClientSecret } from "./fields.ts";

const Params = Type.Object({ provider: Provider, clientId: ClientId, encryptedClientSecret: EncryptedClientSecret });
type P = Static<typeof Params>;

async function execute(ctx: ExecuteContext, p: P) {
  const { tx, organization, now } = ctx;
  const secret = await decryptClientSecret(ctx.services, p.encryptedClientSecret);
  // The cap is count-then-insert: creators in one organization count one after the other.
  await lockOrganization(tx, organization.id);
  const count = await tx
    .selectFrom("oauth2_credentials")
    .select((eb) => eb.fn.countAll<string | number>().as("n"))
    .where("organization_id", "=", organization.id)
    .executeTakeFirstOrThrow();
  if (Number(count.n) >= MAX_OAUTH2_CREDENTIALS_PER_ORGANIZATION) {
    throw exhausted(
      `organization ${organization.id} already has ${MAX_OAUTH2_CREDENTIALS_PER_ORGANIZATION} OAuth 2.0 credentials, the maximum`,
    );
  }
  const id = newId();
  await tx
    .insertInto("oauth2_credentials")
    .values({
      id,
      organization_id: organization.id,
      provider: p.provider,
      client_id: p.clientId,
      client_secret_sealed: await sealClientSecret(ctx.services.masterKey, id, secret),
      encrypted_client_secret: p.encryptedClientSecret,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return { oauth2CredentialId: id };
}

export const createOauth2Credential = defineActivity({
  type: "ACTIVITY_TYPE_CREATE_OAUTH2_CREDENTIAL",
  resource: "AUTH",
  action: "CREATE",
  kind: "CREATE_OAUTH2_CREDENTIAL",
  summary:
    "Store an OAuth 2.0 client credential (provider, client id, client secret encrypted with encryptOauth2ClientSecret to the OAUTH2_CLIENT_SECRET key of GET /public/v1/discovery/keys). The secret is sealed at rest and never returned.",
  params: Params,
  returns: Type.Object({ oauth2CredentialId: Type.String() }),
  execute,
});
