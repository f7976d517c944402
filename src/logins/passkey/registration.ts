// Registering a passkey (create_authenticators, recover_user, users created with
// authenticators): the AuthenticatorParamsV2 a client made with navigator.credentials.create
// (docs/logins.md §6.3) is checked before anything is stored.
//
//   clientDataJson: type webauthn.create; challenge == the request's `challenge`; origin
//                   among the configured origins (none configured: any)
//   attestationObject: RP ID hash == SHA-256(configured RP ID) (none configured: any); user
//                   present; attested credential data whose credential id is the submitted
//                   `credentialId`; an ES256 or RS256 key; the statement verified by
//                   @simplewebauthn/server — "none" is accepted, and formats with certificates
//                   are not required to chain to a known root unless the library knows roots
//                   for them (apple, android-key, android-safetynet)
import { verifyRegistrationResponse } from "@simplewebauthn/server";
import { invalid } from "../../errors.ts";
import type { LoginSettings } from "../settings.ts";
import { canonicalB64url, decodeBase64Any } from "./encoding.ts";

export type WebauthnSettings = LoginSettings["webauthn"];

export type AuthenticatorTransport =
  | "AUTHENTICATOR_TRANSPORT_BLE"
  | "AUTHENTICATOR_TRANSPORT_INTERNAL"
  | "AUTHENTICATOR_TRANSPORT_NFC"
  | "AUTHENTICATOR_TRANSPORT_USB"
  | "AUTHENTICATOR_TRANSPORT_HYBRID";

/** AuthenticatorParamsV2, as validated by its schema (activities/users/user-schemas.ts). */
export interface AuthenticatorParams {
  authenticatorName: string;
  challenge: string;
  attestation: {
    credentialId: string;
    clientDataJson: string;
    attestationObject: string;
    transports: AuthenticatorTransport[];
  };
}

/** What is stored of a verified registration (store/authenticators.ts). */
export interface RegisteredCredential {
  name: string;
  /** As submitted. */
  credentialId: string;
  /** b64url, no padding: what stamps are looked up by. */
  credentialIdNormalized: string;
  /** b64url of the COSE public key. */
  publicKey: string;
  attestationType: string;
  aaguid: string;
  transports: AuthenticatorTransport[];
  signCount: number;
}

/** COSE algorithms the clients offer (core, React Native): ES256 and RS256. */
const ALGORITHMS = [-7, -257];

function refuse(field: string, problem: string) {
  return invalid(`invalid authenticator attestation: ${field}: ${problem}`, [{ field, description: problem }]);
}

/**
 * `challenge` as the client sent it against clientData.challenge. The web sends b64url of the
 * random challenge bytes (== clientData.challenge); React Native sends the string it gave the
 * native API (a hex string), which clientData carries either as is or base64url-encoded.
 */
function challengeMatches(submitted: string, inClientData: string): boolean {
  const a = canonicalB64url(submitted);
  const b = canonicalB64url(inClientData);
  if (a !== undefined && a === b) return true;
  const decoded = decodeBase64Any(inClientData);
  return decoded !== undefined && decoded.toString("utf8") === submitted;
}

interface ClientData {
  type?: unknown;
  challenge?: unknown;
  origin?: unknown;
}

export async function verifyRegistration(p: AuthenticatorParams, settings: WebauthnSettings, field: string): Promise<RegisteredCredential> {
  const at = `${field}.attestation`;
  const credentialIdNormalized = canonicalB64url(p.attestation.credentialId);
  if (!credentialIdNormalized) throw refuse(`${at}.credentialId`, "must be base64url");
  const clientDataBytes = decodeBase64Any(p.attestation.clientDataJson);
  if (!clientDataBytes) throw refuse(`${at}.clientDataJson`, "must be base64url");
  let clientData: ClientData;
  try {
    clientData = JSON.parse(clientDataBytes.toString("utf8")) as ClientData;
  } catch {
    throw refuse(`${at}.clientDataJson`, "does not decode to JSON");
  }
  if (typeof clientData !== "object" || clientData === null) throw refuse(`${at}.clientDataJson`, "must be a JSON object");
  if (clientData.type !== "webauthn.create")
    throw refuse(`${at}.clientDataJson`, `type must be webauthn.create, got ${JSON.stringify(clientData.type)}`);
  if (typeof clientData.challenge !== "string" || !challengeMatches(p.challenge, clientData.challenge)) {
    throw refuse(`${field}.challenge`, "does not match the challenge in clientDataJson");
  }
  if (typeof clientData.origin !== "string") throw refuse(`${at}.clientDataJson`, "origin must be a string");
  if (settings.origins.length > 0 && !settings.origins.includes(clientData.origin)) {
    throw refuse(`${at}.clientDataJson`, `origin ${JSON.stringify(clientData.origin)} is not one this server accepts`);
  }
  const attestationObject = canonicalB64url(p.attestation.attestationObject);
  if (!attestationObject) throw refuse(`${at}.attestationObject`, "must be base64url");

  let verified;
  try {
    verified = await verifyRegistrationResponse({
      response: {
        id: credentialIdNormalized,
        rawId: credentialIdNormalized,
        type: "public-key",
        response: { clientDataJSON: clientDataBytes.toString("base64url"), attestationObject },
        clientExtensionResults: {},
      },
      // Type, challenge and origin were checked above, with our own normalisation.
      expectedChallenge: () => true,
      expectedOrigin: clientData.origin,
      ...(settings.rpId ? { expectedRPID: settings.rpId } : {}),
      requireUserPresence: true,
      // Clients ask for user verification as "preferred": a security key without a PIN is a passkey too.
      requireUserVerification: false,
      supportedAlgorithmIDs: ALGORITHMS,
    });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw refuse(`${at}.attestationObject`, message.slice(0, 300));
  }
  if (!verified.verified) throw refuse(`${at}.attestationObject`, "the attestation statement does not verify");
  const info = verified.registrationInfo;
  if (info.credential.id !== credentialIdNormalized) {
    throw refuse(`${at}.credentialId`, "is not the credential id inside the attestation's authenticator data");
  }
  return {
    name: p.authenticatorName,
    credentialId: p.attestation.credentialId,
    credentialIdNormalized,
    publicKey: Buffer.from(info.credential.publicKey).toString("base64url"),
    attestationType: info.fmt,
    aaguid: info.aaguid,
    transports: [...new Set(p.attestation.transports)],
    signCount: info.credential.counter,
  };
}
