// The sealed derived-key cache (docs/signing.md §5): bounded, least recently used out first,
// per master key, and what it gives back is the key that went in.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MasterKey } from "../../src/crypto/envelope.ts";
import {
  cacheDerivedKey,
  cachedDerivedKey,
  derivedKeyCacheSize,
  derivedKeyId,
  DERIVED_KEY_CACHE_ENTRIES,
} from "../../src/signing/key-cache.ts";

const key = (n: number) => Uint8Array.from({ length: 32 }, (_, i) => (n + i) & 0xff);

describe("derived-key cache", () => {
  it("gives back the key, to the master key that cached it only", () => {
    const mk = MasterKey.generate();
    const id = derivedKeyId("w1", "CURVE_SECP256K1", "m/44'/60'/0'/0/0");
    assert.equal(cachedDerivedKey(mk, id), undefined);
    cacheDerivedKey(mk, id, key(7));
    assert.deepEqual(Uint8Array.from(cachedDerivedKey(mk, id)!), key(7));
    assert.equal(cachedDerivedKey(MasterKey.generate(), id), undefined);
    assert.equal(cachedDerivedKey(mk, derivedKeyId("w1", "CURVE_SECP256K1", "m/44'/60'/0'/0/1")), undefined);
  });

  it("holds at most DERIVED_KEY_CACHE_ENTRIES, dropping the least recently used", () => {
    const mk = MasterKey.generate();
    for (let i = 0; i < DERIVED_KEY_CACHE_ENTRIES; i++) cacheDerivedKey(mk, `k${i}`, key(i));
    // k0 is used again: k1 is now the oldest.
    assert.ok(cachedDerivedKey(mk, "k0"));
    cacheDerivedKey(mk, "new", key(1));
    assert.equal(derivedKeyCacheSize(mk), DERIVED_KEY_CACHE_ENTRIES);
    assert.equal(cachedDerivedKey(mk, "k1"), undefined);
    assert.deepEqual(Uint8Array.from(cachedDerivedKey(mk, "k0")!), key(0));
    assert.deepEqual(Uint8Array.from(cachedDerivedKey(mk, "new")!), key(1));
  });
});
