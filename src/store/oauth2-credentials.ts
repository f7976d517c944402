// OAuth 2.0 client credentials of an organization. The client secret is kept
// twice, never in plaintext: sealed with the master key (what oauth2_authenticate opens;
// the AAD binds it to the credential id, so a sealed value copied to another row does not
// open) and as the envelope the client sent (ciphertext to our OAUTH2_CLIENT_SECRET key),
// which the record returns as `encryptedClientSecret`.
import type { Executor, Oauth2CredentialsTable } from "./schema.ts";
import { timestampObject } from "./util.ts";
import type { MasterKey } from "../crypto/envelope.ts";
import { AAD } from "../crypto/aad.ts";

export type Oauth2CredentialRow = Oauth2CredentialsTable;

/** Credentials one organization may hold: a bound on what a caller can make us store. */
export const MAX_OAUTH2_CREDENTIALS_PER_ORGANIZATION = 100;

const secretAad = AAD.oauth2ClientSecret;

export function sealClientSecret(master: MasterKey, id: string, secret: string): Promise<string> {
  return master.seal(Buffer.from(secret, "utf8"), secretAad(id));
}

/** The plaintext client secret: only ever placed in a request to the provider. */
export async function openClientSecretSealed(
  master: MasterKey,
  row: Pick<Oauth2CredentialRow, "id" | "client_secret_sealed">,
): Promise<string> {
  const plain = await master.open(row.client_secret_sealed, secretAad(row.id));
  const secret = plain.toString("utf8");
  plain.fill(0);
  return secret;
}

export async function findOauth2Credential(db: Executor, organizationId: string, id: string): Promise<Oauth2CredentialRow | undefined> {
  return db
    .selectFrom("oauth2_credentials")
    .selectAll()
    .where("id", "=", id)
    .where("organization_id", "=", organizationId)
    .executeTakeFirst();
}

export async function listOauth2Credentials(db: Executor, organizationId: string): Promise<Oauth2CredentialRow[]> {
  return db
    .selectFrom("oauth2_credentials")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

/** The record as the API returns it (swagger v1Oauth2Credential). */
export function oauth2CredentialView(r: Oauth2CredentialRow) {
  return {
    oauth2CredentialId: r.id,
    organizationId: r.organization_id,
    provider: r.provider,
    clientId: r.client_id,
    encryptedClientSecret: r.encrypted_client_secret,
    createdAt: timestampObject(Number(r.created_at)),
    updatedAt: timestampObject(Number(r.updated_at)),
  };
}
