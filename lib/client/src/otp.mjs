// @ts-check
// What @turnkey/crypto's encryptOtpCodeToBundle does for @turnkey/core's verifyOtp, with the
// signer key this service publishes instead of the hosted one core pins (docs/logins.md §3.3,
// §3.4, §5):
//   1. the otpEncryptionTargetBundle from init_otp is checked: its `enclaveQuorumPublic` must
//      be, as a string, one of the OTP_ENCRYPTION_TARGET keys (as the SDK compares it), and
//      `dataSignature` (DER) must verify over SHA-256 of the bytes `data` hex-decodes to;
//   2. {"otp_code","public_key"} is encrypted to the bundle's `targetPublic` with HPKE base
//      mode (DHKEM P-256/HKDF-SHA256, HKDF-SHA256, AES-256-GCM, info "turnkey_hpke") and the
//      SDK's additional data enc ‖ pkR;
//   3. the result is the JSON text {"encappedPublic","ciphertext"} verify_otp takes.
import { hpkeSealToText, verifySignedBundle } from "./bundles.mjs";
import { utf8 } from "./bytes.mjs";

/**
 * The key init_otp's bundle asks codes to be encrypted to (uncompressed hex), once its
 * signature by one of `signerPublicKeys` is verified; throws otherwise.
 * @param {string} otpEncryptionTargetBundle
 * @param {readonly string[]} signerPublicKeys OTP_ENCRYPTION_TARGET keys, uncompressed hex
 * @returns {string}
 */
export function verifyOtpTargetBundle(otpEncryptionTargetBundle, signerPublicKeys) {
  const { targetPublic } = verifySignedBundle(
    otpEncryptionTargetBundle,
    signerPublicKeys,
    "otpEncryptionTargetBundle",
    "OTP_ENCRYPTION_TARGET",
  );
  if (typeof targetPublic !== "string" || !/^04[0-9a-fA-F]{128}$/.test(targetPublic)) {
    throw new Error("otpEncryptionTargetBundle data must name an uncompressed P-256 targetPublic");
  }
  return targetPublic;
}

/**
 * The encryptedOtpBundle for verify_otp (V2).
 * @param {import("../client.mjs").EncryptOtpCodeParams & { signerPublicKeys: readonly string[] }} p
 *   publicKey: compressed P-256 hex the verification token will be bound to.
 * @returns {Promise<string>}
 */
export async function encryptOtpCode({ otpCode, otpEncryptionTargetBundle, publicKey, signerPublicKeys }) {
  const targetPublic = verifyOtpTargetBundle(otpEncryptionTargetBundle, signerPublicKeys);
  return hpkeSealToText(targetPublic, utf8(JSON.stringify({ otp_code: otpCode, public_key: publicKey })));
}
