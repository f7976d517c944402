// @ts-check
// @sigil/client/turnkey-crypto: a drop-in for @turnkey/crypto that an app's bundler puts in its
// place (README.md "Using the kit's OTP modal"; docs/logins.md §5.5). Everything of the real
// module is re-exported unchanged except encryptOtpCodeToBundle: @turnkey/core's verifyOtp calls
// it with three arguments, so the real function compares init_otp's bundle signer with the
// hosted service's built-in key and refuses Sigil's. This one passes, as the fourth argument,
// each OTP_ENCRYPTION_TARGET key the configured deployment publishes (GET
// /public/v1/discovery/keys) in turn; the real function still checks the bundle's signature.
// A key named inside the bundle is never trusted by itself: it has to be one the deployment
// publishes.
//
// "#turnkey-crypto" (package.json "imports") names the real @turnkey/crypto — the app's copy,
// a peer dependency — by a specifier the app's exact-match alias of "@turnkey/crypto" does not
// catch, so this module never imports itself.
import * as real from "#turnkey-crypto";
import { fetchServiceKeys, publicKeysFor } from "./src/discovery.mjs";

export * from "#turnkey-crypto";

/** @typedef {import("./turnkey-crypto.d.mts").SigilConfig} SigilConfig */

// One configuration per page even when a bundle holds two copies of this module (the alias's
// and the app's own import of configureSigil): it lives on globalThis under a registered symbol.
const CONFIG = Symbol.for("@sigil/client/turnkey-crypto#config");
/** @type {Record<symbol, { apiBaseUrl: string; fetch: typeof fetch | undefined; generation: number } | undefined>} */
const shared = /** @type {any} */ (globalThis);

/** The published keys are fetched at most this often while they keep working (a rotation is noticed sooner: a failure refetches). */
const KEYS_MAX_AGE_MS = 5 * 60_000;
/** More OTP_ENCRYPTION_TARGET keys than a deployment publishes (one active, a few after rotations); bounds the tries. */
const MAX_TRIED_KEYS = 16;

/**
 * Sets the Sigil deployment whose published keys encryptOtpCodeToBundle trusts. Call once at
 * start-up, before the first OTP is verified.
 * @param {SigilConfig} options
 */
export function configureSigil(options) {
  const { apiBaseUrl, fetch: customFetch } = /** @type {Partial<SigilConfig>} */ (options ?? {});
  if (typeof apiBaseUrl !== "string" || !/^https?:\/\/[^/]/i.test(apiBaseUrl)) {
    throw new TypeError("configureSigil: apiBaseUrl must be the http(s) URL of the Sigil API, e.g. https://sigil.example.com");
  }
  if (customFetch !== undefined && typeof customFetch !== "function") throw new TypeError("configureSigil: fetch must be a function");
  shared[CONFIG] = { apiBaseUrl: apiBaseUrl.replace(/\/+$/, ""), fetch: customFetch, generation: (shared[CONFIG]?.generation ?? 0) + 1 };
}

/** @type {{ generation: number; at: number; keys: Promise<string[]> } | undefined} */
let cached;

/**
 * The deployment's OTP_ENCRYPTION_TARGET keys (uncompressed hex), cached.
 * @param {boolean} refresh
 * @returns {Promise<string[]>}
 */
function otpKeys(refresh) {
  const config = shared[CONFIG];
  if (!config) {
    throw new Error(
      "@sigil/client/turnkey-crypto: configureSigil({ apiBaseUrl }) has not been called; without it no signer key is trusted for the OTP encryption target bundle",
    );
  }
  const now = Date.now();
  if (refresh || !cached || cached.generation !== config.generation || now - cached.at > KEYS_MAX_AGE_MS) {
    const keys = fetchServiceKeys(config.apiBaseUrl, config.fetch ? { fetch: config.fetch } : {}).then((all) =>
      publicKeysFor(all, "OTP_ENCRYPTION_TARGET").slice(0, MAX_TRIED_KEYS),
    );
    const entry = { generation: config.generation, at: now, keys };
    cached = entry;
    keys.catch(() => {
      if (cached === entry) cached = undefined;
    });
  }
  return cached.keys;
}

/**
 * The real function with each key in turn; the first that verifies wins.
 * @param {string[]} keys
 * @param {[string, string, string]} args
 * @returns {Promise<string>}
 */
async function withEachKey(keys, args) {
  if (keys.length === 0) throw new Error("@sigil/client/turnkey-crypto: the deployment publishes no OTP_ENCRYPTION_TARGET key");
  /** @type {unknown} */
  let last;
  for (const key of keys) {
    try {
      return await real.encryptOtpCodeToBundle(...args, key);
    } catch (err) {
      last = err;
    }
  }
  throw new Error(
    `@sigil/client/turnkey-crypto: the OTP encryption target bundle is not signed by any of the ${keys.length} OTP_ENCRYPTION_TARGET key(s) the deployment publishes`,
    { cause: last },
  );
}

/**
 * @turnkey/crypto's encryptOtpCodeToBundle with the deployment's published signer key. An
 * explicit fourth argument is the caller's own choice and goes to the real function unchanged.
 * @param {string} otpCode
 * @param {string} otpEncryptionTargetBundle
 * @param {string} publicKey
 * @param {string} [dangerouslyOverrideSignerPublicKey]
 * @returns {Promise<string>}
 */
export async function encryptOtpCodeToBundle(otpCode, otpEncryptionTargetBundle, publicKey, dangerouslyOverrideSignerPublicKey) {
  if (dangerouslyOverrideSignerPublicKey !== undefined) {
    return real.encryptOtpCodeToBundle(otpCode, otpEncryptionTargetBundle, publicKey, dangerouslyOverrideSignerPublicKey);
  }
  /** @type {[string, string, string]} */
  const args = [otpCode, otpEncryptionTargetBundle, publicKey];
  const keys = await otpKeys(false);
  try {
    return await withEachKey(keys, args);
  } catch (err) {
    // Perhaps a rotation since the keys were fetched: once more with a fresh set, if it differs.
    const fresh = await otpKeys(true);
    if (fresh.length === keys.length && fresh.every((k, i) => k === keys[i])) throw err;
    return withEachKey(fresh, args);
  }
}
