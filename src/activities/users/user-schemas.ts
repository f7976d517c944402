import { Type } from "@sinclair/typebox";
import { ApiKeyParamsV2, Email, Id, Name, PhoneNumber, maxItems } from "../../schemas/common.ts";
import { OauthProviderParams } from "../oauth/oidc-params.ts";
import { MAX_OAUTH_PROVIDERS_PER_USER } from "../../store/oauth-providers.ts";

export const MAX_USERS_PER_REQUEST = 100;
export const MAX_KEYS_PER_REQUEST = 10;
export const MAX_AUTHENTICATORS_PER_REQUEST = 10;

/** Binary WebAuthn fields: base64url as the clients send them (base64 and padding accepted). */
const Base64Field = (what: string, max: number) =>
  Type.String({
    minLength: 1,
    maxLength: max,
    pattern: "^[A-Za-z0-9+/_-]+={0,2}$",
    errorMessage: `${what} must be base64url (at most ${max} characters)`,
  });

export const AuthenticatorTransport = Type.Union(
  [
    Type.Literal("AUTHENTICATOR_TRANSPORT_BLE"),
    Type.Literal("AUTHENTICATOR_TRANSPORT_INTERNAL"),
    Type.Literal("AUTHENTICATOR_TRANSPORT_NFC"),
    Type.Literal("AUTHENTICATOR_TRANSPORT_USB"),
    Type.Literal("AUTHENTICATOR_TRANSPORT_HYBRID"),
  ],
  { errorMessage: "must be AUTHENTICATOR_TRANSPORT_BLE, _INTERNAL, _NFC, _USB or _HYBRID" },
);

/** Attestation (docs/logins.md §6.1): what navigator.credentials.create returned, encoded by the client. */
export const Attestation = Type.Object({
  // WebAuthn credential ids are at most 1023 bytes.
  credentialId: Base64Field("credentialId", 1366),
  clientDataJson: Base64Field("clientDataJson", 8192),
  // Certificate chains (packed, tpm, apple) make these a few kilobytes.
  attestationObject: Base64Field("attestationObject", 32768),
  transports: maxItems(AuthenticatorTransport, "transports", 5),
});

/** AuthenticatorParamsV2: a passkey to register (checked by logins/passkey/registration.ts). */
export const AuthenticatorParamsV2 = Type.Object({
  authenticatorName: Name("authenticatorName"),
  // b64url of the registration challenge (web), or the hex string given to the native API (React Native).
  challenge: Base64Field("challenge", 1024),
  attestation: Attestation,
});

// OAuth providers: the field is required (the SDK always sends it); each token is verified by
// the activity's prepare (activities/oauth/provider-identities.ts).
const OauthProviders = maxItems(OauthProviderParams, "oauthProviders", MAX_OAUTH_PROVIDERS_PER_USER);

/** RootUserParamsV4 / V5 (create_sub_organization V7 / V8). */
export const RootUserParams = Type.Object({
  userName: Name("userName"),
  userEmail: Type.Optional(Email),
  userPhoneNumber: Type.Optional(PhoneNumber),
  apiKeys: maxItems(ApiKeyParamsV2, "apiKeys", MAX_KEYS_PER_REQUEST),
  authenticators: maxItems(AuthenticatorParamsV2, "authenticators", MAX_AUTHENTICATORS_PER_REQUEST),
  oauthProviders: OauthProviders,
});

/** UserParamsV3 / V4 (create_users V3 / V4): root user params plus tags. */
export const UserParams = Type.Object({
  ...RootUserParams.properties,
  userTags: maxItems(Id("user tag"), "userTags", 100),
});
