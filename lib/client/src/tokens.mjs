// @ts-check
// Checking the two JWTs the service signs, with its published keys (docs/logins.md §2.3, §3.5):
//   session JWT: raw r‖s over SHA-256(SHA-256("header.payload")) by a SESSION_JWT key;
//   verification token: ES256 (raw r‖s over SHA-256("header.payload")) by a
//     VERIFICATION_TOKEN key, with string claims and `exp` in epoch milliseconds.
import { p256 } from "@noble/curves/nist.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { base64UrlToBytes, hexToBytes, utf8 } from "./bytes.mjs";

/** @typedef {import("../client.mjs").SessionClaims} SessionClaims */
/** @typedef {import("../client.mjs").VerificationTokenClaims} VerificationTokenClaims */

/**
 * @param {string} jwt
 * @returns {{ input: Uint8Array; header: Record<string, unknown>; claims: Record<string, unknown>; signature: Uint8Array }}
 */
function split(jwt) {
  const parts = typeof jwt === "string" ? jwt.split(".") : [];
  if (parts.length !== 3) throw new Error("malformed JWT: expected three dot-separated parts");
  const [h, p, s] = /** @type {[string, string, string]} */ (parts);
  const decode = (/** @type {string} */ part) => JSON.parse(new TextDecoder().decode(base64UrlToBytes(part)));
  return { input: utf8(`${h}.${p}`), header: decode(h), claims: decode(p), signature: base64UrlToBytes(s) };
}

/**
 * @param {Uint8Array} signature
 * @param {Uint8Array} message hashed once more by the verifier
 * @param {readonly string[]} publicKeys
 */
function signedByOneOf(signature, message, publicKeys) {
  if (signature.length !== 64) return false;
  return publicKeys.some((k) => {
    try {
      return p256.verify(signature, message, hexToBytes(k), { format: "compact", lowS: false, prehash: true });
    } catch {
      return false;
    }
  });
}

/**
 * The claims of a session JWT signed by one of `publicKeys` (SESSION_JWT keys); throws when
 * the signature does not verify, a claim is missing, or it has expired.
 * @param {string} jwt
 * @param {readonly string[]} publicKeys
 * @param {{ now?: number }} [options] now: epoch ms (default Date.now())
 * @returns {SessionClaims}
 */
export function verifySessionJwt(jwt, publicKeys, options = {}) {
  const { input, header, claims, signature } = split(jwt);
  if (header.alg !== "ES256") throw new Error("session JWT: alg must be ES256");
  if (!signedByOneOf(signature, sha256(input), publicKeys))
    throw new Error("session JWT: signature is not by a SESSION_JWT key of this service");
  const { exp, public_key, session_type, user_id, organization_id } = claims;
  if (
    typeof exp !== "number" ||
    typeof public_key !== "string" ||
    typeof session_type !== "string" ||
    typeof user_id !== "string" ||
    typeof organization_id !== "string"
  ) {
    throw new Error("session JWT: exp, public_key, session_type, user_id and organization_id are required");
  }
  if (exp * 1000 <= (options.now ?? Date.now())) throw new Error("session JWT: expired");
  return /** @type {SessionClaims} */ (/** @type {unknown} */ (claims));
}

const TOKEN_CLAIMS = /** @type {const} */ (["exp", "id", "organization_id", "verification_type", "contact", "public_key"]);

/**
 * The claims of a verification token signed by one of `publicKeys` (VERIFICATION_TOKEN
 * keys); throws when the signature does not verify, a claim is missing, or it has expired.
 * @param {string} token
 * @param {readonly string[]} publicKeys
 * @param {{ now?: number }} [options] now: epoch ms (default Date.now())
 * @returns {VerificationTokenClaims}
 */
export function verifyVerificationToken(token, publicKeys, options = {}) {
  const { input, header, claims, signature } = split(token);
  if (header.alg !== "ES256" || header.typ !== "JWT") throw new Error("verification token: must be an ES256 JWT");
  if (!signedByOneOf(signature, input, publicKeys))
    throw new Error("verification token: signature is not by a VERIFICATION_TOKEN key of this service");
  for (const c of TOKEN_CLAIMS) {
    if (typeof claims[c] !== "string" || claims[c] === "") throw new Error(`verification token: claim ${c} is missing`);
  }
  if (!(Number(claims.exp) > (options.now ?? Date.now()))) throw new Error("verification token: expired");
  return /** @type {VerificationTokenClaims} */ (/** @type {unknown} */ (claims));
}
