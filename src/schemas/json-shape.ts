// The shape of a JSON text — how deeply it nests, how many object members and values it holds —
// found by one pass over its bytes before anything parses it (docs/network.md §6.2).
// Depth: JSON.parse itself copes with deep input, but everything after it that recurses
// (schema checks, JSON.stringify, the NUL walk) would overflow the stack on a body nested
// thousands of levels deep. Members and values: JSON.parse is one synchronous call no request
// can interrupt, and its cost follows the values it builds, not the bytes (a megabyte of
// `{"k1":0,"k2":0,…}` took 0.5–1 s on the loaded 2-core machine, a megabyte of one string 1 ms);
// every other tenant waits for it. Refusing such a body up front bounds all of them.

/** Deepest nesting of objects and arrays a request body may have. Real requests need < 10. */
export const MAX_JSON_DEPTH = 64;
/**
 * Object members in the whole body. The cost that matters: each object whose keys come in an
 * order JSON.parse has not seen costs it a new hidden class (5–10 µs each on the loaded 2-core
 * machine), so 5,000 such members cost 20–60 ms. Every activity's fullest request fits except
 * create_users and create_sub_organization with 100 users each holding 10 API keys, 10 passkeys
 * and 10 OAuth providers (13,701 members); 100 users with 2 of each fit (docs/network.md §6.2).
 */
export const MAX_JSON_MEMBERS = 5_000;
/**
 * Values in the whole body, an empty object or array counted as if it held one (the scan counts
 * every object or array opened and every comma between members or elements, plus one). Cheaper
 * each than members (25,000 arrays nested 62 deep parse in 10–20 ms loaded); every activity's
 * fullest request that passes the member limit fits.
 */
export const MAX_JSON_VALUES = 25_000;

export interface JsonLimits {
  depth: number;
  members: number;
  values: number;
}

export const JSON_LIMITS: JsonLimits = { depth: MAX_JSON_DEPTH, members: MAX_JSON_MEMBERS, values: MAX_JSON_VALUES };

// The bytes a JSON scanner looks for (also the streaming one, src/pipeline/body-stream.ts).
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const OPEN_BRACE = 0x7b;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACE = 0x7d;
export const CLOSE_BRACKET = 0x5d;
export const COMMA = 0x2c;
export const COLON = 0x3a;

/**
 * The first limit `raw` goes past, or undefined. Brackets, commas and colons inside strings do
 * not count; a backslash escapes the next byte. UTF-8 continuation and lead bytes are >= 0x80,
 * so they never look like any of the ASCII bytes above. Malformed JSON is not judged here
 * (JSON.parse reports it): the scan only has to be right for well-formed text. It stops at the
 * first limit passed, and skips each string with the native indexOf, so a body of long strings
 * (hex, base64) costs little more than a copy.
 */
export function exceededJsonLimit(raw: Uint8Array, limits: JsonLimits = JSON_LIMITS): keyof JsonLimits | undefined {
  let depth = 0;
  let members = 0;
  let values = 1;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i]!;
    if (b === QUOTE) {
      i = closingQuote(raw, i);
    } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (++depth > limits.depth) return "depth";
      if (++values > limits.values) return "values";
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      depth--;
    } else if (b === COMMA) {
      if (++values > limits.values) return "values";
    } else if (b === COLON) {
      if (++members > limits.members) return "members";
    }
  }
  return undefined;
}

/** Index of the quote that closes the string opened at `open` (raw.length if none). */
function closingQuote(raw: Uint8Array, open: number): number {
  for (let q = open; ;) {
    q = raw.indexOf(QUOTE, q + 1);
    if (q < 0) return raw.length;
    // Escaped when an odd number of backslashes precede it (the opening quote stops the count).
    let k = q - 1;
    while (raw[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q;
  }
}

/** True when `raw` opens more than `max` objects/arrays inside one another. */
export function nestsDeeperThan(raw: Uint8Array, max: number): boolean {
  return exceededJsonLimit(raw, { depth: max, members: Infinity, values: Infinity }) === "depth";
}
