// P-256 private-key operations for the service's own keys (session JWTs, OTP target
// bundles, verification tokens) and the point encodings clients compare as strings.
// node:crypto does the math; keys travel as 32-byte scalars (hex) or KeyObjects.
import { createHash, createPrivateKey, generateKeyPairSync, sign, verify, type KeyObject } from "node:crypto";
import { keyObject } from "./public-keys.ts";

export const sha256 = (data: Buffer | Uint8Array | string): Buffer => createHash("sha256").update(data).digest();

export interface P256Private {
  key: KeyObject;
  /** Uncompressed public point, lower-case hex (130 chars). */
  publicUncompressed: string;
  /** Compressed public point, lower-case hex (66 chars). */
  publicCompressed: string;
}

function points(jwk: { x?: string; y?: string }): { publicUncompressed: string; publicCompressed: string } {
  const x = Buffer.from(jwk.x!, "base64url").toString("hex").padStart(64, "0");
  const yBuf = Buffer.from(jwk.y!, "base64url");
  const y = yBuf.toString("hex").padStart(64, "0");
  return { publicUncompressed: `04${x}${y}`, publicCompressed: ((yBuf[yBuf.length - 1]! & 1) === 1 ? "03" : "02") + x };
}

export function generateP256(): P256Private {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { key: privateKey, ...points(privateKey.export({ format: "jwk" })) };
}

export function p256FromPkcs8(der: Buffer): P256Private {
  const key = createPrivateKey({ key: der, format: "der", type: "pkcs8" });
  return { key, ...points(key.export({ format: "jwk" })) };
}

export function toPkcs8(p: P256Private): Buffer {
  return p.key.export({ format: "der", type: "pkcs8" });
}

/** The 32-byte private scalar (HPKE needs it raw). A secret: never log or store it plain. */
export function privateScalar(p: P256Private): Buffer {
  return Buffer.from(p.key.export({ format: "jwk" }).d!, "base64url");
}

/** ECDSA over SHA-256(data); `raw` = 64-byte r‖s (JWTs, client signatures), `der` = ASN.1 (bundles, stamps). */
export function signP256(p: P256Private, data: Buffer | Uint8Array, encoding: "raw" | "der"): Buffer {
  return sign("sha256", data, { key: p.key, dsaEncoding: encoding === "raw" ? "ieee-p1363" : "der" });
}

/**
 * Verifies an ECDSA P-256 signature over SHA-256(data) with a public key in hex (compressed or
 * uncompressed). The signature may be raw r‖s (128 hex chars) or DER. Never throws.
 */
export function verifyP256(publicKeyHex: string, data: Buffer | Uint8Array, signatureHex: string): boolean {
  if (!/^[0-9a-fA-F]+$/.test(signatureHex) || signatureHex.length % 2 !== 0) return false;
  try {
    const key = keyObject("API_KEY_CURVE_P256", publicKeyHex);
    const sig = Buffer.from(signatureHex, "hex");
    const dsaEncoding = sig.length === 64 ? "ieee-p1363" : "der";
    return verify("sha256", data, { key, dsaEncoding }, sig);
  } catch {
    return false;
  }
}
