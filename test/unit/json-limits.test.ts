// The two body checks that run over every request: the nesting scan over raw bytes (before
// JSON.parse) and the U+0000 walk over the parsed body.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../../src/schemas/json-depth.ts";
import { unstorableCharacters } from "../../src/schemas/unstorable-characters.ts";

/** Nesting depth of a parsed JSON value: a scalar is 0, `[]` and `{}` are 1. */
function depthOf(v: unknown): number {
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(depthOf));
  if (v && typeof v === "object") return 1 + Math.max(0, ...Object.values(v).map(depthOf));
  return 0;
}

// Strings full of what the scan must not mistake for structure.
const tricky = fc.string({ unit: fc.constantFrom("[", "]", "{", "}", '"', "\\", "\\\"", "é", "😀", "\u0000", "a") });

describe("JSON nesting scan", () => {
  it("agrees with the depth of the parsed value, whatever the strings contain", () => {
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "medium" },
        tricky,
        fc.integer(),
        fc.constant(null),
        fc.array(tie("value"), { maxLength: 3 }),
        fc.dictionary(tricky, tie("value"), { maxKeys: 3 }),
      ),
    }));
    fc.assert(
      fc.property(value, fc.integer({ min: 0, max: 12 }), fc.boolean(), (v, max, pretty) => {
        const text = pretty ? JSON.stringify(v, null, 2) : JSON.stringify(v);
        assert.equal(nestsDeeperThan(Buffer.from(text, "utf8"), max), depthOf(v) > max, text);
      }),
      { numRuns: 2000 },
    );
  });

  it("counts exactly to the limit", () => {
    const nested = (n: number) => Buffer.from("[".repeat(n) + "]".repeat(n));
    assert.equal(nestsDeeperThan(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH), false);
    assert.equal(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH), true);
    assert.equal(nestsDeeperThan(Buffer.from(`{"a":"${"[".repeat(1000)}"}`), 2), false);
    assert.equal(nestsDeeperThan(Buffer.from(`{"a":"\\\\","b":[[[]]]}`), 3), true, "an escaped backslash ends before the quote");
    // A million levels is one linear pass, no recursion.
    assert.equal(nestsDeeperThan(nested(1_000_000), MAX_JSON_DEPTH), true);
  });
});

describe("U+0000 walk", () => {
  it("names every value and key holding U+0000, in validator notation", () => {
    const body = JSON.parse(
      JSON.stringify({ a: "ok", b: "x\u0000", c: [{ d: "\u0000" }, "fine"], "e\u0000": 1, "f g": ["\u0000"], __proto__x: "\u0000" }),
    ) as unknown;
    assert.deepEqual(
      unstorableCharacters(body).map((v) => v.field),
      ["b", "c[0].d", '["e\\u0000"]', '["f g"][0]', "__proto__x"],
    );
    assert.deepEqual(unstorableCharacters(JSON.parse('{"__proto__":{"a":"\\u0000"}}')).map((v) => v.field), ["__proto__.a"]);
    assert.deepEqual(unstorableCharacters({ a: ["", 1, null, true, { b: "\u0001" }] }), []);
  });

  it("names unpaired surrogates, high or low, in values and keys; a pair passes", () => {
    const body = JSON.parse('{"a":"\\ud800","b":"x\\udc00y","c":["\\udbff\\udbff\\udc00"],"d\\udfff":1,"ok":"\\ud83d\\ude00","e":"\\udc00\\ud800"}') as unknown;
    const found = unstorableCharacters(body);
    assert.deepEqual(found.map((v) => v.field), ["a", "b", "c[0]", '["d\\udfff"]', "e"]);
    assert.match(found[0]!.description, /unpaired surrogate/);
    assert.deepEqual(unstorableCharacters({ s: "\u{1F600} plain \u00e9" }), []);
  });

  it("stops at 20 violations", () => {
    assert.equal(unstorableCharacters(Array.from({ length: 100 }, () => "\u0000")).length, 20);
  });
});
