// Raw HTTP for end-to-end tests that must control the exact bytes and headers on the wire:
// good stamps come from @turnkey/api-key-stamper (what the SDK clients send), bad ones are
// built by hand from these pieces.
import { generateP256KeyPair, type P256KeyPair } from "../../src/crypto/keygen.ts";
import { ApiKeyStamper, SignatureFormat } from "@turnkey/api-key-stamper";

export type KeyPair = P256KeyPair;

/** A fresh P-256 key pair: 32-byte scalar hex and compressed point hex (the stamper's encodings). */
export const newKeyPair = generateP256KeyPair;

export function stamperFor(key: KeyPair): ApiKeyStamper {
  return new ApiKeyStamper({ apiPublicKey: key.publicKey, apiPrivateKey: key.privateKey });
}

/** The X-Stamp header value the SDK would send for `body`. */
export async function goodStamp(key: KeyPair, body: string): Promise<string> {
  const s = await stamperFor(key).stamp(body);
  if (s.stampHeaderName !== "X-Stamp") throw new Error(`unexpected stamp header ${s.stampHeaderName}`);
  return s.stampHeaderValue;
}

/** Raw r||s (64 bytes, hex) as ApiKeyStamper.sign(..., "raw") gives it. */
export async function rawSignature(key: KeyPair, body: string): Promise<string> {
  return stamperFor(key).sign(body, SignatureFormat.Raw);
}

/** base64url (no padding) of the JSON text of `obj`: how an X-Stamp header is wrapped. */
export function encodeStamp(obj: unknown): string {
  return Buffer.from(typeof obj === "string" ? obj : JSON.stringify(obj), "utf8").toString("base64url");
}

export function decodeStamp(value: string): { publicKey: string; scheme: string; signature: string } {
  return JSON.parse(Buffer.from(value, "base64url").toString("utf8")) as { publicKey: string; scheme: string; signature: string };
}

export interface RawResponse {
  status: number;
  contentType: string | null;
  text: string;
  /** Parsed body, or undefined when it is not JSON. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any JSON; each test reads what it expects
  json: any;
}

/** POST exactly `body` to `url + path` with exactly `headers` (plus what fetch itself adds). */
export async function rawPost(
  baseUrl: string,
  path: string,
  body: string | undefined,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const res = await fetch(baseUrl + path, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body,
    redirect: "manual",
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, contentType: res.headers.get("content-type"), text, json };
}

/** POST `body` stamped by `key` the way the SDK does it. */
export async function stampedPost(baseUrl: string, path: string, body: string, key: KeyPair): Promise<RawResponse> {
  return rawPost(baseUrl, path, body, { "X-Stamp": await goodStamp(key, body) });
}

/** Bounded polling: calls `probe` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function pollUntil<T>(what: string, timeoutMs: number, intervalMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
