import { Type } from "@sinclair/typebox";
import { notFound } from "../../errors.ts";
import { Id } from "../../schemas/common.ts";
import { findOauth2Credential } from "../../store/oauth2-credentials.ts";
import { defineActivity } from "../define.ts";

export const deleteOauth2Credential = defineActivity({
  type: "ACTIVITY_TYPE_DELETE_OAUTH2_CREDENTIAL",
  resource: "AUTH",
  action: "DELETE",
  kind: "DELETE_OAUTH2_CREDENTIAL",
  summary: "Delete an OAuth 2.0 credential (its sealed client secret with it).",
  params: Type.Object({ oauth2CredentialId: Id("oauth2 credential") }),
  returns: Type.Object({ oauth2CredentialId: Type.String() }),
  async execute({ tx, organization }, p) {
    const current = await findOauth2Credential(tx, organization.id, p.oauth2CredentialId);
    if (!current)
      throw notFound(`OAUTH2_CREDENTIAL_NOT_FOUND: no OAuth 2.0 credential ${p.oauth2CredentialId} in organization ${organization.id}`);
    await tx.deleteFrom("oauth2_credentials").where("id", "=", current.id).where("organization_id", "=", organization.id).execute();
    return { oauth2CredentialId: current.id };
  },
});
