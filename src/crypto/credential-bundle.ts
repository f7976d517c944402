// The credential bundle (docs/sessions-and-network.md §7.1): a secret HPKE-encrypted to a
// client's P-256 key, as @turnkey/crypto's decryptCredentialBundle opens it (the auth iframe
// behind @turnkey/sdk-browser's injectCredentialBundle does the same) —
//   base58check( compressed encapsulated key [33] ‖ AES-256-GCM ciphertext and tag )
// with the HPKE parameters of crypto/bundles.ts (info "turnkey_hpke", AAD enc ‖ pkR).
import { createBase58check } from "@scure/base";
import { p256 } from "@noble/curves/nist.js";
import { hpkeSeal, uncompressedP256 } from "./bundles.ts";
import { sha256 } from "./p256.ts";

const base58check = createBase58check((data: Uint8Array) => new Uint8Array(sha256(data)));

/** `secret` sealed to `targetPublicHex` (compressed or uncompressed P-256 hex); throws when that is not a P-256 point. */
export async function credentialBundle(secret: Uint8Array, targetPublicHex: string): Promise<string> {
  const target = uncompressedP256(targetPublicHex);
  if (!target) throw new Error("credential bundle target is not a P-256 public key");
  const { encappedPublic, ciphertext } = await hpkeSeal(target, secret);
  const enc = p256.Point.fromHex(encappedPublic).toBytes(true);
  return base58check.encode(Buffer.concat([enc, Buffer.from(ciphertext, "hex")]));
}
