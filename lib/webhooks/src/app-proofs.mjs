// @ts-check
// App proofs (activity.appProofs when a submission sets generateAppProofs: true).
// These are signatures by the service's own P-256 key, published at
// GET <base>/public/v1/discovery/app-proofs/keys — not hardware enclave attestations.

import { Buffer } from "node:buffer";
import { createPublicKey, verify as cryptoVerify } from "node:crypto";

export const APP_PROOF_SCHEME = "SIGNATURE_SCHEME_EPHEMERAL_KEY_P256";

/**
 * @typedef {import("../webhooks.d.mts").AppProof} AppProof
 * @typedef {import("../webhooks.d.mts").AppProofFailureReason} AppProofFailureReason
 * @typedef {{ ok: false, reason: AppProofFailureReason, message: string }} AppProofFailure
 */

/**
 * @param {AppProofFailureReason} reason
 * @param {string} message
 * @returns {AppProofFailure}
 */
function bad(reason, message) {
  return { ok: false, reason, message };
}

/**
 * Verifies an app proof: its scheme, that its key is one you trust (the 130-byte hex
 * `publicKey` values from the discovery route), and the ECDSA P-256 signature (r‖s hex)
 * over SHA-256 of the exact `proofPayload` text.
 * @param {AppProof} appProof
 * @param {{ trustedPublicKeys: Iterable<string> }} options
 * @returns {{ ok: true, payload: unknown } | AppProofFailure}
 */
export function verifyAppProof(appProof, options) {
  if (!appProof || typeof appProof !== "object") return bad("bad_proof", "an app proof must be an object");
  if (appProof.scheme !== APP_PROOF_SCHEME) return bad("unsupported_scheme", `scheme must be ${APP_PROOF_SCHEME}`);
  const pub = typeof appProof.publicKey === "string" ? appProof.publicKey.toLowerCase() : "";
  if (!/^[0-9a-f]{260}$/.test(pub)) return bad("bad_key", "publicKey must be 130 bytes of hex (encryption key ‖ signing key)");
  const trusted = new Set([...options.trustedPublicKeys].map((k) => String(k).toLowerCase()));
  if (!trusted.has(pub)) return bad("untrusted_key", "the proof is not signed by a trusted service key");
  const signing = Buffer.from(pub.slice(130), "hex");
  if (signing[0] !== 0x04) return bad("bad_key", "the signing key must be an uncompressed P-256 point");
  if (typeof appProof.signature !== "string" || !/^[0-9a-fA-F]{128}$/.test(appProof.signature)) {
    return bad("bad_signature_encoding", "signature must be 64 bytes (r‖s) of hex");
  }
  if (typeof appProof.proofPayload !== "string") return bad("bad_proof", "proofPayload must be a string");
  let key;
  try {
    key = createPublicKey({
      key: { kty: "EC", crv: "P-256", x: signing.subarray(1, 33).toString("base64url"), y: signing.subarray(33).toString("base64url") },
      format: "jwk",
    });
  } catch {
    return bad("bad_key", "the signing key is not a P-256 point");
  }
  const ok = cryptoVerify(
    "sha256",
    Buffer.from(appProof.proofPayload, "utf8"),
    { key, dsaEncoding: "ieee-p1363" },
    Buffer.from(appProof.signature, "hex"),
  );
  if (!ok) return bad("bad_signature", "the signature does not match the payload");
  try {
    return { ok: true, payload: JSON.parse(appProof.proofPayload) };
  } catch {
    return bad("bad_proof", "proofPayload is not JSON");
  }
}
