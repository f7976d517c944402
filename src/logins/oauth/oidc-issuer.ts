// Sigil as an OIDC issuer (docs/oauth.md §3.3, §3.5): the tokens oauth2_authenticate returns, the discovery
// document and the key set any OIDC library verifies them with. The contract oauth_login
// relies on:
//   compact JWS, header {"alg":"ES256","typ":"JWT","kid":<OIDC_TOKEN service key id>}, standard
//   ES256 (raw r‖s over SHA-256 of "header.payload");
//   claims iss = SIGIL_PUBLIC_URL (no trailing slash), aud = the credential's client id,
//   sub = provider-scoped id (x:<id>), nonce, iat, exp = iat + OIDC_TOKEN_LIFETIME_SECONDS,
//   optional email / email_verified / name, and encrypted_bearer_token when asked for.
// Every active and published OIDC_TOKEN key is in the JWKS, so tokens signed before a
// rotation verify until they expire.
import { SignJWT } from "jose";
import type { ServiceKey } from "../../auth/service-keys.ts";
import { verifyingKeyRecords } from "../../auth/service-keys.ts";
import type { Executor } from "../../store/schema.ts";
import type { ProviderIdentity } from "./providers.ts";

export const OIDC_TOKEN_LIFETIME_SECONDS = 3600;
export const DISCOVERY_PATH = "/.well-known/openid-configuration";
export const JWKS_PATH = "/.well-known/jwks.json";

export interface OidcTokenInput {
  issuer: string;
  audience: string;
  identity: ProviderIdentity;
  nonce: string;
  encryptedBearerToken?: string;
  /** Seconds since the epoch. */
  iat: number;
}

export async function mintOidcToken(key: ServiceKey, input: OidcTokenInput): Promise<string> {
  const { sub, email, email_verified, name } = input.identity;
  const claims: Record<string, unknown> = {
    nonce: input.nonce,
    ...(email !== undefined ? { email } : {}),
    ...(email_verified !== undefined ? { email_verified } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(input.encryptedBearerToken !== undefined ? { encrypted_bearer_token: input.encryptedBearerToken } : {}),
  };
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "ES256", typ: "JWT", kid: key.id })
    .setIssuer(input.issuer)
    .setAudience(input.audience)
    .setSubject(sub)
    .setIssuedAt(input.iat)
    .setExpirationTime(input.iat + OIDC_TOKEN_LIFETIME_SECONDS)
    .sign(key.signer.key);
}

export interface EcJwk {
  kty: "EC";
  crv: "P-256";
  x: string;
  y: string;
  kid: string;
  alg: "ES256";
  use: "sig";
}

/** An uncompressed P-256 point (hex) as a JWK. */
export function p256Jwk(id: string, publicUncompressed: string): EcJwk {
  const b = Buffer.from(publicUncompressed, "hex");
  if (b.length !== 65 || b[0] !== 4) throw new Error(`service key ${id}: not an uncompressed P-256 point`);
  return {
    kty: "EC",
    crv: "P-256",
    x: b.subarray(1, 33).toString("base64url"),
    y: b.subarray(33).toString("base64url"),
    kid: id,
    alg: "ES256",
    use: "sig",
  };
}

/** GET /.well-known/jwks.json: every active and published OIDC_TOKEN key, newest first. */
export async function oidcJwks(db: Executor): Promise<{ keys: EcJwk[] }> {
  return { keys: (await verifyingKeyRecords(db, "OIDC_TOKEN")).map((k) => p256Jwk(k.id, k.publicKey)) };
}

/** GET /.well-known/openid-configuration, from SIGIL_PUBLIC_URL (never from the request or the bind address). */
export function openidConfiguration(publicUrl: string) {
  const issuer = publicUrl.replace(/\/+$/, "");
  return {
    issuer,
    jwks_uri: `${issuer}${JWKS_PATH}`,
    // Sigil issues ID tokens through the oauth2_authenticate activity, not an authorization
    // endpoint of its own; the fields below are the ones OIDC libraries require to read the document.
    response_types_supported: ["id_token"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: ["ES256"],
    claims_supported: ["iss", "aud", "sub", "nonce", "iat", "exp", "email", "email_verified", "name", "encrypted_bearer_token"],
  };
}
