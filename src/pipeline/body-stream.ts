// What the pipeline learns of a large body while it arrives, chunk by chunk, so that the turn
// that parses it does only JSON.parse (docs/network.md §6.1): its shape against the limits
// (the same verdict as src/schemas/json-shape.ts `exceededJsonLimit` over the whole body,
// docs/network.md §6.2), whether its text holds a `\u` escape of U+0000 or of a surrogate (the
// same test as ./body.ts makes over the text, §6.3), and its text, decoded as it comes.
// Each chunk (64 KiB from the socket) is a fraction of a millisecond of this work, in the turn
// that received it; over a megabyte the three cost 6–10 ms, which otherwise ran in one turn.
import { isUtf8 } from "node:buffer";
import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  JSON_LIMITS,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  type JsonLimits,
} from "../schemas/json-shape.ts";

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
    for (let q = from - 1; ;) {
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

/** `\u0000` or `\ud800`–`\udfff` (any case): ./body.ts's test over the text. */
const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;
/** Characters of an escape less one: what is kept of the text so far for one cut between chunks. */
const SEAM = 5;

/**
 * Where `chunk` stops being whole UTF-8: the start of a multi-byte sequence its last bytes
 * begin but do not finish (chunk.length when they finish it). Bytes that are not UTF-8 at all
 * are not judged here (BodyFacts then decodes the body whole).
 */
function wholeUpTo(chunk: Uint8Array): number {
  const n = chunk.length;
  for (let back = 1; back <= 3 && back <= n; back++) {
    const b = chunk[n - back]!;
    if (b < 0x80) return n; // ASCII: everything before it is whole
    if (b >= 0xc0) {
      // A lead byte: how long its sequence is, and whether the chunk holds all of it.
      const length = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
      return back >= length ? n : n - back;
    }
  }
  return n;
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

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A body's facts, gathered from its chunks as they arrive, each chunk in a turn of its own:
 * chunks that were waiting in the socket are all read in one turn, and doing their work there
 * would make that turn as long as the one it replaces.
 */
export class BodyFacts {
  readonly #shape = new JsonShapeScanner();
  readonly #parts: string[] = [];
  /** Chunks received, not yet looked at. */
  readonly #queue: Buffer[] = [];
  #draining: Promise<void> | undefined;
  #stopped = false;
  /** The bytes of a character cut at the end of the last chunk. */
  #carry: Buffer | undefined;
  #escape = false;
  /** The text's last characters so far, for an escape cut between chunks. */
  #tail = "";

  /** Takes the next chunk (kept, not copied: the caller must not reuse it); looked at in a later turn. */
  push(chunk: Buffer): void {
    this.#queue.push(chunk);
    this.#draining ??= this.#drain();
  }

  /** Nothing more is needed (the body was refused): the chunks left are dropped. */
  stop(): void {
    this.#stopped = true;
    this.#queue.length = 0;
  }

  async #drain(): Promise<void> {
    for (;;) {
      await nextTurn();
      const chunk = this.#queue.shift();
      if (!chunk || this.#stopped) break;
      this.#look(chunk);
    }
    this.#draining = undefined;
  }

  #look(chunk: Buffer): void {
    this.#shape.push(chunk);
    // Decoded in whole characters: a sequence cut at the chunk's end waits for the next one.
    const bytes = this.#carry ? Buffer.concat([this.#carry, chunk]) : chunk;
    const whole = wholeUpTo(bytes);
    this.#carry = whole < bytes.length ? Buffer.from(bytes.subarray(whole)) : undefined;
    this.#add(bytes.toString("utf8", 0, whole));
  }

  #add(part: string): void {
    this.#parts.push(part);
    if (!this.#escape) this.#escape = UNSTORABLE_ESCAPE.test(this.#tail + part.slice(0, SEAM)) || UNSTORABLE_ESCAPE.test(part);
    this.#tail = (part.length >= SEAM ? part : this.#tail + part).slice(-SEAM);
  }

  /** The facts of the whole body, `raw` being its bytes (all the chunks pushed, in order), once every chunk is looked at. */
  async end(raw: Buffer): Promise<ReceivedFacts> {
    while (this.#draining) await this.#draining;
    if (this.#carry) this.#add(this.#carry.toString("utf8"));
    // Decoded piece by piece, valid UTF-8 gives what decoding it whole gives; anything else is decoded whole, as before.
    const text = isUtf8(raw) ? this.#parts.join("") : undefined;
    return { exceeded: this.#shape.exceeded, text, unstorableEscape: this.#escape };
  }
}
