// The two OTP encryption envelopes (docs/logins.md §3.3, §3.4):
//   otpEncryptionTargetBundle (init_otp): a fresh P-256 key per OTP, announced in data signed
//     by the OTP_ENCRYPTION_TARGET service key — what @turnkey/crypto's encryptOtpCodeToBundle
//     checks (with dangerouslyOverrideSignerPublicKey = our key) before encrypting to it;
//   encryptedOtpBundle (verify_otp V2): HPKE base mode, DHKEM(P-256, HKDF-SHA256),
//     HKDF-SHA256, AES-256-GCM, info "turnkey_hpke" — with the SDK's non-standard AAD
//     enc ‖ pkR (both 65-byte uncompressed points) instead of the empty one.
import { hpkeOpen, parseHpkeText, signedEnvelope } from "../../crypto/bundles.ts";
import type { P256Private } from "../../crypto/p256.ts";
import type { ServiceKey } from "../../auth/service-keys.ts";

/** The bundle init_otp returns: the JSON string clients parse. */
export function targetBundle(signer: ServiceKey, targetPublicUncompressed: string): string {
  return JSON.stringify(signedEnvelope(signer.signer, { targetPublic: targetPublicUncompressed }));
}

// Bounds on what a client can make the server decrypt (the plaintext is ~120 bytes).
const MAX_CIPHERTEXT_HEX = 4096;

export interface OtpPlaintext {
  otpCode: string;
  /** The client's key the verification token will be bound to (compressed hex as sent). */
  publicKey: string;
}

/** Why the bundle is not readable (the client's mistake: a 400), or its contents. */
export async function openOtpBundle(target: P256Private, encryptedOtpBundle: string): Promise<OtpPlaintext | { problem: string }> {
  const parsed = parseHpkeText(encryptedOtpBundle, MAX_CIPHERTEXT_HEX, "encryptOtpCodeToBundle");
  if ("problem" in parsed) return parsed;
  let plain: Uint8Array;
  try {
    plain = await hpkeOpen(target, parsed.enc, parsed.ct);
  } catch {
    return { problem: "could not be decrypted with this OTP's encryption target (was it encrypted to this otpId's bundle?)" };
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
