// @ts-check
// createSigilClient: the helpers bound to one service, its published keys fetched once and
// fetched again (once) when something is signed by a key the cached set lacks — a rotation.
import { fetchServiceKeys, publicKeysFor } from "./discovery.mjs";
import { encryptOtpCode, verifyOtpTargetBundle } from "./otp.mjs";
import { decryptExportBundle, encryptWalletToBundle } from "./bundles.mjs";
import { verifySessionJwt, verifyVerificationToken } from "./tokens.mjs";

export { DISCOVERY_PATH, fetchServiceKeys, publicKeysFor } from "./discovery.mjs";
export { encryptOtpCode, verifyOtpTargetBundle } from "./otp.mjs";
export { decryptExportBundle, encryptWalletToBundle, generateTargetKeyPair } from "./bundles.mjs";
export { verifySessionJwt, verifyVerificationToken } from "./tokens.mjs";
export { AUTH_PROXY_CONFIG_HEADER, AuthProxyRequestError, verifyOtpWithProxy } from "./proxy.mjs";

/** @typedef {import("../client.mjs").ServiceKey} ServiceKey */
/** @typedef {import("../client.mjs").ServiceKeyPurpose} ServiceKeyPurpose */
/** @typedef {import("../client.mjs").SigilClient} SigilClient */

/**
 * @param {{ baseUrl: string; fetch?: typeof fetch }} options
 * @returns {SigilClient}
 */
export function createSigilClient(options) {
  /** @type {Promise<ServiceKey[]> | undefined} */
  let cached;
  const load = (/** @type {boolean} */ refresh) => {
    if (!cached || refresh) {
      cached = fetchServiceKeys(options.baseUrl, options.fetch ? { fetch: options.fetch } : {});
      cached.catch(() => (cached = undefined));
    }
    return cached;
  };
  /**
   * `use` with the keys of `purpose`; when it throws, once more with a fresh key set.
   * @template T
   * @param {ServiceKeyPurpose} purpose
   * @param {(keys: string[]) => T | Promise<T>} use
   * @returns {Promise<T>}
   */
  const withKeys = async (purpose, use) => {
    try {
      return await use(publicKeysFor(await load(false), purpose));
    } catch {
      return use(publicKeysFor(await load(true), purpose));
    }
  };
  return {
    serviceKeys: (opts = {}) => load(opts.refresh === true),
    encryptOtpCode: (p) => withKeys("OTP_ENCRYPTION_TARGET", (keys) => encryptOtpCode({ ...p, signerPublicKeys: keys })),
    verifyOtpTargetBundle: (bundle) => withKeys("OTP_ENCRYPTION_TARGET", (keys) => verifyOtpTargetBundle(bundle, keys)),
    verifySessionJwt: (jwt, opts) => withKeys("SESSION_JWT", (keys) => verifySessionJwt(jwt, keys, opts)),
    verifyVerificationToken: (token, opts) => withKeys("VERIFICATION_TOKEN", (keys) => verifyVerificationToken(token, keys, opts)),
    decryptExportBundle: (p) => withKeys("BUNDLE_SIGNER", (keys) => decryptExportBundle({ ...p, signerPublicKeys: keys })),
    encryptWalletToBundle: (p) => withKeys("BUNDLE_SIGNER", (keys) => encryptWalletToBundle({ ...p, signerPublicKeys: keys })),
  };
}
