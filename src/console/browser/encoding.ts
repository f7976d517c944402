/// <reference lib="dom" />
// Byte encodings the stamps use (docs/stamps.md §2–3): hex, base64url, and ECDSA signatures
// turned from WebCrypto's r‖s into ASN.1 DER.

export const utf8 = (s: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(s) as Uint8Array<ArrayBuffer>;

export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

export function fromHex(hex: string): Uint8Array {
  const clean = hex.trim().toLowerCase().replace(/^0x/, "");
  if (clean.length % 2 !== 0 || !/^[0-9a-f]*$/.test(clean)) throw new Error("not a hex string");
  const out = new Uint8Array(clean.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(clean.slice(i * 2, i * 2 + 2), 16);
  return out;
}

export function toBase64Url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export async function sha256Hex(text: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", utf8(text))));
}

/** One DER INTEGER from a big-endian unsigned value: leading zeros dropped, a zero byte added when the top bit is set. */
function derInteger(v: Uint8Array): number[] {
  let i = 0;
  while (i < v.length - 1 && v[i] === 0) i++;
  const bytes = [...v.slice(i)];
  if (bytes[0]! & 0x80) bytes.unshift(0);
  return [0x02, bytes.length, ...bytes];
}

/** WebCrypto's ECDSA signature (r‖s, 32 bytes each for P-256) as DER (docs/stamps.md §2.3). */
export function p1363ToDer(sig: Uint8Array): Uint8Array {
  const half = sig.length / 2;
  const body = [...derInteger(sig.slice(0, half)), ...derInteger(sig.slice(half))];
  return new Uint8Array([0x30, body.length, ...body]);
}

/** An uncompressed P-256 point (04‖x‖y) in its compressed form (02/03‖x), the form the stamp names. */
export function compressPoint(raw: Uint8Array): Uint8Array {
  if (raw.length !== 65 || raw[0] !== 4) throw new Error("not an uncompressed P-256 point");
  const out = new Uint8Array(33);
  out[0] = (raw[64]! & 1) === 0 ? 2 : 3;
  out.set(raw.slice(1, 33), 1);
  return out;
}
