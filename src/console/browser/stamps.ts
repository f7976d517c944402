/// <reference lib="dom" />
// The console signs every request itself (docs/console.md §4), with one of two stamps:
// X-Stamp — a P-256 key held by WebCrypto as non-extractable (a pasted API key, or the session
// key a passkey login registered): base64url of {publicKey, scheme, signature}, the signature
// ECDSA-SHA256 over the exact body in DER hex (docs/stamps.md §2);
// X-Stamp-WebAuthn — a passkey assertion whose challenge is the UTF-8 of the body's SHA-256 in
// hex (docs/stamps.md §3.1–3.2).
import { p256 } from "@noble/curves/nist.js";
import { compressPoint, fromHex, p1363ToDer, sha256Hex, toBase64Url, toHex, utf8 } from "./encoding.ts";

export interface Stamp {
  header: string;
  value: string;
}

/** A P-256 signing key: the private half inside WebCrypto, never readable by this page. */
export interface SigningKey {
  /** Compressed public key, hex (66 characters). */
  publicKey: string;
  privateKey: CryptoKey;
}

/**
 * A pasted API key (hex) imported into WebCrypto as non-extractable: x and y are derived from
 * the private scalar (WebCrypto imports a P-256 private key only with its public point).
 * Refused when the private key does not belong to the public key given.
 */
export async function importApiKey(publicHex: string, privateHex: string): Promise<SigningKey> {
  const d = fromHex(privateHex);
  if (d.length !== 32) throw new Error("the API private key must be 32 bytes (64 hex characters)");
  let uncompressed: Uint8Array;
  try {
    uncompressed = p256.getPublicKey(d, false);
  } catch {
    throw new Error("the API private key is not a valid P-256 key");
  }
  const compressed = toHex(compressPoint(uncompressed));
  const given = publicHex.trim().toLowerCase();
  if (given !== compressed && given !== toHex(uncompressed)) throw new Error("the API private key does not belong to this public key");
  const jwk: JsonWebKey = {
    kty: "EC",
    crv: "P-256",
    d: toBase64Url(d),
    x: toBase64Url(uncompressed.slice(1, 33)),
    y: toBase64Url(uncompressed.slice(33)),
    ext: false,
  };
  d.fill(0);
  const privateKey = await crypto.subtle.importKey("jwk", jwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
  return { publicKey: compressed, privateKey };
}

/** A fresh session key (a passkey login's, docs/console.md §4.2): non-extractable private half. */
export async function generateSessionKey(): Promise<SigningKey> {
  const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
  const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  return { publicKey: toHex(compressPoint(raw)), privateKey: pair.privateKey };
}

/** X-Stamp over `body` (docs/stamps.md §2.1, §2.3). */
export async function apiKeyStamp(key: SigningKey, body: string): Promise<Stamp> {
  const sig = new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, key.privateKey, utf8(body)));
  const stamp = { publicKey: key.publicKey, scheme: "SIGNATURE_SCHEME_TK_API_P256", signature: toHex(p1363ToDer(sig)) };
  return { header: "X-Stamp", value: toBase64Url(utf8(JSON.stringify(stamp))) };
}

/**
 * X-Stamp-WebAuthn over `body`: one navigator.credentials.get with the challenge of
 * docs/stamps.md §3.2, any of the user's passkeys for this site (the RP ID is the page's host
 * unless the server names another; docs/console.md §4.2).
 */
export async function passkeyStamp(body: string, rpId?: string): Promise<Stamp> {
  const challenge = utf8(await sha256Hex(body));
  const cred = (await navigator.credentials.get({
    publicKey: { challenge, ...(rpId ? { rpId } : {}), userVerification: "preferred", timeout: 60_000 },
  })) as PublicKeyCredential | null;
  if (!cred) throw new Error("no passkey was chosen");
  const res = cred.response as AuthenticatorAssertionResponse;
  const value = {
    authenticatorData: toBase64Url(new Uint8Array(res.authenticatorData)),
    clientDataJson: toBase64Url(new Uint8Array(res.clientDataJSON)),
    credentialId: toBase64Url(new Uint8Array(cred.rawId)),
    signature: toBase64Url(new Uint8Array(res.signature)),
  };
  return { header: "X-Stamp-WebAuthn", value: JSON.stringify(value) };
}
