import { Type } from "@sinclair/typebox";
import { notFound } from "../errors.ts";
import { Id, OrganizationId } from "../schemas/common.ts";
import { findOauth2Credential, listOauth2Credentials as listRows, oauth2CredentialView } from "../store/oauth2-credentials.ts";
import { defineQuery } from "./define.ts";

// The record returns the client secret only as the envelope the client submitted (ciphertext
// to this service's key); the sealed copy never leaves the store.
const Oauth2Credential = Type.Object({
  oauth2CredentialId: Type.String(),
  organizationId: Type.String(),
  provider: Type.String(),
  clientId: Type.String(),
  encryptedClientSecret: Type.String(),
  createdAt: Type.Object({ seconds: Type.String(), nanos: Type.String() }),
  updatedAt: Type.Object({ seconds: Type.String(), nanos: Type.String() }),
});

export const getOauth2Credential = defineQuery({
  op: "get_oauth2_credential",
  summary: "One OAuth 2.0 credential of the organization (client secret only as the encrypted envelope).",
  request: Type.Object({ organizationId: OrganizationId, oauth2CredentialId: Id("oauth2 credential") }),
  response: Type.Object({ oauth2Credential: Oauth2Credential }),
  async run({ db, organization }, req) {
    const row = await findOauth2Credential(db, organization.id, req.oauth2CredentialId);
    if (!row)
      throw notFound(`OAUTH2_CREDENTIAL_NOT_FOUND: no OAuth 2.0 credential ${req.oauth2CredentialId} in organization ${organization.id}`);
    return { oauth2Credential: oauth2CredentialView(row) };
  },
});

export const listOauth2Credentials = defineQuery({
  op: "list_oauth2_credentials",
  summary: "The organization's OAuth 2.0 credentials, oldest first.",
  request: Type.Object({ organizationId: OrganizationId }),
  response: Type.Object({ oauth2Credentials: Type.Array(Oauth2Credential) }),
  async run({ db, organization }) {
    return { oauth2Credentials: (await listRows(db, organization.id)).map(oauth2CredentialView) };
  },
});
