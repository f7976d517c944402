// X-Stamp-Attested (docs/stamps.md §4): what @turnkey/core's loginWithOtp (and loginWithOauth)
// stamp stamp_login with. The request is signed by a P-256 key that an attestation vouches
// for — a verification token bound to that key, or an OIDC token whose nonce commits to it:
//
//   X-Stamp-Attested: base64url(JSON{ publicKeyAttestation, scheme, publicKey, signature })
//
// verify: the header is decoded and `signature` (DER hex, ECDSA P-256 over SHA-256 of the raw
// body) checked with `publicKey` — no body parse, no store. resolve: the scheme turns the
// attestation into the user it names (auth/attested/), who becomes the principal, of kind
// "attested". Such a principal may do exactly one thing: submit stamp_login, which logs it in
// and consumes a verification token (an OIDC token stays valid until its exp). Every other activity and every query is refused by the
// pipeline once the route is known: the strategy declares it (`signs`), auth/strategies.ts
// refuseUnsignableRoute applies it.
import { unauthenticated } from "../errors.ts";
import { publicKeyProblem, verifySignature } from "../crypto/public-keys.ts";
import type { CredentialType } from "../store/schema.ts";
import type { Principal } from "./principal.ts";
import { kindAndId, type StampStrategy, type VerifiedStamp } from "./strategy.ts";
import type { AttestationScheme, AttestedStamp } from "./attested/scheme.ts";
import { verificationTokenScheme } from "./attested/verification-token.ts";
import { oidcScheme } from "./attested/oidc.ts";
import type { LoginSettings } from "../logins/settings.ts";

/** principal.credential.kind of an attested stamp; also the prefix of its rate-limit bucket. */
const KIND = "attested";

/** The one activity an attested stamp may sign. */
export const ATTESTED_STAMP_TYPE = "ACTIVITY_TYPE_STAMP_LOGIN";
/**
 * How an attested stamp's credential is recorded (the submitter's vote; `credentials` in
 * policy consensus): the type upstream gave OTP login keys. Its id is the verification token's.
 */
export const ATTESTED_CREDENTIAL_TYPE: CredentialType = "CREDENTIAL_TYPE_OTP_AUTH_KEY_P256";

/**
 * The schemes, keyed by the stamp's `scheme` (request data: a Map, so no name reaches
 * Object.prototype). STAMP_ATTESTED_SCHEME_P256_OIDC: OAuth logins (an OIDC token whose nonce
 * is sha256hex(publicKey), attested/oidc.ts).
 */
const SCHEMES = new Map<string, AttestationScheme>([
  ["STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN", verificationTokenScheme],
  ["STAMP_ATTESTED_SCHEME_P256_OIDC", oidcScheme],
]);

const MAX_STAMP_LENGTH = 16384;
const B64URL = /^[A-Za-z0-9_-]+={0,2}$/;

const malformed = (why: string) => unauthenticated("UNAUTHENTICATED", `malformed attested stamp: ${why}`);

function decode(value: string | string[]): { stamp: AttestedStamp; scheme: AttestationScheme } {
  if (Array.isArray(value)) throw unauthenticated("UNAUTHENTICATED", "exactly one X-Stamp-Attested header is allowed");
  if (!value || value.length > MAX_STAMP_LENGTH || !B64URL.test(value)) throw malformed("X-Stamp-Attested must be base64url");
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, "base64url").toString("utf8"));
  } catch {
    throw malformed("X-Stamp-Attested does not decode to JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw malformed("X-Stamp-Attested must be a JSON object");
  const { publicKeyAttestation, scheme, publicKey, signature } = parsed as Record<string, unknown>;
  if (
    typeof publicKeyAttestation !== "string" ||
    typeof scheme !== "string" ||
    typeof publicKey !== "string" ||
    typeof signature !== "string"
  ) {
    throw malformed("publicKeyAttestation, scheme, publicKey and signature must be strings");
  }
  const handler = SCHEMES.get(scheme);
  if (!handler) throw malformed(`unsupported attestation scheme ${JSON.stringify(scheme.slice(0, 64))}`);
  const keyProblem = publicKeyProblem("API_KEY_CURVE_P256", publicKey);
  if (keyProblem) throw malformed(`publicKey: ${keyProblem}`);
  if (!/^[0-9a-fA-F]+$/.test(signature) || signature.length % 2 !== 0 || signature.length > 300)
    throw malformed("signature must be DER hex");
  if (publicKeyAttestation === "") throw malformed("publicKeyAttestation must be set");
  return { stamp: { attestation: publicKeyAttestation, scheme, publicKey, signature }, scheme: handler };
}

/**
 * The refusal for an attested principal anywhere but stamp_login: the pipeline asks once the
 * route is known (docs/stamps.md §4.4) — the strategy itself never reads the body.
 */
const onlyStampLogin = () =>
  unauthenticated(
    "UNAUTHENTICATED",
    `an X-Stamp-Attested stamp may only sign ${ATTESTED_STAMP_TYPE} (POST /public/v1/submit/stamp_login); ` +
      "sign every other request with the session key it returns (X-Stamp)",
  );

export const attestedStamps: StampStrategy = {
  header: "x-stamp-attested",
  headerName: "X-Stamp-Attested",
  // Upstream's SIGNATURE_MISSING text predates this header and does not name it.
  namedWhenMissing: false,
  credentialKind: KIND,
  rateLimitKey: kindAndId,
  // The attested key is not an API key: only the organization's rules apply.
  allowlistKey: () => undefined,
  signs: { activityTypes: [ATTESTED_STAMP_TYPE], refusal: onlyStampLogin },
  async verify(value, rawBody, logins?: LoginSettings): Promise<VerifiedStamp> {
    const { stamp, scheme } = decode(value);
    if (!(await verifySignature("API_KEY_CURVE_P256", stamp.publicKey, rawBody, stamp.signature))) {
      throw unauthenticated("SIGNATURE_INVALID", "could not verify attested stamp signature");
    }
    return {
      async resolve(db, chains, organizationId, _scope, now, rider) {
        // The attested user may sit below the target whatever the op's scope (core sends the
        // parent organization's id): the scheme resolves downward itself.
        const found = await scheme.resolve(db, chains, stamp, organizationId, now, rider, logins);
        const principal: Principal = {
          ...found.principal,
          credential: { kind: KIND, id: found.credentialId, type: ATTESTED_CREDENTIAL_TYPE, expiresAt: found.expiresAt },
          stamp: { publicKey: stamp.publicKey, scheme: stamp.scheme, signature: stamp.signature },
        };
        return { principal, rider: found.rider };
      },
    };
  },
};
