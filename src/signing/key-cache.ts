// The derived-key cache (docs/signing.md §5): a wallet account's private key costs a BIP-39
// seed (PBKDF2, 2048 rounds) and a BIP-32/SLIP-10 derivation to make, far more than the
// signature itself. Derived keys are kept here *sealed* with the master key (envelope
// encryption bound to wallet, curve and path, as a private key row is), so a hit costs one
// AES-GCM open instead of the derivation. Bounded (least recently used out first), per master
// key, never persisted. A wallet's mnemonic never changes and its id is never reused, so an
// entry cannot go stale; the caller serves it only after its own read in the signing
// transaction has found the account (a deleted account never signs from the cache).
import type { MasterKey } from "../crypto/envelope.ts";
import { Lru } from "../cache/lru.ts";

/** Sealed derived keys kept per master key. [our choice: a few hundred bytes each, under 1 MiB in all] */
export const DERIVED_KEY_CACHE_ENTRIES = 1024;

const aad = (id: string) => `derived-key-cache:${id}`;

const caches = new WeakMap<MasterKey, Lru<string>>();

function cacheOf(masterKey: MasterKey): Lru<string> {
  let c = caches.get(masterKey);
  if (!c) {
    c = new Lru<string>(DERIVED_KEY_CACHE_ENTRIES);
    caches.set(masterKey, c);
  }
  return c;
}

/** The name of a derived key: its wallet, curve and path (what determines it). */
export const derivedKeyId = (walletId: string, curve: string, path: string) => `${walletId}|${curve}|${path}`;

/** The cached key, opened into a fresh buffer the caller zeroes; undefined on a miss. */
export function cachedDerivedKey(masterKey: MasterKey, id: string): Uint8Array | undefined {
  const sealed = cacheOf(masterKey).get(id);
  return sealed === undefined ? undefined : masterKey.open(sealed, aad(id));
}

/** Keeps `key` sealed (the caller still owns and zeroes `key`). */
export function cacheDerivedKey(masterKey: MasterKey, id: string, key: Uint8Array): void {
  cacheOf(masterKey).set(id, masterKey.seal(Buffer.from(key.buffer, key.byteOffset, key.length), aad(id)));
}

/** Entries held for this master key (tests). */
export const derivedKeyCacheSize = (masterKey: MasterKey) => cacheOf(masterKey).size;
