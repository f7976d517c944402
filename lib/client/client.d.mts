// Hand-written types for ./client.mjs (@sigil/client). The JSDoc of ./src/*.mjs uses these
// types, and ./src/public-api.check.ts fails the type check (tsc -p tsconfig.lib.json)
// when an export here and the implementation's differ.

export type ServiceKeyPurpose = "SESSION_JWT" | "OTP_ENCRYPTION_TARGET" | "VERIFICATION_TOKEN" | "BUNDLE_SIGNER";

/** One key of GET /public/v1/discovery/keys. */
export interface ServiceKey {
  keyId: string;
  purpose: ServiceKeyPurpose;
  /** Uncompressed P-256 public key, lowercase hex (130 characters, `04…`). */
  publicKey: string;
  createdAt: string;
  /** `active` signs now; `published` signed before a rotation and still verifies. */
  status: "active" | "published";
}

/** Session JWT claims (docs/logins.md §2.3). */
export interface SessionClaims {
  /** Expiry, epoch seconds. */
  exp: number;
  /** The session key (compressed P-256 hex). */
  public_key: string;
  session_type: string;
  user_id: string;
  /** The organization the user belongs to. */
  organization_id: string;
  session_profile_id?: string;
}

/** Verification token claims (docs/logins.md §3.5). */
export interface VerificationTokenClaims {
  /** Expiry, epoch milliseconds, as a string. */
  exp: string;
  id: string;
  /** The organization that issued it. */
  organization_id: string;
  verification_type: string;
  contact: string;
  /** The key the token is bound to (compressed P-256 hex). */
  public_key: string;
}

export interface EncryptOtpCodeParams {
  otpCode: string;
  /** init_otp's result.otpEncryptionTargetBundle. */
  otpEncryptionTargetBundle: string;
  /** Compressed P-256 hex: the key the verification token will be bound to (and log in with). */
  publicKey: string;
}

/** A P-256 key pair in hex, as the SDK's generateP256KeyPair returns it. */
export interface TargetKeyPair {
  /** The 32-byte private scalar. */
  privateKey: string;
  /** Compressed public key (66 hex digits). */
  publicKey: string;
  /** Uncompressed public key (130 hex digits, `04…`). */
  publicKeyUncompressed: string;
}

export interface DecryptExportBundleParams {
  /** export_wallet's or export_wallet_account's result.exportBundle. */
  exportBundle: string;
  /** The private key (hex) whose public key was the export's targetPublicKey. */
  embeddedKey: string;
  /** The organization the wallet belongs to: the bundle must name it. */
  organizationId: string;
  /** The mnemonic as text (export_wallet); otherwise the plaintext as hex (an account's private key). */
  returnMnemonic?: boolean;
}

export interface EncryptWalletToBundleParams {
  mnemonic: string;
  /** init_import_wallet's result.importBundle. */
  importBundle: string;
  userId: string;
  organizationId: string;
}

/** A new key pair for export_wallet's targetPublicKey. */
export declare function generateTargetKeyPair(): TargetKeyPair;

/**
 * What an export bundle holds (docs/export-import.md §2), once its signer is one of
 * `signerPublicKeys` (BUNDLE_SIGNER keys), its signature verifies and it names `organizationId`.
 */
export declare function decryptExportBundle(params: DecryptExportBundleParams & { signerPublicKeys: readonly string[] }): Promise<string>;

/**
 * import_wallet's encryptedBundle (docs/export-import.md §3): the mnemonic encrypted to the
 * checked importBundle's target, as the JSON text {"encappedPublic","ciphertext"}.
 */
export declare function encryptWalletToBundle(
  params: EncryptWalletToBundleParams & { signerPublicKeys: readonly string[] },
): Promise<string>;

export declare const DISCOVERY_PATH: "/public/v1/discovery/keys";

/** The active and published keys of the service at `baseUrl`. */
export declare function fetchServiceKeys(baseUrl: string, options?: { fetch?: typeof fetch }): Promise<ServiceKey[]>;

/** The public keys (uncompressed hex) of one purpose. */
export declare function publicKeysFor(keys: readonly ServiceKey[], purpose: ServiceKeyPurpose): string[];

/**
 * The target key of init_otp's bundle (uncompressed hex) once its signer is, as a string, one
 * of `signerPublicKeys` and its DER signature verifies; throws otherwise.
 */
export declare function verifyOtpTargetBundle(otpEncryptionTargetBundle: string, signerPublicKeys: readonly string[]): string;

/**
 * verify_otp's encryptedOtpBundle: {"otp_code","public_key"} HPKE-encrypted to the verified
 * bundle's target (docs/logins.md §3.4, AAD = enc ‖ pkR), as the JSON text {"encappedPublic","ciphertext"}.
 */
export declare function encryptOtpCode(params: EncryptOtpCodeParams & { signerPublicKeys: readonly string[] }): Promise<string>;

/** The claims of a session JWT signed by one of `publicKeys`; throws if not signed so, incomplete or expired. */
export declare function verifySessionJwt(jwt: string, publicKeys: readonly string[], options?: { now?: number }): SessionClaims;

/** The claims of a verification token signed by one of `publicKeys`; throws if not signed so, incomplete or expired. */
export declare function verifyVerificationToken(
  token: string,
  publicKeys: readonly string[],
  options?: { now?: number },
): VerificationTokenClaims;

export declare const AUTH_PROXY_CONFIG_HEADER: "X-Auth-Proxy-Config-ID";

/**
 * A refusal by the auth proxy: `message` as the SDK's TurnkeyRequestError builds it
 * ("Turnkey error <code>: <message>[ (Details: …)]"), `code` the gRPC code, `status` the HTTP status.
 */
export declare class AuthProxyRequestError extends Error {
  constructor(body: { code?: number; message?: string; details?: unknown[] | null }, status: number);
  code: number | undefined;
  details: unknown[] | null;
  status: number;
}

export interface VerifyOtpWithProxyParams {
  /** The proxy's base URL, as core's `authProxyUrl`. */
  authProxyUrl: string;
  /** As core's `authProxyConfigId`; sent as X-Auth-Proxy-Config-ID. */
  authProxyConfigId: string;
  /** The service's public API, as core's `apiBaseUrl`: its published keys are read there. */
  apiBaseUrl: string;
  /** From core's initOtp. */
  otpId: string;
  /** From core's initOtp. */
  otpEncryptionTargetBundle: string;
  otpCode: string;
  /** Compressed P-256 hex the token is bound to: core's createApiKeyPair(), so core can sign with it. */
  publicKey: string;
  fetch?: typeof fetch;
}

export interface VerifyOtpWithProxyResult {
  /** For core's loginWithOtp / signUpWithOtp. */
  verificationToken: string;
  publicKey: string;
}

/**
 * Core's verifyOtp, with the service's published keys: checks the bundle, encrypts the code,
 * posts {otpId, encryptedOtpBundle} to <authProxyUrl>/v1/otp_verify_v2 and checks the token it
 * gets back. Throws AuthProxyRequestError when the proxy refuses.
 */
export declare function verifyOtpWithProxy(params: VerifyOtpWithProxyParams): Promise<VerifyOtpWithProxyResult>;

/** The helpers bound to one service; its keys fetched on first use and again once when a check fails (rotation). */
export interface SigilClient {
  serviceKeys(options?: { refresh?: boolean }): Promise<ServiceKey[]>;
  encryptOtpCode(params: EncryptOtpCodeParams): Promise<string>;
  verifyOtpTargetBundle(otpEncryptionTargetBundle: string): Promise<string>;
  verifySessionJwt(jwt: string, options?: { now?: number }): Promise<SessionClaims>;
  verifyVerificationToken(token: string, options?: { now?: number }): Promise<VerificationTokenClaims>;
  decryptExportBundle(params: DecryptExportBundleParams): Promise<string>;
  encryptWalletToBundle(params: EncryptWalletToBundleParams): Promise<string>;
}

export declare function createSigilClient(options: { baseUrl: string; fetch?: typeof fetch }): SigilClient;
