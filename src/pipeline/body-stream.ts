// What the pipeline learns of a large body while it arrives, chunk by chunk, so that the turn
// that parses it does only JSON.parse (docs/network.md §6.1): its shape against the limits
// (the same verdict as src/schemas/json-shape.ts `exceededJsonLimit` over the whole body,
// docs/network.md §6.2), whether its text holds a `\u` escape of U+0000 or of a surrogate (the
// same test as ./body.ts makes over the text, §6.3), and its text, decoded as it comes.
// Each chunk (64 KiB from the socket) is a fraction of a millisecond of this work, in the turn
// that received it; over a megabyte the three cost 6–10 ms, which otherwise ran in one turn.
import { StringDecoder } from "node:string_decoder";
import { isUtf8 } from "node:buffer";
import { JSON_LIMITS, type JsonLimits } from "../schemas/json-shape.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/**
 * `exceededJsonLimit` fed in pieces: the same counts, the same first limit passed, wherever
 * the pieces are cut (inside a string, between a backslash and what it escapes). Like it, it
 * only has to be right for well-formed JSON; malformed text is JSON.parse's to refuse.
 */
export class JsonShapeScanner {
  #depth = 0;
  #members = 0;
  #values = 1;
  #inString = false;
  /** Backslashes ending the last piece inside a string (their parity says whether the next byte is escaped). */
  #backslashes = 0;
  #exceeded: keyof JsonLimits | undefined;

  constructor(private readonly limits: JsonLimits = JSON_LIMITS) {}

  /** The first limit passed so far, or undefined. */
  get exceeded(): keyof JsonLimits | undefined {
    return this.#exceeded;
  }

  push(chunk: Uint8Array): void {
    if (this.#exceeded) return;
    let i = 0;
    if (this.#inString) {
      i = this.#stringEnd(chunk, 0);
      if (i < 0) return;
      i++;
    }
    const { limits } = this;
    for (; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (b === QUOTE) {
        this.#inString = true;
        this.#backslashes = 0;
        i = this.#stringEnd(chunk, i + 1);
        if (i < 0) return;
      } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
        if (++this.#depth > limits.depth) return void (this.#exceeded = "depth");
        if (++this.#values > limits.values) return void (this.#exceeded = "values");
      } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
        this.#depth--;
      } else if (b === COMMA) {
        if (++this.#values > limits.values) return void (this.#exceeded = "values");
      } else if (b === COLON) {
        if (++this.#members > limits.members) return void (this.#exceeded = "members");
      }
    }
  }

  /**
   * Inside a string from `from`: the index of its closing quote in this chunk (and the string
   * closed), or -1 when the chunk ends first (the backslashes ending it noted for the next one).
   */
  #stringEnd(chunk: Uint8Array, from: number): number {
    for (let q = from - 1; ; ) {
      q = chunk.indexOf(QUOTE, q + 1);
      if (q < 0) {
        this.#backslashes = trailingBackslashes(chunk, chunk.length, from, this.#backslashes);
        return -1;
      }
      // Escaped when an odd number of backslashes precede it: those in this chunk, and where
      // they reach back to where the string resumed, those that ended the last chunk.
      if (trailingBackslashes(chunk, q, from, this.#backslashes) % 2 === 0) {
        this.#inString = false;
        return q;
      }
    }
  }
}

/** Backslashes just before `end` back to `from`; reaching `from`, plus `carried` (those before it). */
function trailingBackslashes(chunk: Uint8Array, end: number, from: number, carried: number): number {
  let k = end - 1;
  while (k >= from && chunk[k] === BACKSLASH) k--;
  return end - 1 - k + (k < from ? carried : 0);
}

/** `\u0000` or `\ud800`–`\udfff` (any case), as ./body.ts's test over the text, on ASCII bytes. */
const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;
const ESCAPE_LENGTH = 6;
const BACKSLASH_U = Buffer.from("\\u", "latin1");

/** Whether a `\u` escape whole within `chunk` is of U+0000 or a surrogate (one cut at its end: the seam test). */
function hasUnstorableEscape(chunk: Buffer): boolean {
  for (let at = chunk.indexOf(BACKSLASH_U); at >= 0; at = chunk.indexOf(BACKSLASH_U, at + 1)) {
    if (at + ESCAPE_LENGTH > chunk.length) return false;
    const a = chunk[at + 2]!;
    const b = chunk[at + 3]!;
    if (a === 0x30 && b === 0x30 && chunk[at + 4] === 0x30 && chunk[at + 5] === 0x30) return true;
    // d or D, then 8, 9, a–f or A–F
    if ((a === 0x64 || a === 0x44) && ((b >= 0x38 && b <= 0x39) || (b >= 0x61 && b <= 0x66) || (b >= 0x41 && b <= 0x46))) return true;
  }
  return false;
}

/** What ./body.ts `parseJsonBody` would otherwise work out over the whole body in one turn. */
export interface ReceivedFacts {
  /** The first shape limit passed (docs/network.md §6.2), or undefined. */
  exceeded: keyof JsonLimits | undefined;
  /** The body as text, as `raw.toString("utf8")` gives it; absent when the bytes are not valid UTF-8 (then that decodes it). */
  text: string | undefined;
  /** The text holds a `\u` escape of U+0000 or a surrogate (docs/network.md §6.3). */
  unstorableEscape: boolean;
}

/** A body's facts, gathered from its chunks as they arrive. */
export class BodyFacts {
  readonly #shape = new JsonShapeScanner();
  readonly #decoder = new StringDecoder("utf8");
  readonly #parts: string[] = [];
  #escape = false;
  /** The body's last bytes so far, for an escape cut between chunks. */
  #tail = Buffer.alloc(0);

  push(chunk: Buffer): void {
    this.#shape.push(chunk);
    this.#parts.push(this.#decoder.write(chunk));
    if (!this.#escape) {
      const seam = Buffer.concat([this.#tail, chunk.subarray(0, ESCAPE_LENGTH - 1)]);
      this.#escape = UNSTORABLE_ESCAPE.test(seam.toString("latin1")) || hasUnstorableEscape(chunk);
      // The last bytes of the body so far (a chunk may be shorter than an escape).
      const end = chunk.length >= ESCAPE_LENGTH - 1 ? chunk : Buffer.concat([this.#tail, chunk]);
      this.#tail = Buffer.from(end.subarray(Math.max(0, end.length - (ESCAPE_LENGTH - 1))));
    }
  }

  /** The facts of the whole body, `raw` being its bytes (all the chunks pushed, in order). */
  end(raw: Buffer): ReceivedFacts {
    this.#parts.push(this.#decoder.end());
    // A decoder and a whole-buffer decode agree on valid UTF-8; anything else is decoded whole, as before.
    const text = isUtf8(raw) ? this.#parts.join("") : undefined;
    return { exceeded: this.#shape.exceeded, text, unstorableEscape: this.#escape };
  }
}
