// Opens the client-secret envelope @turnkey/crypto's encryptOauth2ClientSecret builds (QOS
// quorum-key encryption, docs/oauth.md §2.2), encrypted to our OAUTH2_CLIENT_SECRET service key:
//   hex( borsh{ nonce[12], ephemeralSenderPublic[65, uncompressed], u32-LE len, ciphertext‖tag } )
//   key = first 32 bytes of HMAC-SHA512(key = senderPub ‖ receiverPub ‖ ECDH-x, "qos_encryption_hmac_message")
//   AES-256-GCM, iv = nonce, AAD = senderPub ‖ len(senderPub) ‖ receiverPub ‖ len(receiverPub) (1-byte lengths)
import { createDecipheriv, createECDH, createHmac } from "node:crypto";
import { privateScalar, type P256Private } from "../../crypto/p256.ts";

const NONCE = 12;
const POINT = 65;
const TAG = 16;
const HMAC_MESSAGE = Buffer.from("qos_encryption_hmac_message", "ascii");
/** Client secrets are short; the envelope of one is far below this. */
export const MAX_ENVELOPE_HEX = 8192;

/** The secret, or why the envelope cannot be opened (the client's mistake: a 400 naming the field). */
export function openClientSecret(receiver: P256Private, envelopeHex: string): { secret: string } | { problem: string } {
  if (envelopeHex.length > MAX_ENVELOPE_HEX || envelopeHex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(envelopeHex)) {
    return { problem: `must be the hex envelope encryptOauth2ClientSecret returns (at most ${MAX_ENVELOPE_HEX} hex characters)` };
  }
  const bytes = Buffer.from(envelopeHex, "hex");
  const head = NONCE + POINT + 4;
  if (bytes.length < head + TAG) return { problem: "is too short to be an encryptOauth2ClientSecret envelope" };
  const nonce = bytes.subarray(0, NONCE);
  const senderPub = bytes.subarray(NONCE, NONCE + POINT);
  const len = bytes.readUInt32LE(NONCE + POINT);
  if (len !== bytes.length - head || len < TAG)
    return { problem: "has a length field that does not match its ciphertext (not an encryptOauth2ClientSecret envelope)" };
  if (senderPub[0] !== 0x04) return { problem: "does not carry an uncompressed P-256 sender key" };
  const sealed = bytes.subarray(head);
  const receiverPub = Buffer.from(receiver.publicUncompressed, "hex");
  const scalar = privateScalar(receiver);
  let shared: Buffer;
  try {
    const ecdh = createECDH("prime256v1");
    ecdh.setPrivateKey(scalar);
    shared = ecdh.computeSecret(senderPub); // the x coordinate, 32 bytes
  } catch {
    return { problem: "carries a sender key that is not a P-256 point" };
  } finally {
    scalar.fill(0);
  }
  const mac = createHmac("sha512", Buffer.concat([senderPub, receiverPub, shared]))
    .update(HMAC_MESSAGE)
    .digest();
  shared.fill(0);
  const key = mac.subarray(0, 32);
  const aad = Buffer.concat([senderPub, Buffer.from([senderPub.length]), receiverPub, Buffer.from([receiverPub.length])]);
  try {
    const d = createDecipheriv("aes-256-gcm", key, nonce);
    d.setAAD(aad);
    d.setAuthTag(sealed.subarray(sealed.length - TAG));
    const plain = Buffer.concat([d.update(sealed.subarray(0, sealed.length - TAG)), d.final()]);
    const secret = plain.toString("utf8");
    plain.fill(0);
    if (secret === "") return { problem: "holds an empty client secret" };
    return { secret };
  } catch {
    return {
      problem:
        "could not be decrypted with this service's OAUTH2_CLIENT_SECRET key (encrypt it to the key GET /public/v1/discovery/keys lists)",
    };
  } finally {
    mac.fill(0);
  }
}
