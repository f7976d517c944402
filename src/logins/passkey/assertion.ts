// A passkey assertion as X-Stamp-WebAuthn carries it (docs/stamps.md §3): what can be checked
// without the store (checkAssertion: the challenge binds the exact body, type, origin, RP ID
// hash, user presence), and the signature once the credential's key is known
// (assertionSignatureValid).
import { verifySignature } from "@simplewebauthn/server/helpers";
import { decodeBase64Any, sha256, stampChallenge } from "./encoding.ts";
import type { WebauthnSettings } from "./registration.ts";

export interface Assertion {
  /** b64url, no padding. */
  credentialId: string;
  authenticatorData: Buffer;
  clientDataJson: Buffer;
  signature: Buffer;
  /** The authenticator's signature counter in authenticatorData. */
  signCount: number;
}

/** Why an assertion is refused: malformed (cannot be read) or invalid (read, but wrong). */
export type AssertionProblem = { malformed: string } | { invalid: string };

const MAX_FIELD = 16384;
const FLAG_USER_PRESENT = 0x01;

/** Decodes the four b64url (or base64) fields of the stamp. */
export function decodeAssertion(fields: Record<string, unknown>): Assertion | AssertionProblem {
  const bytes = new Map<string, Buffer>();
  for (const name of ["authenticatorData", "clientDataJson", "credentialId", "signature"]) {
    const v = fields[name];
    if (typeof v !== "string" || v.length === 0 || v.length > MAX_FIELD)
      return { malformed: `${name} must be a non-empty base64url string` };
    const b = decodeBase64Any(v);
    if (!b || b.length === 0) return { malformed: `${name} must be base64url` };
    bytes.set(name, b);
  }
  const authenticatorData = bytes.get("authenticatorData")!;
  // rpIdHash (32) ‖ flags (1) ‖ signCount (4) at least.
  if (authenticatorData.length < 37) return { malformed: "authenticatorData is too short" };
  return {
    credentialId: bytes.get("credentialId")!.toString("base64url"),
    authenticatorData,
    clientDataJson: bytes.get("clientDataJson")!,
    signature: bytes.get("signature")!,
    signCount: authenticatorData.readUInt32BE(33),
  };
}

/** The origin clientData names ("" when it names none); checkAssertion has parsed it once already. */
export function clientDataOrigin(a: Assertion): string {
  try {
    const clientData = JSON.parse(a.clientDataJson.toString("utf8")) as { origin?: unknown };
    return typeof clientData.origin === "string" ? clientData.origin : "";
  } catch {
    return "";
  }
}

/** Everything but the signature: clientData binds this body; origin, RP ID and presence as configured. */
export function checkAssertion(a: Assertion, rawBody: Uint8Array, settings: WebauthnSettings): AssertionProblem | undefined {
  let clientData: { type?: unknown; challenge?: unknown; origin?: unknown };
  try {
    clientData = JSON.parse(a.clientDataJson.toString("utf8")) as typeof clientData;
  } catch {
    return { malformed: "clientDataJson does not decode to JSON" };
  }
  if (typeof clientData !== "object" || clientData === null) return { malformed: "clientDataJson must be a JSON object" };
  if (clientData.type !== "webauthn.get") return { invalid: `clientDataJson type must be webauthn.get` };
  const challenge = typeof clientData.challenge === "string" ? decodeBase64Any(clientData.challenge) : undefined;
  if (!challenge || !challenge.equals(stampChallenge(rawBody))) {
    return { invalid: "the challenge is not the SHA-256 of the request body" };
  }
  if (settings.origins.length > 0 && (typeof clientData.origin !== "string" || !settings.origins.includes(clientData.origin))) {
    return { invalid: `origin ${JSON.stringify(String(clientData.origin).slice(0, 200))} is not one this server accepts` };
  }
  if (settings.rpId !== undefined && !a.authenticatorData.subarray(0, 32).equals(sha256(settings.rpId))) {
    return { invalid: "the RP ID hash is not that of this server's RP ID" };
  }
  if ((a.authenticatorData[32]! & FLAG_USER_PRESENT) === 0) return { invalid: "the user-present flag is not set" };
  return undefined;
}

/** The signature over authenticatorData ‖ SHA-256(clientDataJSON), with the stored COSE key (b64url). */
export async function assertionSignatureValid(a: Assertion, cosePublicKey: string): Promise<boolean> {
  try {
    return await verifySignature({
      signature: new Uint8Array(a.signature),
      data: new Uint8Array(Buffer.concat([a.authenticatorData, sha256(a.clientDataJson)])),
      credentialPublicKey: new Uint8Array(Buffer.from(cosePublicKey, "base64url")),
    });
  } catch {
    // A signature that is not even DER, a key the library cannot use: not valid.
    return false;
  }
}
