// The `encrypted_bearer_token` claim (docs/oauth.md §3.4): the provider's bearer token
// HPKE-encrypted to the caller's bearerTokenTargetPublicKey, as @turnkey/crypto's
// decryptCredentialBundle reads it — base58check( compressed encapsulated key[33] ‖
// AES-GCM ciphertext‖tag ), HPKE base mode DHKEM(P-256, HKDF-SHA256) / HKDF-SHA256 /
// AES-256-GCM, info "turnkey_hpke", AAD = uncompressed enc ‖ uncompressed receiver key (the
// SDK's AAD, as the OTP bundle of logins/otp/bundle.ts). decryptCredentialBundle returns the
// plaintext's hex: the token's UTF-8 bytes.
import { ECDH } from "node:crypto";
import { Aes256Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from "@hpke/core";
import { createBase58check } from "@scure/base";
import { sha256 } from "../../crypto/p256.ts";

const suite = new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes256Gcm() });
const INFO = new TextEncoder().encode("turnkey_hpke");
const base58check = createBase58check((data: Uint8Array) => new Uint8Array(sha256(data)));

/** The point in uncompressed form, or undefined when `hex` is not a P-256 public key (compressed or uncompressed hex). */
export function uncompressedP256(hex: string): Buffer | undefined {
  if (!/^(0[23][0-9a-fA-F]{64}|04[0-9a-fA-F]{128})$/.test(hex)) return undefined;
  try {
    // Fails for a point that is not on the curve.
    return ECDH.convertKey(hex, "prime256v1", "hex", undefined, "uncompressed") as Buffer;
  } catch {
    return undefined;
  }
}

const compress = (p: Buffer): Buffer => ECDH.convertKey(p, "prime256v1", undefined, undefined, "compressed") as Buffer;

export async function encryptBearerToken(token: string, targetPublicHex: string): Promise<string> {
  const pkR = uncompressedP256(targetPublicHex);
  if (!pkR) throw new Error("bearer token target is not a P-256 public key");
  const recipientPublicKey = await suite.kem.deserializePublicKey(pkR);
  const sender = await suite.createSenderContext({ recipientPublicKey, info: INFO });
  const enc = Buffer.from(sender.enc);
  const sealed = Buffer.from(await sender.seal(new TextEncoder().encode(token), Buffer.concat([enc, pkR])));
  return base58check.encode(Buffer.concat([compress(enc), sealed]));
}
