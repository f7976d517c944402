// Types for ./turnkey-crypto.mjs (@sigil/client/turnkey-crypto): every export of the app's
// @turnkey/crypto (a peer dependency), encryptOtpCodeToBundle with the same signature, and
// configureSigil.
export * from "@turnkey/crypto";

export interface SigilConfig {
  /** The Sigil API's base URL; its GET /public/v1/discovery/keys names the trusted OTP signer keys. */
  apiBaseUrl: string;
  /** Instead of the global fetch. */
  fetch?: typeof fetch;
}

/** Sets the deployment whose published OTP_ENCRYPTION_TARGET keys are trusted. Call once at start-up. */
export declare function configureSigil(options: SigilConfig): void;

/**
 * @turnkey/crypto's function, checking the bundle against each OTP_ENCRYPTION_TARGET key the
 * configured deployment publishes. An explicit `dangerouslyOverrideSignerPublicKey` is passed
 * to the real function unchanged.
 */
export declare function encryptOtpCodeToBundle(
  otpCode: string,
  otpEncryptionTargetBundle: string,
  publicKey: string,
  dangerouslyOverrideSignerPublicKey?: string,
): Promise<string>;
