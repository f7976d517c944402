// How deeply a JSON text nests, found by one pass over its bytes before anything parses it.
// JSON.parse itself copes with deep input, but everything after it that recurses
// (structuredClone, schema checks, JSON.stringify, the NUL walk) would overflow the stack
// on a body nested thousands of levels deep: refusing such a body up front bounds them all.

/** Deepest nesting of objects and arrays a request body may have. Real requests need < 10. */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * True when `raw` opens more than `max` objects/arrays inside one another. Brackets inside
 * strings do not count; a backslash escapes the next byte. UTF-8 continuation and lead bytes
 * are >= 0x80, so they never look like any of the ASCII bytes above. Malformed JSON is not
 * judged here (JSON.parse reports it): the scan only has to be right for well-formed text.
 */
export function nestsDeeperThan(raw: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) {
      inString = true;
    } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}
