// P-256 key pairs in the encodings @turnkey/api-key-stamper expects:
// private key = 32-byte scalar hex, public key = compressed point hex.
import { generateKeyPairSync } from "node:crypto";

export interface P256KeyPair {
  publicKey: string;
  privateKey: string;
}

export function generateP256KeyPair(): P256KeyPair {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = privateKey.export({ format: "jwk" });
  const d = Buffer.from(jwk.d as string, "base64url");
  const x = Buffer.from(jwk.x as string, "base64url");
  const y = Buffer.from(jwk.y as string, "base64url");
  const prefix = (y[y.length - 1]! & 1) === 1 ? "03" : "02";
  return { publicKey: prefix + x.toString("hex").padStart(64, "0"), privateKey: d.toString("hex").padStart(64, "0") };
}
