// The X-Stamp of a forwarded request (docs/auth-proxy-service.md §2): an API key stamp by the
// proxy key. The key arrives sealed for transport; it is opened here for one signature and its
// bytes zeroed at once — only the sealed form is ever kept (src/auth-proxy/channel.ts).
import { openFromTransport } from "../auth-proxy/channel.ts";
import { p256FromPkcs8, signP256 } from "../crypto/p256.ts";

export const STAMP_SCHEME = "SIGNATURE_SCHEME_TK_API_P256";

/** The X-Stamp header value for `body` (the exact bytes sent). */
export function stampBody(secret: Buffer, sealedKey: string, configId: string, body: string): { stamp: string; publicKey: string } {
  const der = openFromTransport(secret, sealedKey, configId);
  try {
    const key = p256FromPkcs8(der);
    const signature = signP256(key, Buffer.from(body, "utf8"), "der").toString("hex");
    const stamp = Buffer.from(JSON.stringify({ publicKey: key.publicCompressed, scheme: STAMP_SCHEME, signature })).toString("base64url");
    return { stamp, publicKey: key.publicCompressed };
  } finally {
    der.fill(0);
  }
}
