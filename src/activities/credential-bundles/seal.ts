// The credential bundle of the legacy logins (docs/logins.md §9.2): a P-256 private key,
// HPKE-sealed to the client's target key exactly as @turnkey/crypto's
// decryptCredentialBundle opens it — base58check (SHA-256d checksum) of the 33-byte
// compressed encapsulated key followed by the AES-GCM ciphertext and tag. The HPKE suite and
// its additional data are the bundles' (crypto/bundles.ts).
import { createBase58check } from "@scure/base";
import { sha256 } from "@noble/hashes/sha2.js";
import { p256 } from "@noble/curves/nist.js";
import { hpkeSeal, uncompressedP256 } from "../../crypto/bundles.ts";

const base58check = createBase58check(sha256);

/** Seals `secret` to `targetPublicKey` (P-256 hex, compressed or uncompressed); undefined when the key is not a point. */
export async function sealCredentialBundle(targetPublicKey: string, secret: Uint8Array): Promise<string | undefined> {
  const target = uncompressedP256(targetPublicKey);
  if (!target) return undefined;
  const { encappedPublic, ciphertext } = await hpkeSeal(target, secret);
  const enc = p256.Point.fromHex(encappedPublic).toBytes(true);
  return base58check.encode(new Uint8Array(Buffer.concat([enc, Buffer.from(ciphertext, "hex")])));
}
