// Reading the stamp header of a request: which kind it is, and for API key stamps
// (X-Stamp, as @turnkey/api-key-stamper makes them) the decoded fields.
//
//   X-Stamp: base64url(JSON{ publicKey: hex, scheme: SIGNATURE_SCHEME_TK_API_*, signature: DER hex })
import type { IncomingHttpHeaders } from "node:http";
import { unauthenticated, unimplemented } from "../errors.ts";
import { publicKeyProblem, type Curve } from "../crypto/public-keys.ts";

export interface ApiKeyStamp {
  publicKey: string;
  scheme: string;
  curve: Curve;
  signature: string;
}

/** Keyed by the stamp's `scheme` (request data): a Map, so no name reaches Object.prototype. */
const SCHEMES = new Map<string, Curve>([
  ["SIGNATURE_SCHEME_TK_API_P256", "API_KEY_CURVE_P256"],
  ["SIGNATURE_SCHEME_TK_API_SECP256K1", "API_KEY_CURVE_SECP256K1"],
  ["SIGNATURE_SCHEME_TK_API_ED25519", "API_KEY_CURVE_ED25519"],
]);

/** Header names are lower-case in node. Only one of these may be present. */
const STAMP_HEADERS = ["x-stamp", "x-stamp-webauthn", "x-stamp-attested"] as const;
const MAX_STAMP_LENGTH = 8192;
const B64URL = /^[A-Za-z0-9_-]+={0,2}$/;

const malformed = (why: string) => unauthenticated("UNAUTHENTICATED", `malformed activity stamp: ${why}`);

export function readApiKeyStamp(headers: IncomingHttpHeaders): ApiKeyStamp {
  const present = STAMP_HEADERS.filter((h) => headers[h] !== undefined);
  if (present.length === 0) {
    throw unauthenticated(
      "SIGNATURE_MISSING",
      "cannot authenticate public API request without a stamp (X-Stamp/X-Stamp-WebAuthn header)",
    );
  }
  if (present.length > 1) {
    throw unauthenticated("UNAUTHENTICATED", `exactly one stamp header is allowed, got ${present.join(", ")}`);
  }
  if (present[0] !== "x-stamp") {
    throw unimplemented(`${present[0]} stamps are not supported by this server yet; sign the request with an API key (X-Stamp)`);
  }
  const raw = headers["x-stamp"];
  if (Array.isArray(raw)) throw unauthenticated("UNAUTHENTICATED", "exactly one X-Stamp header is allowed");
  if (!raw || raw.length > MAX_STAMP_LENGTH || !B64URL.test(raw)) throw malformed("X-Stamp must be base64url");

  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
  } catch {
    throw malformed("X-Stamp does not decode to JSON");
  }
  const s = parsed as Record<string, unknown>;
  if (typeof s !== "object" || s === null || Array.isArray(s)) throw malformed("X-Stamp must be a JSON object");
  const { publicKey, scheme, signature } = s;
  if (typeof publicKey !== "string" || typeof scheme !== "string" || typeof signature !== "string") {
    throw malformed("publicKey, scheme and signature must be strings");
  }
  const curve = SCHEMES.get(scheme);
  if (!curve) throw malformed(`unsupported signature scheme ${JSON.stringify(scheme.slice(0, 64))}`);
  const keyProblem = publicKeyProblem(curve, publicKey);
  if (keyProblem) throw malformed(`publicKey: ${keyProblem}`);
  if (!/^[0-9a-fA-F]+$/.test(signature) || signature.length % 2 !== 0 || signature.length > 300) {
    throw malformed("signature must be hex");
  }
  return { publicKey, scheme, curve, signature };
}
