// Fields shared by the OAuth 2.0 credential activities and oauth2_authenticate.
import { Type } from "@sinclair/typebox";
import { invalid } from "../../errors.ts";
import { PROVIDER_NAMES } from "../../logins/oauth/providers.ts";
import { MAX_ENVELOPE_HEX, openClientSecret } from "../../logins/oauth/client-secret.ts";
import type { ActivityServices } from "../define.ts";

export const Provider = Type.Union(
  PROVIDER_NAMES.map((n) => Type.Literal(n)),
  { errorMessage: `provider must be one of ${PROVIDER_NAMES.join(", ")}` },
);

export const ClientId = Type.String({
  minLength: 1,
  maxLength: 512,
  pattern: "^[\\x21-\\x7e]+$",
  errorMessage: "client_id must be set: 1 to 512 printable ASCII characters without spaces",
});

export const EncryptedClientSecret = Type.String({
  minLength: 2,
  maxLength: MAX_ENVELOPE_HEX,
  pattern: "^[0-9a-fA-F]+$",
  errorMessage: `encryptedClientSecret must be the hex envelope encryptOauth2ClientSecret returns (at most ${MAX_ENVELOPE_HEX} characters)`,
});

/**
 * The client secret from the envelope the client encrypted to our OAUTH2_CLIENT_SECRET key
 * (decrypted once here; the caller seals it). An envelope we cannot open is the client's
 * mistake: 400 naming the field.
 */
export async function decryptClientSecret(services: ActivityServices, envelope: string): Promise<string> {
  const key = await services.serviceKey("OAUTH2_CLIENT_SECRET");
  const opened = openClientSecret(key.signer, envelope);
  if ("problem" in opened) {
    throw invalid(`invalid encryptedClientSecret: it ${opened.problem}`, [
      { field: "parameters.encryptedClientSecret", description: opened.problem },
    ]);
  }
  return opened.secret;
}
