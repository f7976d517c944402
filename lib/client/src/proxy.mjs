// @ts-check
// verifyOtpWithProxy: the one step of @turnkey/core's OTP flow that cannot run unchanged
// against a self-hosted service behind its auth proxy (docs/logins.md §5.4,
// docs/auth-proxy.md §7). Core's verifyOtp encrypts the code only after checking init_otp's
// bundle against the hosted signer key it pins; this does the same with the keys the service
// publishes and then posts to the proxy exactly what core would: POST
// <authProxyUrl>/v1/otp_verify_v2, header X-Auth-Proxy-Config-ID, body {otpId, encryptedOtpBundle}.
import { fetchServiceKeys, publicKeysFor } from "./discovery.mjs";
import { encryptOtpCode } from "./otp.mjs";
import { verifyVerificationToken } from "./tokens.mjs";

/** The header naming the proxy configuration, spelled as @turnkey/core sends it. */
export const AUTH_PROXY_CONFIG_HEADER = "X-Auth-Proxy-Config-ID";

/**
 * A refusal by the proxy (or the API behind it). The message is built as the SDK's
 * TurnkeyRequestError builds it, so code that matches core's messages (e.g. "Invalid OTP code")
 * matches these too.
 */
export class AuthProxyRequestError extends Error {
  /**
   * @param {{ code?: number; message?: string; details?: unknown[] | null }} body
   * @param {number} status
   */
  constructor(body, status) {
    let text = `Turnkey error ${body.code}: ${body.message}`;
    if (body.details != null) text += ` (Details: ${JSON.stringify(body.details)})`;
    super(text);
    this.name = "TurnkeyRequestError";
    /** @type {number | undefined} gRPC code of the body */
    this.code = body.code;
    /** @type {unknown[] | null} */
    this.details = body.details ?? null;
    /** @type {number} HTTP status */
    this.status = status;
  }
}

/**
 * @param {import("../client.mjs").VerifyOtpWithProxyParams} params
 * @returns {Promise<import("../client.mjs").VerifyOtpWithProxyResult>}
 */
export async function verifyOtpWithProxy(params) {
  const { authProxyUrl, authProxyConfigId, apiBaseUrl, otpId, otpEncryptionTargetBundle, otpCode, publicKey } = params;
  for (const [name, value] of Object.entries({
    authProxyUrl,
    authProxyConfigId,
    apiBaseUrl,
    otpId,
    otpEncryptionTargetBundle,
    otpCode,
    publicKey,
  })) {
    if (typeof value !== "string" || value === "") throw new TypeError(`verifyOtpWithProxy: ${name} must be a non-empty string`);
  }
  const doFetch = params.fetch ?? globalThis.fetch;
  const keys = await fetchServiceKeys(apiBaseUrl, { fetch: doFetch });
  const encryptedOtpBundle = await encryptOtpCode({
    otpCode,
    otpEncryptionTargetBundle,
    publicKey,
    signerPublicKeys: publicKeysFor(keys, "OTP_ENCRYPTION_TARGET"),
  });
  const res = await doFetch(`${authProxyUrl.replace(/\/+$/, "")}/v1/otp_verify_v2`, {
    method: "POST",
    headers: { "Content-Type": "application/json", [AUTH_PROXY_CONFIG_HEADER]: authProxyConfigId },
    body: JSON.stringify({ otpId, encryptedOtpBundle }),
  });
  if (!res.ok) {
    /** @type {unknown} */
    let body;
    try {
      body = await res.json();
    } catch {
      // As core: a body that is not JSON becomes "<status> <statusText>".
      throw new Error(`${res.status} ${res.statusText}`);
    }
    const b = /** @type {Record<string, unknown>} */ (body && typeof body === "object" ? body : {});
    throw new AuthProxyRequestError(
      {
        ...(typeof b.code === "number" ? { code: b.code } : {}),
        message: typeof b.message === "string" ? b.message : `${res.status} ${res.statusText}`,
        details: Array.isArray(b.details) ? b.details : null,
      },
      res.status,
    );
  }
  const { verificationToken } = /** @type {Record<string, unknown>} */ ((await res.json()) ?? {});
  if (typeof verificationToken !== "string") throw new Error("otp_verify_v2: the response has no verificationToken");
  // The token must be this service's and bound to the key the caller will sign with: core signs
  // its client signatures with the key the token names.
  const claims = verifyVerificationToken(verificationToken, publicKeysFor(keys, "VERIFICATION_TOKEN"));
  if (claims.public_key.toLowerCase() !== publicKey.toLowerCase())
    throw new Error("otp_verify_v2: the verification token is bound to another key");
  return { verificationToken, publicKey };
}
