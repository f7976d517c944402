// The derived-key cache (docs/signing.md §5): a wallet account's private key costs a BIP-39
// seed (PBKDF2, 2048 rounds) and a BIP-32/SLIP-10 derivation to make, far more than the
// signature itself. Derived keys are kept here *sealed*: AES-256-GCM under a random key of
// this cache (made when the cache is, never written anywhere), bound by associated data to
// wallet, curve and path, so a hit costs one AES-GCM open instead of the derivation. Bounded
// (least recently used out first), per master key, never persisted. A memory dump shows what
// the database already shows: sealed values and a key that opens them (the master key is
// there too). A wallet's mnemonic never changes and its id is never reused, so an entry
// cannot go stale; the caller serves it only once the signing transaction has established
// that the account still exists (a deleted account never signs from the cache).
import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from "node:crypto";
import type { MasterKey } from "../crypto/envelope.ts";
import { Lru } from "../cache/lru.ts";

/** Sealed derived keys kept per master key. [our choice: a few hundred bytes each, under 1 MiB in all] */
export const DERIVED_KEY_CACHE_ENTRIES = 1024;

const aad = (id: string) => Buffer.from(`derived-key-cache:${id}`);

/** Sealed entries (iv ‖ ciphertext ‖ tag) and the key that seals them. */
class SealedCache {
  readonly entries = new Lru<Buffer>(DERIVED_KEY_CACHE_ENTRIES);
  readonly #key: KeyObject = createSecretKey(randomBytes(32));

  seal(id: string, plaintext: Uint8Array): Buffer {
    const iv = randomBytes(12);
    const c = createCipheriv("aes-256-gcm", this.#key, iv);
    c.setAAD(aad(id));
    const ct = Buffer.concat([c.update(plaintext), c.final()]);
    return Buffer.concat([iv, ct, c.getAuthTag()]);
  }

  open(id: string, sealed: Buffer): Buffer {
    const d = createDecipheriv("aes-256-gcm", this.#key, sealed.subarray(0, 12));
    d.setAAD(aad(id));
    d.setAuthTag(sealed.subarray(sealed.length - 16));
    return Buffer.concat([d.update(sealed.subarray(12, sealed.length - 16)), d.final()]);
  }
}

const caches = new WeakMap<MasterKey, SealedCache>();

function cacheOf(masterKey: MasterKey): SealedCache {
  let c = caches.get(masterKey);
  if (!c) {
    c = new SealedCache();
    caches.set(masterKey, c);
  }
  return c;
}

/** The name of a derived key: its wallet, curve and path (what determines it). */
export const derivedKeyId = (walletId: string, curve: string, path: string) => `${walletId}|${curve}|${path}`;

/** The cached key, opened into a fresh buffer the caller zeroes; undefined on a miss. */
export function cachedDerivedKey(masterKey: MasterKey, id: string): Uint8Array | undefined {
  const c = cacheOf(masterKey);
  const sealed = c.entries.get(id);
  return sealed === undefined ? undefined : c.open(id, sealed);
}

/** Keeps `key` sealed (the caller still owns and zeroes `key`). */
export function cacheDerivedKey(masterKey: MasterKey, id: string, key: Uint8Array): void {
  const c = cacheOf(masterKey);
  c.entries.set(id, c.seal(id, key));
}

/** Entries held for this master key (tests). */
export const derivedKeyCacheSize = (masterKey: MasterKey) => cacheOf(masterKey).entries.size;
