// The two OTP encryption envelopes (docs/logins.md §3.3, §3.4):
//   otpEncryptionTargetBundle (init_otp): a fresh P-256 key per OTP, announced in data signed
//     by the OTP_ENCRYPTION_TARGET service key — what @turnkey/crypto's encryptOtpCodeToBundle
//     checks (with dangerouslyOverrideSignerPublicKey = our key) before encrypting to it;
//   encryptedOtpBundle (verify_otp V2): HPKE base mode, DHKEM(P-256, HKDF-SHA256),
//     HKDF-SHA256, AES-256-GCM, info "turnkey_hpke" — with the SDK's non-standard AAD
//     enc ‖ pkR (both 65-byte uncompressed points) instead of the empty one.
import { Aes256Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from "@hpke/core";
import { signP256, privateScalar, type P256Private } from "../../crypto/p256.ts";
import type { ServiceKey } from "../service-keys.ts";

/** The bundle init_otp returns: the JSON string clients parse. */
export function targetBundle(signer: ServiceKey, targetPublicUncompressed: string): string {
  const data = Buffer.from(JSON.stringify({ targetPublic: targetPublicUncompressed }), "utf8");
  return JSON.stringify({
    enclaveQuorumPublic: signer.signer.publicUncompressed,
    // DER over SHA-256 of the bytes `data` hex-decodes to (signP256 hashes once).
    dataSignature: signP256(signer.signer, data, "der").toString("hex"),
    data: data.toString("hex"),
  });
}

const suite = new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes256Gcm() });
const INFO = new TextEncoder().encode("turnkey_hpke");
// Bounds on what a client can make the server decrypt (the plaintext is ~120 bytes).
const MAX_CIPHERTEXT_HEX = 4096;

export interface OtpPlaintext {
  otpCode: string;
  /** The client's key the verification token will be bound to (compressed hex as sent). */
  publicKey: string;
}

/** Why the bundle is not readable (the client's mistake: a 400), or its contents. */
export async function openOtpBundle(target: P256Private, encryptedOtpBundle: string): Promise<OtpPlaintext | { problem: string }> {
  let outer: unknown;
  try {
    outer = JSON.parse(encryptedOtpBundle);
  } catch {
    return { problem: "must be the JSON text encryptOtpCodeToBundle returns" };
  }
  const o = outer as Record<string, unknown> | null;
  const enc = typeof o?.encappedPublic === "string" ? o.encappedPublic : undefined;
  const ct = typeof o?.ciphertext === "string" ? o.ciphertext : undefined;
  if (!enc || !/^04[0-9a-fA-F]{128}$/.test(enc)) return { problem: "encappedPublic must be an uncompressed P-256 point (hex)" };
  if (!ct || !/^[0-9a-fA-F]+$/.test(ct) || ct.length % 2 !== 0 || ct.length < 34 || ct.length > MAX_CIPHERTEXT_HEX) {
    return { problem: "ciphertext must be hex (AES-GCM ciphertext and tag)" };
  }
  const encBytes = Buffer.from(enc, "hex");
  const pkR = Buffer.from(target.publicUncompressed, "hex");
  let plain: ArrayBuffer;
  const scalar = privateScalar(target);
  try {
    const recipientKey = await suite.kem.deserializePrivateKey(scalar);
    const ctx = await suite.createRecipientContext({ recipientKey, enc: encBytes, info: INFO });
    plain = await ctx.open(Buffer.from(ct, "hex"), Buffer.concat([encBytes, pkR]));
  } catch {
    return { problem: "could not be decrypted with this OTP's encryption target (was it encrypted to this otpId's bundle?)" };
  } finally {
    scalar.fill(0);
  }
  let inner: unknown;
  try {
    inner = JSON.parse(Buffer.from(plain).toString("utf8"));
  } catch {
    return { problem: "decrypted content is not JSON" };
  }
  const i = inner as Record<string, unknown> | null;
  if (typeof i?.otp_code !== "string" || typeof i.public_key !== "string") {
    return { problem: 'decrypted content must hold "otp_code" and "public_key" strings' };
  }
  return { otpCode: i.otp_code, publicKey: i.public_key };
}
