// src/cache/lru.ts, the one bounded cache every module uses: it never holds more than its
// bound, and forgets the least recently used entry first (a read refreshes an entry).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Lru } from "../../src/cache/lru.ts";

describe("Lru", () => {
  it("keeps at most its bound, evicting the least recently used (a get counts as use)", () => {
    const lru = new Lru<number>(3);
    for (const [k, v] of [
      ["a", 1],
      ["b", 2],
      ["c", 3],
    ] as const)
      lru.set(k, v);
    assert.equal(lru.get("a"), 1); // a is now the most recent; b the least
    lru.set("d", 4);
    assert.equal(lru.size, 3);
    assert.equal(lru.get("b"), undefined);
    assert.deepEqual([lru.get("a"), lru.get("c"), lru.get("d")], [1, 3, 4]);
    lru.set("c", 30); // re-setting refreshes and replaces
    lru.set("e", 5); // evicts a: of a, d and c, a was used longest ago
    assert.equal(lru.get("a"), undefined);
    assert.equal(lru.get("c"), 30);
  });

  it("deletes one entry, and clears them all", () => {
    const lru = new Lru<string>(2);
    lru.set("x", "1");
    lru.set("y", "2");
    lru.delete("x");
    assert.equal(lru.get("x"), undefined);
    assert.equal(lru.size, 1);
    lru.clear();
    assert.equal(lru.size, 0);
    assert.equal(lru.get("y"), undefined);
  });
});
