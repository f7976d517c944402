// What the HTTP reader learns of a large body chunk by chunk (src/pipeline/body-stream.ts,
// docs/network.md §6.1) equals what the pipeline works out over the whole body: the shape
// verdict of exceededJsonLimit (docs/network.md §6.2), the text of raw.toString("utf8"), and the
// unstorable-escape test over that text (§6.3) — wherever the chunks are cut: inside strings,
// between a backslash and what it escapes, inside a UTF-8 sequence or a `\u` escape; and each
// chunk is looked at in a turn of its own, not in the turn that received it.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { BodyFacts, JsonShapeScanner } from "../../src/pipeline/body-stream.ts";
import { exceededJsonLimit, type JsonLimits } from "../../src/schemas/json-shape.ts";

const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

/** Deterministic pseudo-random numbers (a test that fails must fail again). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TRICKY = ['"', "\\", "\\\\", '\\"', "[", "]", "{", "}", ",", ":", "é", "😀", "\u0000", "\ud800", "\\u0000", "\\ud83d", "a", " "];

/** A random JSON text: strings full of quotes, backslashes, brackets and multibyte characters. */
function randomJson(next: () => number, depth = 0): unknown {
  const r = next();
  if (depth > 6 || r < 0.3) {
    const parts = Array.from({ length: Math.floor(next() * 6) }, () => TRICKY[Math.floor(next() * TRICKY.length)]!);
    return r < 0.15 ? Math.floor(next() * 100) : parts.join("");
  }
  if (r < 0.65) return Array.from({ length: Math.floor(next() * 4) }, () => randomJson(next, depth + 1));
  return Object.fromEntries(
    Array.from({ length: Math.floor(next() * 4) }, (_, i) => [
      `${TRICKY[Math.floor(next() * TRICKY.length)]}${i}`,
      randomJson(next, depth + 1),
    ]),
  );
}

const VECTORS: string[] = [
  '{"a":1}',
  '{"a":"x\\"y","b":[1,2,{"c":"]}[{,:"}]}',
  '{"k":"\\\\","l":"\\\\\\"","m":"\\\\\\\\"}',
  '["\\"","\\\\\\"",[[[[[]]]]],{"":{"":{"":[]}}}]',
  '{"pad":"\\u0000","q":"\\ud83d\\ude00","r":"\\\\u0000"}',
  `{"deep":${"[".repeat(70)}${"]".repeat(70)}}`,
  `{"many":{${Array.from({ length: 30 }, (_, i) => `"k${i}":${i}`).join(",")}}}`,
  `[${Array(40).fill("0").join(",")}]`,
  '{"s":"é😀 \\" [ { , :"}',
  '{"unterminated":"abc',
  "  \n\t{ } ",
];

const LIMITS: JsonLimits[] = [
  { depth: 64, members: 5_000, values: 25_000 },
  { depth: 3, members: 4, values: 6 },
  { depth: 2, members: 100, values: 100 },
  { depth: 100, members: 2, values: 100 },
  { depth: 100, members: 100, values: 3 },
];

/** `bytes` cut at `cuts` (sorted positions). */
function pieces(bytes: Buffer, cuts: number[]): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  for (const c of [...cuts, bytes.length]) {
    out.push(bytes.subarray(at, c));
    at = c;
  }
  return out;
}

/** Every single cut, every byte its own chunk, and random multi-cuts. */
function cutsOf(length: number, next: () => number): number[][] {
  const all: number[][] = [[]];
  for (let c = 0; c <= length; c++) all.push([c]);
  all.push(Array.from({ length: Math.max(0, length - 1) }, (_, i) => i + 1));
  for (let k = 0; k < 20; k++)
    all.push(Array.from({ length: 1 + Math.floor(next() * 6) }, () => Math.floor(next() * (length + 1))).sort((a, b) => a - b));
  return all;
}

const texts = (): string[] => {
  const next = random(7);
  return [...VECTORS, ...Array.from({ length: 60 }, () => JSON.stringify(randomJson(next)))];
};

describe("a body's facts, gathered chunk by chunk", () => {
  it("chunks received in one turn are looked at in later turns, one a turn", async () => {
    const facts = new BodyFacts();
    const chunk = Buffer.from(`[${Array(20_000).fill("0").join(",")}]`);
    for (let i = 0; i < 4; i++) facts.push(chunk.subarray(i * 10_000, (i + 1) * 10_000));
    facts.push(chunk.subarray(40_000));
    let turns = 0;
    const count = () => {
      turns++;
      if (turns < 100) setImmediate(count);
    };
    setImmediate(count);
    const got = await facts.end(chunk);
    assert.ok(turns >= 5, `other work ran ${turns} times while 5 chunks were looked at`);
    assert.equal(got.exceeded, exceededJsonLimit(chunk));
  });

  it("the shape scanner's verdict equals exceededJsonLimit's over the whole body, wherever it is cut", () => {
    const next = random(11);
    let compared = 0;
    for (const text of texts()) {
      const bytes = Buffer.from(text);
      for (const limits of LIMITS) {
        const whole = exceededJsonLimit(bytes, limits);
        for (const cuts of cutsOf(bytes.length, next)) {
          const scanner = new JsonShapeScanner(limits);
          for (const p of pieces(bytes, cuts)) scanner.push(p);
          assert.equal(
            scanner.exceeded,
            whole,
            `${JSON.stringify(text).slice(0, 80)} cut at ${cuts.join(",")} with ${JSON.stringify(limits)}`,
          );
          compared++;
        }
      }
    }
    assert.ok(compared > 10_000);
  });

  it("the limits are found: some vectors pass each of depth, members and values", () => {
    const small = LIMITS[1]!;
    const verdicts = new Set(texts().map((t) => exceededJsonLimit(Buffer.from(t), small)));
    for (const v of ["depth", "members", "values", undefined]) assert.ok(verdicts.has(v as keyof JsonLimits | undefined), String(v));
  });

  it("the text equals raw.toString('utf8') and the escape test equals the regular expression over it, wherever the body is cut", async () => {
    const next = random(13);
    for (const text of [
      ...texts(),
      `{"x":"${"\\u00e9".repeat(50)}\\uDBFF"}`,
      '{"x":"\\u0000"}',
      '{"x":"\\u000"}',
      '{"x":"\\ud7ff"}',
      '{"x":"\\uD800"}',
    ]) {
      const bytes = Buffer.from(text);
      for (const cuts of cutsOf(bytes.length, next)) {
        const facts = new BodyFacts();
        for (const p of pieces(bytes, cuts)) facts.push(p);
        const got = await facts.end(bytes);
        assert.equal(got.text, bytes.toString("utf8"));
        assert.equal(got.unstorableEscape, UNSTORABLE_ESCAPE.test(bytes.toString("utf8")), `${text.slice(0, 60)} cut at ${cuts.join(",")}`);
        assert.equal(got.exceeded, exceededJsonLimit(bytes));
      }
    }
  });

  it("bytes that are not UTF-8 give no text (the pipeline decodes them whole, as before)", async () => {
    const bytes = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]);
    const facts = new BodyFacts();
    facts.push(bytes.subarray(0, 7));
    facts.push(bytes.subarray(7));
    assert.equal((await facts.end(bytes)).text, undefined);
  });
});
