// @ts-check
// Signed bundles and their HPKE envelope, as @turnkey/crypto reads and writes them, with the
// signer keys this service publishes instead of the hosted ones the SDK pins
// (docs/export-import.md §1, §2, §3, §5):
//   - a bundle {enclaveQuorumPublic, dataSignature, data[, version]} is trusted when
//     `enclaveQuorumPublic` is, as a string, one of the expected keys (as the SDK compares it)
//     and `dataSignature` (DER) verifies over SHA-256 of the bytes `data` hex-decodes to;
//   - HPKE base mode (DHKEM P-256/HKDF-SHA256, HKDF-SHA256, AES-256-GCM, info "turnkey_hpke")
//     with the SDK's additional data enc ‖ pkR (both uncompressed points).
// decryptExportBundle opens export_wallet / export_wallet_account bundles; encryptWalletToBundle
// makes import_wallet's encryptedBundle from init_import_wallet's importBundle.
import { p256 } from "@noble/curves/nist.js";
import { Aes256Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from "@hpke/core";
import { bytesToHex, concatBytes, hexToBytes, utf8 } from "./bytes.mjs";

const suite = new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes256Gcm() });
const INFO = utf8("turnkey_hpke");

/**
 * The signed data of a bundle (the JSON object `data` hex-decodes to), once its signer is one
 * of `signerPublicKeys` and its signature verifies; throws otherwise, naming `what`.
 * @param {string} bundleText
 * @param {readonly string[]} signerPublicKeys uncompressed hex
 * @param {string} what e.g. "exportBundle"
 * @param {string} purpose the keys' purpose, for the error
 * @returns {Record<string, unknown>}
 */
export function verifySignedBundle(bundleText, signerPublicKeys, what, purpose) {
  /** @type {Record<string, unknown>} */
  let bundle;
  try {
    bundle = JSON.parse(bundleText);
  } catch {
    throw new Error(`${what} is not JSON`);
  }
  const { enclaveQuorumPublic, dataSignature, data } = bundle ?? {};
  if (typeof enclaveQuorumPublic !== "string" || typeof dataSignature !== "string" || typeof data !== "string") {
    throw new Error(`${what} must hold enclaveQuorumPublic, dataSignature and data`);
  }
  // As @turnkey/crypto: the signer is named by the bundle and must be exactly an expected key.
  if (!signerPublicKeys.includes(enclaveQuorumPublic)) {
    throw new Error(`${what} is signed by ${enclaveQuorumPublic.slice(0, 20)}…, which is not one of this service's ${purpose} keys`);
  }
  const signed = hexToBytes(data);
  let valid;
  try {
    valid = p256.verify(hexToBytes(dataSignature), signed, hexToBytes(enclaveQuorumPublic), { format: "der", lowS: false, prehash: true });
  } catch {
    valid = false;
  }
  if (!valid) throw new Error(`${what} signature verification failed`);
  /** @type {unknown} */
  let inner;
  try {
    inner = JSON.parse(new TextDecoder().decode(signed));
  } catch {
    throw new Error(`${what} data is not JSON`);
  }
  if (typeof inner !== "object" || inner === null) throw new Error(`${what} data must be a JSON object`);
  return /** @type {Record<string, unknown>} */ (inner);
}

/**
 * `plaintext` sealed to the uncompressed P-256 key `recipientHex`, as the JSON text
 * {"encappedPublic","ciphertext"} (the SDK's formatHpkeBuf).
 * @param {string} recipientHex
 * @param {Uint8Array} plaintext
 * @returns {Promise<string>}
 */
export async function hpkeSealToText(recipientHex, plaintext) {
  const pkR = hexToBytes(recipientHex);
  const recipientPublicKey = await suite.kem.deserializePublicKey(pkR.buffer);
  const sender = await suite.createSenderContext({ recipientPublicKey, info: INFO.buffer });
  const enc = new Uint8Array(sender.enc);
  const ciphertext = new Uint8Array(await sender.seal(plaintext.slice().buffer, concatBytes(enc, pkR).buffer));
  return JSON.stringify({ encappedPublic: bytesToHex(enc), ciphertext: bytesToHex(ciphertext) });
}

/**
 * A P-256 key pair for export_wallet's targetPublicKey (the SDK's generateP256KeyPair):
 * `privateKey` the 32-byte scalar in hex (decryptExportBundle's embeddedKey), `publicKey`
 * compressed and `publicKeyUncompressed` uncompressed hex.
 * @returns {import("../client.mjs").TargetKeyPair}
 */
export function generateTargetKeyPair() {
  const secret = p256.utils.randomSecretKey();
  return {
    privateKey: bytesToHex(secret),
    publicKey: bytesToHex(p256.getPublicKey(secret, true)),
    publicKeyUncompressed: bytesToHex(p256.getPublicKey(secret, false)),
  };
}

/**
 * What an export bundle carries, decrypted with `embeddedKey`: the mnemonic (returnMnemonic)
 * or the private key as hex. Throws when the signer is not one of `signerPublicKeys`, the
 * signature or the organization id does not match, or the key does not open it.
 * @param {import("../client.mjs").DecryptExportBundleParams & { signerPublicKeys: readonly string[] }} p
 * @returns {Promise<string>}
 */
export async function decryptExportBundle({ exportBundle, embeddedKey, organizationId, returnMnemonic, signerPublicKeys }) {
  const signed = verifySignedBundle(exportBundle, signerPublicKeys, "exportBundle", "BUNDLE_SIGNER");
  if (signed.organizationId !== organizationId) {
    throw new Error(`exportBundle is for organization ${String(signed.organizationId)}, not ${organizationId}`);
  }
  const { encappedPublic, ciphertext } = signed;
  if (
    typeof encappedPublic !== "string" ||
    !/^04[0-9a-fA-F]{128}$/.test(encappedPublic) ||
    typeof ciphertext !== "string" ||
    !/^(?:[0-9a-fA-F]{2})+$/.test(ciphertext)
  ) {
    throw new Error("exportBundle data must hold encappedPublic (uncompressed hex) and ciphertext (hex)");
  }
  const secret = hexToBytes(embeddedKey);
  const pkR = p256.getPublicKey(secret, false);
  const enc = hexToBytes(encappedPublic);
  const recipientKey = await suite.kem.deserializePrivateKey(secret.slice().buffer);
  const recipient = await suite.createRecipientContext({ recipientKey, enc: enc.slice().buffer, info: INFO.buffer });
  let plain;
  try {
    plain = new Uint8Array(await recipient.open(hexToBytes(ciphertext).buffer, concatBytes(enc, pkR).buffer));
  } catch {
    throw new Error("exportBundle could not be decrypted with this key (was it exported to its public key?)");
  } finally {
    secret.fill(0);
  }
  const out = returnMnemonic ? new TextDecoder().decode(plain) : bytesToHex(plain);
  plain.fill(0);
  return out;
}

/**
 * import_wallet's encryptedBundle: the mnemonic HPKE-encrypted to the target of
 * init_import_wallet's importBundle, once the bundle's signer, signature, organization and
 * user are checked.
 * @param {import("../client.mjs").EncryptWalletToBundleParams & { signerPublicKeys: readonly string[] }} p
 * @returns {Promise<string>}
 */
export async function encryptWalletToBundle({ mnemonic, importBundle, userId, organizationId, signerPublicKeys }) {
  const signed = verifySignedBundle(importBundle, signerPublicKeys, "importBundle", "BUNDLE_SIGNER");
  if (signed.organizationId !== organizationId)
    throw new Error(`importBundle is for organization ${String(signed.organizationId)}, not ${organizationId}`);
  if (signed.userId !== userId) throw new Error(`importBundle is for user ${String(signed.userId)}, not ${userId}`);
  const { targetPublic } = signed;
  if (typeof targetPublic !== "string" || !/^04[0-9a-fA-F]{128}$/.test(targetPublic)) {
    throw new Error("importBundle data must name an uncompressed P-256 targetPublic");
  }
  return hpkeSealToText(targetPublic, utf8(mnemonic));
}
