// The body checks that run over every request: the shape scan over raw bytes (nesting, object
// members, values: before JSON.parse, docs/network.md §6.2) and the U+0000 walk over the parsed
// body (§6.3).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { KindGuard, type TSchema } from "@sinclair/typebox";
import { MAX_JSON_DEPTH, MAX_JSON_MEMBERS, MAX_JSON_VALUES, exceededJsonLimit, nestsDeeperThan } from "../../src/schemas/json-shape.ts";
import { LARGE_BODY_BYTES, betweenSteps, parseJsonBody, refuseUnstorableCharacters } from "../../src/pipeline/body.ts";
import { ACTIVITIES } from "../../src/activities/registry.ts";
import { unstorableCharacters } from "../../src/schemas/unstorable-characters.ts";

/** Nesting depth of a parsed JSON value: a scalar is 0, `[]` and `{}` are 1. */
function depthOf(v: unknown): number {
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(depthOf));
  if (v && typeof v === "object") return 1 + Math.max(0, ...Object.values(v).map(depthOf));
  return 0;
}

// Strings full of what the scan must not mistake for structure.
const tricky = fc.string({ unit: fc.constantFrom("[", "]", "{", "}", '"', "\\", '\\"', "é", "😀", "\u0000", "a") });

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

/** Object members and values of a parsed JSON value, an empty object or array counted as if it held one. */
function countOf(v: unknown): { members: number; values: number } {
  if (typeof v !== "object" || v === null) return { members: 0, values: 1 };
  const items = Array.isArray(v) ? v : Object.values(v);
  const inner = items.map(countOf);
  return {
    members: (Array.isArray(v) ? 0 : items.length) + inner.reduce((n, c) => n + c.members, 0),
    values: 1 + Math.max(1, items.length) - items.length + inner.reduce((n, c) => n + c.values, 0),
  };
}

/** A value of `schema` with every optional member present and every array at its maxItems (unbounded arrays: one item). */
function fullest(schema: TSchema): unknown {
  if (KindGuard.IsObject(schema)) return Object.fromEntries(Object.entries(schema.properties).map(([k, s]) => [k, fullest(s)]));
  if (KindGuard.IsArray(schema)) return Array.from({ length: schema.maxItems ?? 1 }, () => fullest(schema.items));
  if (KindGuard.IsUnion(schema)) {
    const options = schema.anyOf.map(fullest);
    return options.reduce((a, b) => (JSON.stringify(a).length >= JSON.stringify(b).length ? a : b));
  }
  if (KindGuard.IsRecord(schema)) return { k: "x" };
  return "x";
}

describe("JSON member and value limits", () => {
  it("counts members and values as the parsed value holds them, whatever the strings contain", () => {
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "medium" },
        tricky,
        fc.integer(),
        fc.constant(null),
        fc.array(tie("value"), { maxLength: 4 }),
        fc.dictionary(tricky, tie("value"), { maxKeys: 4 }),
      ),
    }));
    fc.assert(
      fc.property(value, fc.boolean(), (inner, pretty) => {
        // A body is an object.
        const v = { inner };
        const raw = Buffer.from(pretty ? JSON.stringify(v, null, 2) : JSON.stringify(v), "utf8");
        const { members, values } = countOf(v);
        const at = (m: number, n: number) => exceededJsonLimit(raw, { depth: Infinity, members: m, values: n });
        assert.equal(at(members, values), undefined);
        if (members > 0) assert.equal(at(members - 1, values), "members");
        assert.equal(at(members, values - 1), "values");
      }),
      { numRuns: 2000 },
    );
  });

  it("counts exactly to the limits", () => {
    const members = (n: number) => Buffer.from(`{${Array.from({ length: n }, (_, i) => `"k${i}":0`).join(",")}}`);
    assert.equal(exceededJsonLimit(members(MAX_JSON_MEMBERS)), undefined);
    assert.equal(exceededJsonLimit(members(MAX_JSON_MEMBERS + 1)), "members");
    // The array and its elements: n − 1 elements make n values.
    const zeros = (n: number) =>
      Buffer.from(
        `[${Array(n - 1)
          .fill("0")
          .join(",")}]`,
      );
    assert.equal(exceededJsonLimit(zeros(MAX_JSON_VALUES)), undefined);
    assert.equal(exceededJsonLimit(zeros(MAX_JSON_VALUES + 1)), "values");
    assert.equal(exceededJsonLimit(Buffer.from(`{"a":"${",:[{".repeat(100_000)}"}`)), undefined, "inside a string nothing counts");
  });

  it("leave room for the fullest request of every activity, and for 100 users with 2 keys, passkeys and providers each", () => {
    const MANY_USERS = new Set([
      "ACTIVITY_TYPE_CREATE_USERS_V3",
      "ACTIVITY_TYPE_CREATE_USERS_V4",
      "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7",
      "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8",
    ]);
    for (const def of ACTIVITIES) {
      const parameters = fullest(def.validator.schema) as Record<string, unknown>;
      if (MANY_USERS.has(def.type)) {
        const users = (parameters.users ?? parameters.rootUsers) as Record<string, unknown>[];
        assert.equal(users.length, 100);
        for (const user of users)
          for (const list of ["apiKeys", "authenticators", "oauthProviders"]) user[list] = (user[list] as unknown[]).slice(0, 2);
      }
      const { members, values } = countOf({ type: def.type, timestampMs: "1", organizationId: "x", parameters });
      assert.ok(members <= MAX_JSON_MEMBERS && values <= MAX_JSON_VALUES, `${def.type}: ${members} members, ${values} values`);
    }
  });

  it("parseJsonBody refuses a body past a limit with 400 naming the body", () => {
    const body = (pad: string) => Buffer.from(`{"organizationId":"x","pad":${pad}}`);
    for (const [pad, message] of [
      [`{${Array.from({ length: MAX_JSON_MEMBERS }, (_, i) => `"k${i}":0`).join(",")}}`, /more than 5,000 object members/],
      [`[${Array(MAX_JSON_VALUES).fill("[]").join(",")}]`, /more than 25,000 values/],
      ["[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH), /nested more than 64 levels deep/],
    ] as const) {
      assert.throws(
        () => parseJsonBody(body(pad)),
        (err: { status?: number; message: string; details?: unknown }) => {
          assert.match(err.message, message);
          assert.match(JSON.stringify(err), /"field":"body"/);
          return true;
        },
      );
    }
  });

  it("the U+0000 walk runs whenever the text holds an escape that could decode to one", () => {
    for (const text of [String.raw`{"a":"\\u0000"}`, `{"a":"x"}`, String.raw`{"a":"\\\\u0000"}`])
      refuseUnstorableCharacters(parseJsonBody(Buffer.from(text)));
    for (const text of [
      String.raw`{"a":"\u0000"}`,
      String.raw`{"a":"\ud800"}`,
      String.raw`{"a":"\uDC00"}`,
      String.raw`{"a\u0000":1}`,
      String.raw`{"a":"\\\u0000"}`,
    ]) {
      assert.throws(() => refuseUnstorableCharacters(parseJsonBody(Buffer.from(text))), /must not contain/, text);
    }
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
    assert.deepEqual(
      unstorableCharacters(JSON.parse('{"__proto__":{"a":"\\u0000"}}')).map((v) => v.field),
      ["__proto__.a"],
    );
    assert.deepEqual(unstorableCharacters({ a: ["", 1, null, true, { b: "\u0001" }] }), []);
  });

  it("names unpaired surrogates, high or low, in values and keys; a pair passes", () => {
    const body = JSON.parse(
      '{"a":"\\ud800","b":"x\\udc00y","c":["\\udbff\\udbff\\udc00"],"d\\udfff":1,"ok":"\\ud83d\\ude00","e":"\\udc00\\ud800"}',
    ) as unknown;
    const found = unstorableCharacters(body);
    assert.deepEqual(
      found.map((v) => v.field),
      ["a", "b", "c[0]", '["d\\udfff"]', "e"],
    );
    assert.match(found[0]!.description, /unpaired surrogate/);
    assert.deepEqual(unstorableCharacters({ s: "\u{1F600} plain \u00e9" }), []);
  });

  it("stops at 20 violations", () => {
    assert.equal(unstorableCharacters(Array.from({ length: 100 }, () => "\u0000")).length, 20);
  });
});

// docs/network.md §6.1: a large body's steps are separate turns of the event loop.
describe("large bodies take turns", () => {
  it("a body of LARGE_BODY_BYTES or more yields a turn of the event loop; a smaller one none", async () => {
    assert.equal(betweenSteps(Buffer.alloc(LARGE_BODY_BYTES - 1)), undefined);
    let ran = false;
    setImmediate(() => (ran = true));
    const turn = betweenSteps(Buffer.alloc(LARGE_BODY_BYTES));
    assert.ok(turn instanceof Promise);
    await turn;
    assert.equal(ran, true, "what was queued before it ran first");
  });
});
