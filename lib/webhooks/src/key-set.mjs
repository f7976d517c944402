// @ts-check
// Signing keys, from the three places a receiver gets them: a published JWK ("Published
// signing keys"), a caller's Map value (KeyObject or base64url x), or a whole JWKS document.
// Every key is checked when it is read; an unusable one is kept as a failed entry so that a
// delivery naming it is reported as bad_key rather than missing_key.

import { Buffer } from "node:buffer";
import { KeyObject, createPublicKey } from "node:crypto";
import { errorText } from "./error-text.mjs";
import { SIGNATURE_ALGORITHM, SIGNATURE_VERSION } from "./protocol.mjs";

/** @typedef {{ ok: true, key: KeyObject } | { ok: false, message: string }} KeyEntry */

const B64URL_RE = /^[A-Za-z0-9_-]*$/;

/**
 * @param {unknown} x
 * @returns {KeyEntry}
 */
export function keyFromX(x) {
  if (typeof x !== "string") return { ok: false, message: "public key x is missing or not a string" };
  if (!B64URL_RE.test(x)) return { ok: false, message: "public key x is not base64url (no padding)" };
  const raw = Buffer.from(x, "base64url");
  if (raw.length !== 32) return { ok: false, message: `public key x decodes to ${raw.length} bytes, expected 32` };
  if (raw.toString("base64url") !== x) return { ok: false, message: "public key x is not canonical base64url" };
  try {
    return { ok: true, key: createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" }) };
  } catch (e) {
    return { ok: false, message: `public key x is not a usable Ed25519 key: ${errorText(e)}` };
  }
}

/**
 * A value of the caller's kid → key Map.
 * @param {unknown} value
 * @returns {KeyEntry}
 */
export function keyFromMapValue(value) {
  if (value instanceof KeyObject) {
    if (value.type !== "public" || value.asymmetricKeyType !== "ed25519") {
      return { ok: false, message: `key is a ${value.type} ${value.asymmetricKeyType ?? "symmetric"} key, expected a public ed25519 key` };
    }
    return { ok: true, key: value };
  }
  if (typeof value === "string") return keyFromX(value);
  return { ok: false, message: "key must be a public Ed25519 KeyObject or a base64url x string" };
}

/**
 * One published JWK, checked against "Published signing keys".
 * @param {Record<string, unknown>} jwk
 * @returns {KeyEntry}
 */
export function keyFromJwk(jwk) {
  if (jwk.kty !== "OKP") return { ok: false, message: `published key has kty ${JSON.stringify(jwk.kty)}, expected "OKP"` };
  if (jwk.crv !== "Ed25519") return { ok: false, message: `published key has crv ${JSON.stringify(jwk.crv)}, expected "Ed25519"` };
  if (jwk.alg !== undefined && jwk.alg !== "EdDSA" && jwk.alg !== "Ed25519") {
    return { ok: false, message: `published key has alg ${JSON.stringify(jwk.alg)}, expected "EdDSA"` };
  }
  if (jwk.use !== undefined && jwk.use !== "sig")
    return { ok: false, message: `published key has use ${JSON.stringify(jwk.use)}, expected "sig"` };
  if (jwk.service_signature_algorithm !== undefined && jwk.service_signature_algorithm !== SIGNATURE_ALGORITHM) {
    return {
      ok: false,
      message: `published key has service_signature_algorithm ${JSON.stringify(jwk.service_signature_algorithm)}, expected "${SIGNATURE_ALGORITHM}"`,
    };
  }
  if (jwk.service_signature_version !== undefined && jwk.service_signature_version !== SIGNATURE_VERSION) {
    return {
      ok: false,
      message: `published key has service_signature_version ${JSON.stringify(jwk.service_signature_version)}, expected "${SIGNATURE_VERSION}"`,
    };
  }
  return keyFromX(jwk.x);
}

/**
 * A parsed JWKS document → kid → entry; the error text when it is not a key set at all.
 * Items without a kid are skipped (nothing can name them); a kid published twice is unusable.
 * @param {unknown} json
 * @returns {Map<string, KeyEntry> | string}
 */
export function keysFromJwks(json) {
  const list = json !== null && typeof json === "object" ? /** @type {{ keys?: unknown }} */ (json).keys : undefined;
  if (!Array.isArray(list)) return 'JWKS response has no "keys" array';
  /** @type {Map<string, KeyEntry>} */
  const keys = new Map();
  for (const item of /** @type {unknown[]} */ (list)) {
    if (item === null || typeof item !== "object" || Array.isArray(item)) continue;
    const jwk = /** @type {Record<string, unknown>} */ (item);
    if (typeof jwk.kid !== "string" || jwk.kid === "") continue;
    keys.set(jwk.kid, keys.has(jwk.kid) ? { ok: false, message: "the key set publishes this kid more than once" } : keyFromJwk(jwk));
  }
  return keys;
}
