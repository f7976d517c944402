// The signed, HPKE-encrypted bundles the SDK's @turnkey/crypto reads and writes (OTP targets,
// wallet export and import; docs/logins.md §3.3, docs/export-import.md §2):
//   - a signed envelope: {enclaveQuorumPublic, dataSignature, data} where `data` is the hex of
//     a JSON object and `dataSignature` a DER ECDSA P-256 signature over SHA-256 of those bytes,
//     made by a service key the client pins (dangerouslyOverrideSignerPublicKey);
//   - HPKE base mode, DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-256-GCM, info "turnkey_hpke",
//     with the SDK's non-standard AAD enc ‖ pkR (both 65-byte uncompressed points).
import { Aes256Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from "@hpke/core";
import { p256 } from "@noble/curves/nist.js";
import { privateScalar, signP256, type P256Private } from "./p256.ts";

export interface SignedEnvelope {
  version?: string;
  data: string;
  dataSignature: string;
  enclaveQuorumPublic: string;
}

/** `data` (a JSON object) signed by `signer`; `version` first when given (export and import bundles carry one). */
export function signedEnvelope(signer: P256Private, data: Record<string, string>, version?: string): SignedEnvelope {
  const bytes = Buffer.from(JSON.stringify(data), "utf8");
  return {
    ...(version !== undefined ? { version } : {}),
    data: bytes.toString("hex"),
    // DER over SHA-256 of the bytes `data` hex-decodes to (signP256 hashes once).
    dataSignature: signP256(signer, bytes, "der").toString("hex"),
    enclaveQuorumPublic: signer.publicUncompressed,
  };
}

const suite = new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes256Gcm() });
const INFO = new TextEncoder().encode("turnkey_hpke");

/**
 * A P-256 public key given as hex, compressed (33 bytes) or uncompressed (65), as its
 * uncompressed lower-case hex; undefined when it is not a point of the curve.
 */
export function uncompressedP256(hex: string): string | undefined {
  const h = hex.startsWith("0x") ? hex.slice(2) : hex;
  if (!/^(?:0[23][0-9a-fA-F]{64}|04[0-9a-fA-F]{128})$/.test(h)) return undefined;
  try {
    return Buffer.from(p256.Point.fromHex(h.toLowerCase()).toBytes(false)).toString("hex");
  } catch {
    return undefined;
  }
}

/** Encrypts `plaintext` to the uncompressed P-256 key `recipient` (hex): the pair the SDK's hpkeDecrypt opens. */
export async function hpkeSeal(recipient: string, plaintext: Uint8Array): Promise<{ encappedPublic: string; ciphertext: string }> {
  const pkR = Buffer.from(recipient, "hex");
  const recipientPublicKey = await suite.kem.deserializePublicKey(pkR);
  const ctx = await suite.createSenderContext({ recipientPublicKey, info: INFO });
  const enc = Buffer.from(ctx.enc);
  const ct = await ctx.seal(plaintext, Buffer.concat([enc, pkR]));
  return { encappedPublic: enc.toString("hex"), ciphertext: Buffer.from(ct).toString("hex") };
}

/**
 * Parses the JSON text the SDK's formatHpkeBuf returns ({encappedPublic, ciphertext}): the
 * two byte strings, or what is wrong with it (a client's mistake). `maxCiphertextHex` bounds
 * what a client can make the server decrypt.
 */
export function parseHpkeText(text: string, maxCiphertextHex: number, what: string): { enc: Buffer; ct: Buffer } | { problem: string } {
  let outer: unknown;
  try {
    outer = JSON.parse(text);
  } catch {
    return { problem: `must be the JSON text ${what} returns` };
  }
  const o = outer as Record<string, unknown> | null;
  const enc = typeof o?.encappedPublic === "string" ? o.encappedPublic : undefined;
  const ct = typeof o?.ciphertext === "string" ? o.ciphertext : undefined;
  if (!enc || !/^04[0-9a-fA-F]{128}$/.test(enc)) return { problem: "encappedPublic must be an uncompressed P-256 point (hex)" };
  if (!ct || !/^[0-9a-fA-F]+$/.test(ct) || ct.length % 2 !== 0 || ct.length < 34 || ct.length > maxCiphertextHex) {
    return { problem: `ciphertext must be hex (AES-GCM ciphertext and tag, at most ${maxCiphertextHex / 2} bytes)` };
  }
  return { enc: Buffer.from(enc, "hex"), ct: Buffer.from(ct, "hex") };
}

/** Opens what was sealed to `target`; throws when it was not (wrong key, altered bytes). */
export async function hpkeOpen(target: P256Private, enc: Buffer, ct: Buffer): Promise<Uint8Array> {
  const pkR = Buffer.from(target.publicUncompressed, "hex");
  const scalar = privateScalar(target);
  try {
    const recipientKey = await suite.kem.deserializePrivateKey(scalar);
    const ctx = await suite.createRecipientContext({ recipientKey, enc, info: INFO });
    return new Uint8Array(await ctx.open(ct, Buffer.concat([enc, pkR])));
  } finally {
    scalar.fill(0);
  }
}
