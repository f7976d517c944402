// @ts-check
// What @turnkey/crypto's encryptOtpCodeToBundle does for @turnkey/core's verifyOtp, with the
// signer key this service publishes instead of the hosted one core pins:
//   1. the otpEncryptionTargetBundle from init_otp is checked: its `enclaveQuorumPublic` must
//      be, as a string, one of the OTP_ENCRYPTION_TARGET keys (as the SDK compares it), and
//      `dataSignature` (DER) must verify over SHA-256 of the bytes `data` hex-decodes to;
//   2. {"otp_code","public_key"} is encrypted to the bundle's `targetPublic` with HPKE base
//      mode (DHKEM P-256/HKDF-SHA256, HKDF-SHA256, AES-256-GCM, info "turnkey_hpke") and the
//      SDK's additional data enc ‖ pkR;
//   3. the result is the JSON text {"encappedPublic","ciphertext"} verify_otp takes.
import { p256 } from "@noble/curves/nist.js";
import { Aes256Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from "@hpke/core";
import { bytesToHex, concatBytes, hexToBytes, utf8 } from "./bytes.mjs";

const suite = new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes256Gcm() });
const INFO = utf8("turnkey_hpke");

/**
 * The key init_otp's bundle asks codes to be encrypted to (uncompressed hex), once its
 * signature by one of `signerPublicKeys` is verified; throws otherwise.
 * @param {string} otpEncryptionTargetBundle
 * @param {readonly string[]} signerPublicKeys OTP_ENCRYPTION_TARGET keys, uncompressed hex
 * @returns {string}
 */
export function verifyOtpTargetBundle(otpEncryptionTargetBundle, signerPublicKeys) {
  /** @type {Record<string, unknown>} */
  let bundle;
  try {
    bundle = JSON.parse(otpEncryptionTargetBundle);
  } catch {
    throw new Error("otpEncryptionTargetBundle is not JSON");
  }
  const { enclaveQuorumPublic, dataSignature, data } = bundle ?? {};
  if (typeof enclaveQuorumPublic !== "string" || typeof dataSignature !== "string" || typeof data !== "string") {
    throw new Error("otpEncryptionTargetBundle must hold enclaveQuorumPublic, dataSignature and data");
  }
  // As @turnkey/crypto: the signer is named by the bundle and must be exactly an expected key.
  if (!signerPublicKeys.includes(enclaveQuorumPublic)) {
    throw new Error(`otpEncryptionTargetBundle is signed by ${enclaveQuorumPublic.slice(0, 20)}…, which is not one of this service's OTP_ENCRYPTION_TARGET keys`);
  }
  const signed = hexToBytes(data);
  let valid = false;
  try {
    valid = p256.verify(hexToBytes(dataSignature), signed, hexToBytes(enclaveQuorumPublic), { format: "der", lowS: false, prehash: true });
  } catch {
    valid = false;
  }
  if (!valid) throw new Error("otpEncryptionTargetBundle signature verification failed");
  const { targetPublic } = /** @type {Record<string, unknown>} */ (JSON.parse(new TextDecoder().decode(signed)) ?? {});
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
  const pkR = hexToBytes(targetPublic);
  const recipientPublicKey = await suite.kem.deserializePublicKey(pkR.buffer);
  const sender = await suite.createSenderContext({ recipientPublicKey, info: INFO.buffer });
  const enc = new Uint8Array(sender.enc);
  const plaintext = utf8(JSON.stringify({ otp_code: otpCode, public_key: publicKey }));
  const ciphertext = new Uint8Array(await sender.seal(plaintext.buffer, concatBytes(enc, pkR).buffer));
  return JSON.stringify({ encappedPublic: bytesToHex(enc), ciphertext: bytesToHex(ciphertext) });
}
