// Stamping for the benchmark.
//
// `sdkStamp` is @turnkey/api-key-stamper itself (what SDK clients send). It re-imports the
// private key from a JWK on every call (~0.3-0.5 ms), too slow to pre-stamp tens of
// thousands of activity bodies in a few seconds, so `FastStamper` produces the very same
// X-Stamp (base64url of {"publicKey","scheme","signature": DER hex of ECDSA-P256-SHA256})
// with the key imported once. The benchmark checks one SDK-stamped activity first, so both
// paths are known to be accepted.
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { ECDH, createECDH, createPrivateKey, sign, type KeyObject } from "node:crypto";

export interface Stamped {
  body: Buffer;
  stamp: string;
}

export async function sdkStamp(body: string, apiPublicKey: string, apiPrivateKey: string): Promise<Stamped> {
  const stamper = new ApiKeyStamper({ apiPublicKey, apiPrivateKey });
  const { stampHeaderName, stampHeaderValue } = await stamper.stamp(body);
  if (stampHeaderName !== "X-Stamp") throw new Error(`unexpected stamp header ${stampHeaderName}`);
  return { body: Buffer.from(body), stamp: stampHeaderValue };
}

export class FastStamper {
  private readonly key: KeyObject;

  constructor(
    private readonly apiPublicKey: string,
    apiPrivateKey: string,
  ) {
    const point = Buffer.from(ECDH.convertKey(apiPublicKey, "prime256v1", "hex", "hex", "uncompressed") as string, "hex");
    this.key = createPrivateKey({
      key: {
        kty: "EC",
        crv: "P-256",
        x: point.subarray(1, 33).toString("base64url"),
        y: point.subarray(33, 65).toString("base64url"),
        d: Buffer.from(apiPrivateKey.padStart(64, "0"), "hex").toString("base64url"),
      },
      format: "jwk",
    });
  }

  stamp(body: string): Stamped {
    const raw = Buffer.from(body);
    const signature = sign("sha256", raw, { key: this.key, dsaEncoding: "der" }).toString("hex");
    const stamp = Buffer.from(JSON.stringify({ publicKey: this.apiPublicKey, scheme: "SIGNATURE_SCHEME_TK_API_P256", signature })).toString(
      "base64url",
    );
    return { body: raw, stamp };
  }
}

/** A throw-away P-256 API key pair in the SDK's encodings (scalar hex, compressed point hex). */
export function newP256KeyPair(): { publicKey: string; privateKey: string } {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  return { publicKey: ecdh.getPublicKey("hex", "compressed"), privateKey: ecdh.getPrivateKey("hex").padStart(64, "0") };
}
