// Hand-written types for ./webhooks.mjs (Sigil webhook receiver verification). The JSDoc of
// ./src/*.mjs uses these types, and ./src/public-api.check.ts fails the type check
// (tsc -p tsconfig.lib.json) when an export here and the implementation's differ.
import type { Buffer } from "node:buffer";
import type { KeyObject } from "node:crypto";

export declare const EVENT_ID_HEADER: "X-Service-Event-Id";
export declare const SIGNATURE_KEY_ID_HEADER: "X-Service-Signature-Key-Id";
export declare const SIGNATURE_ALGORITHM_HEADER: "X-Service-Signature-Algorithm";
export declare const SIGNATURE_VERSION_HEADER: "X-Service-Signature-Version";
export declare const SIGNATURE_HEADER: "X-Service-Signature";
export declare const TIMESTAMP_HEADER: "X-Service-Timestamp";
/** Not part of the signed message: informational only, never use it for authorization. */
export declare const ORGANIZATION_ID_HEADER: "X-Service-Organization-Id";
/** Not part of the signed message: informational only, never use it for authorization. */
export declare const EVENT_TYPE_HEADER: "X-Service-Event-Type";

export declare const WEBHOOK_HEADERS: Readonly<{
  eventId: typeof EVENT_ID_HEADER;
  signatureKeyId: typeof SIGNATURE_KEY_ID_HEADER;
  signatureAlgorithm: typeof SIGNATURE_ALGORITHM_HEADER;
  signatureVersion: typeof SIGNATURE_VERSION_HEADER;
  signature: typeof SIGNATURE_HEADER;
  timestamp: typeof TIMESTAMP_HEADER;
  organizationId: typeof ORGANIZATION_ID_HEADER;
  eventType: typeof EVENT_TYPE_HEADER;
}>;

/** The six headers every delivery must carry, in the order they are checked. */
export declare const SIGNED_HEADERS: readonly [
  typeof EVENT_ID_HEADER,
  typeof SIGNATURE_KEY_ID_HEADER,
  typeof SIGNATURE_ALGORITHM_HEADER,
  typeof SIGNATURE_VERSION_HEADER,
  typeof SIGNATURE_HEADER,
  typeof TIMESTAMP_HEADER,
];

export declare const SIGNATURE_VERSION: "v1";
export declare const SIGNATURE_ALGORITHM: "ed25519";
/** 5 minutes: the suggested freshness window. */
export declare const DEFAULT_MAX_TIMESTAMP_AGE_MS: 300000;
/** 10 s: at most one unknown-kid refetch (and one retry after a failed fetch) per interval. */
export declare const DEFAULT_MIN_REFETCH_INTERVAL_MS: 10000;
/** 5 minutes: key-set lifetime when the response has no Cache-Control max-age. */
export declare const DEFAULT_CACHE_TTL_MS: 300000;
/** 24 hours: upper bound on any key-set lifetime, whatever max-age says. */
export declare const DEFAULT_MAX_CACHE_TTL_MS: 86400000;
/** 1 hour: how long past expiry the last good key set is served while refreshes fail. */
export declare const DEFAULT_STALE_IF_ERROR_MS: 3600000;
/** 5 s: per JWKS request, body included. */
export declare const DEFAULT_FETCH_TIMEOUT_MS: 5000;

export type WebhookFailureReason =
  /** One of the six signed headers is absent or empty. */
  | "missing_header"
  /** A header is malformed (timestamp, key id, event id, version or algorithm shape) or repeated. */
  | "bad_header"
  /** X-Service-Signature-Version is well formed but not "v1". */
  | "unsupported_version"
  /** X-Service-Signature-Algorithm is well formed but not "ed25519". */
  | "unsupported_algorithm"
  /** No published key has this kid (after the one refetch). */
  | "missing_key"
  /** The key for this kid is unusable: x not 32 bytes of base64url, wrong kty/crv/alg/use, duplicate kid. */
  | "bad_key"
  /** X-Service-Signature is not 128 hex characters (64 bytes). */
  | "bad_signature_encoding"
  /** The signature does not verify over the signed message. */
  | "bad_signature"
  /** |now - X-Service-Timestamp| exceeds the window (past or future). */
  | "stale_timestamp"
  /** The key set could not be fetched (or parsed) and no usable cached set exists. */
  | "jwks_unavailable";

export declare const WEBHOOK_FAILURE_REASONS: readonly WebhookFailureReason[];

export interface VerifySuccess {
  ok: true;
  eventId: string;
  keyId: string;
  timestampMs: number;
  /** From X-Service-Organization-Id when present. NOT signed. */
  organizationId?: string;
  /** From X-Service-Event-Type when present. NOT signed. */
  eventType?: string;
}

export interface VerifyFailure {
  ok: false;
  reason: WebhookFailureReason;
  /** Human-readable detail; never echoes unvalidated header values. */
  message: string;
}

export type VerifyResult = VerifySuccess | VerifyFailure;

/** Anything with a case-insensitive `get` (the Fetch API `Headers`). */
export interface HeadersLike {
  get(name: string): string | null;
}

/** A plain record (node's `req.headers`, looked up case-insensitively), a `Headers`, or a Map. */
export type WebhookHeadersInput =
  Record<string, string | string[] | undefined> | HeadersLike | ReadonlyMap<string, string | string[] | undefined>;

export interface VerifyInput {
  headers: WebhookHeadersInput;
  /** The exact body bytes as received, before any parsing. A string is encoded as UTF-8. */
  rawBody: Uint8Array | string;
}

export interface VerifyWebhookSignatureInput extends VerifyInput {
  /** kid → public Ed25519 KeyObject, or the JWK `x` (base64url of the 32-byte key). */
  publicKeys: ReadonlyMap<string, KeyObject | string>;
  /** Defaults to Date.now(). */
  nowMs?: number;
  /** Defaults to 300000 (5 minutes). */
  maxTimestampAgeMs?: number;
}

/** The part of a fetch Response the verifier reads. */
export interface FetchResponseLike {
  status: number;
  headers: { get(name: string): string | null };
  arrayBuffer(): Promise<ArrayBuffer>;
  body?: { cancel(): Promise<void> } | null;
}

export type FetchLike = (url: string, init: { headers: Record<string, string>; signal: AbortSignal }) => Promise<FetchResponseLike>;

export interface CreateWebhookVerifierOptions {
  /** The service's `GET /public/v1/discovery/webhooks/jwks` URL. */
  jwksUrl: string | URL;
  /** Freshness window, both directions. Default 300000 (5 minutes). */
  maxTimestampAgeMs?: number;
  /** Default globalThis.fetch. */
  fetch?: FetchLike;
  /** Clock for timestamps and the key cache. Default Date.now. */
  now?: () => number;
  /** Minimum spacing of unknown-kid refetches and of retries after a failed fetch. Default 10000. */
  minRefetchIntervalMs?: number;
  /** Key-set lifetime when Cache-Control has no max-age. Default 300000. */
  defaultCacheTtlMs?: number;
  /** Upper bound on the key-set lifetime. Default 86400000. */
  maxCacheTtlMs?: number;
  /**
   * How long past expiry the last good key set is still used while refreshes fail, unless the
   * response says stale-if-error=N itself. Never for no-store / must-revalidate responses.
   * Default 3600000 (1 hour).
   */
  staleIfErrorMs?: number;
  /** Per-request timeout of the JWKS fetch. Default 5000. */
  fetchTimeoutMs?: number;
}

export interface WebhookVerifier {
  /**
   * Verifies one delivery. Resolves to a result for every kind of bad delivery or key-server
   * trouble; rejects only on programming errors (input of the wrong type, a broken `now`).
   */
  verify(input: VerifyInput): Promise<VerifyResult>;
}

/**
 * A verifier that fetches and caches the published key set:
 * - cached per Cache-Control max-age (minus Age), 5 minutes without max-age, at most 24 hours;
 *   no-store/no-cache: fetched each time the cache is consulted, still once per verify;
 * - an unknown kid triggers one refetch, at most one per `minRefetchIntervalMs` per verifier;
 *   concurrent fetches are coalesced into a single request;
 * - when a refresh fails the previous set is used for up to `staleIfErrorMs` (1 hour) past its
 *   expiry; a kid missing from such a stale set is `jwks_unavailable`, not `missing_key`.
 */
export declare function createWebhookVerifier(options: CreateWebhookVerifierOptions): WebhookVerifier;

/** Synchronous verification against keys the caller already holds (no fetching). */
export declare function verifyWebhookSignature(input: VerifyWebhookSignatureInput): VerifyResult;

/**
 * The signed bytes: `v1.ed25519.<keyId>.<timestampMs>.<eventId>.` followed by the raw body.
 * Throws TypeError on a key id / event id / timestamp the verifier would reject as bad_header.
 */
export declare function webhookSignedMessage(
  keyId: string,
  timestampMs: number | string,
  eventId: string,
  rawBody: Uint8Array | string,
): Buffer;

/** App proofs: service-key (P-256) signatures over an activity's decision — not enclave attestations. */
export declare const APP_PROOF_SCHEME: "SIGNATURE_SCHEME_EPHEMERAL_KEY_P256";

export interface AppProof {
  scheme: string;
  /** 130 bytes of hex: uncompressed encryption key ‖ uncompressed signing key. */
  publicKey: string;
  /** JSON text; signed as SHA-256 of its UTF-8 bytes. */
  proofPayload: string;
  /** r‖s, 64 bytes of hex. */
  signature: string;
}

export type AppProofFailureReason =
  "bad_proof" | "unsupported_scheme" | "bad_key" | "untrusted_key" | "bad_signature_encoding" | "bad_signature";

export declare function verifyAppProof(
  appProof: AppProof,
  options: { trustedPublicKeys: Iterable<string> },
): { ok: true; payload: unknown } | { ok: false; reason: AppProofFailureReason; message: string };
