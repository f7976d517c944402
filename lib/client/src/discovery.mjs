// @ts-check
// The service's published P-256 keys: GET <base>/public/v1/discovery/keys (no authentication)
// → {"keys":[{keyId, purpose, publicKey (uncompressed hex), createdAt, status}]}. Keys are
// `active` (signing now) or `published` (signed before a rotation; still verifies).

/** @typedef {import("../client.mjs").ServiceKeyPurpose} ServiceKeyPurpose */
/** @typedef {import("../client.mjs").ServiceKey} ServiceKey */

export const DISCOVERY_PATH = "/public/v1/discovery/keys";

/** @type {readonly ServiceKeyPurpose[]} */
const PURPOSES = ["SESSION_JWT", "OTP_ENCRYPTION_TARGET", "VERIFICATION_TOKEN", "BUNDLE_SIGNER"];

/**
 * Fetches and checks the key document.
 * @param {string} baseUrl e.g. "https://sigil.example.com"
 * @param {{ fetch?: typeof fetch }} [options]
 * @returns {Promise<ServiceKey[]>}
 */
export async function fetchServiceKeys(baseUrl, options = {}) {
  const doFetch = options.fetch ?? globalThis.fetch;
  const res = await doFetch(`${String(baseUrl).replace(/\/+$/, "")}${DISCOVERY_PATH}`, { headers: { accept: "application/json" } });
  if (!res.ok) throw new Error(`${DISCOVERY_PATH}: HTTP ${res.status}`);
  /** @type {unknown} */
  const doc = await res.json();
  const keys = /** @type {{ keys?: unknown }} */ (doc ?? {}).keys;
  if (!Array.isArray(keys)) throw new Error(`${DISCOVERY_PATH}: expected {"keys": [...]}`);
  /** @type {ServiceKey[]} */
  const out = [];
  for (const k of keys) {
    const { keyId, purpose, publicKey, createdAt, status } = /** @type {Record<string, unknown>} */ (k ?? {});
    if (typeof keyId !== "string" || typeof publicKey !== "string" || !/^04[0-9a-f]{128}$/.test(publicKey)) continue;
    if (!PURPOSES.includes(/** @type {ServiceKeyPurpose} */ (purpose))) continue;
    if (status !== "active" && status !== "published") continue;
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the service sends a string; anything else is shown as it stringifies
    out.push({ keyId, purpose: /** @type {ServiceKeyPurpose} */ (purpose), publicKey, createdAt: String(createdAt ?? ""), status });
  }
  return out;
}

/**
 * The public keys (uncompressed hex) of one purpose.
 * @param {readonly ServiceKey[]} keys
 * @param {ServiceKeyPurpose} purpose
 * @returns {string[]}
 */
export function publicKeysFor(keys, purpose) {
  return keys.filter((k) => k.purpose === purpose).map((k) => k.publicKey);
}
