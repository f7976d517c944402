// Recursive Length Prefix, the byte encoding of Ethereum transactions
// (docs/signing-policies.md §1.1). Decoding is strict: one item filling the input exactly,
// minimal length prefixes, single bytes below 0x80 never wrapped — so one transaction has
// one encoding, and the bytes a policy judged are the bytes that get signed.
import { concatBytes } from "@noble/hashes/utils.js";
import { ParseError } from "./errors.ts";

export type RlpItem = Uint8Array | RlpItem[];

const MAX_DEPTH = 16;

export function rlpDecode(input: Uint8Array): RlpItem {
  const [item, end] = decodeAt(input, 0, 0);
  if (end !== input.length) throw new ParseError(`RLP: ${input.length - end} trailing bytes`);
  return item;
}

function lengthAt(input: Uint8Array, pos: number, lenOfLen: number): number {
  if (pos + lenOfLen > input.length) throw new ParseError("RLP: truncated length");
  if (input[pos] === 0) throw new ParseError("RLP: length with a leading zero");
  let n = 0;
  for (let i = 0; i < lenOfLen; i++) n = n * 256 + input[pos + i]!;
  if (n < 56) throw new ParseError("RLP: long form for a short length");
  return n;
}

function decodeAt(input: Uint8Array, pos: number, depth: number): [RlpItem, number] {
  if (depth > MAX_DEPTH) throw new ParseError("RLP: nested too deeply");
  if (pos >= input.length) throw new ParseError("RLP: truncated");
  const b = input[pos]!;
  if (b < 0x80) return [input.subarray(pos, pos + 1), pos + 1];
  if (b < 0xb8) {
    const len = b - 0x80;
    const end = pos + 1 + len;
    if (end > input.length) throw new ParseError("RLP: truncated string");
    if (len === 1 && input[pos + 1]! < 0x80) throw new ParseError("RLP: single byte below 0x80 wrapped as a string");
    return [input.subarray(pos + 1, end), end];
  }
  if (b < 0xc0) {
    const lenOfLen = b - 0xb7;
    const len = lengthAt(input, pos + 1, lenOfLen);
    const start = pos + 1 + lenOfLen;
    if (start + len > input.length) throw new ParseError("RLP: truncated string");
    return [input.subarray(start, start + len), start + len];
  }
  let start: number, len: number;
  if (b < 0xf8) {
    len = b - 0xc0;
    start = pos + 1;
  } else {
    const lenOfLen = b - 0xf7;
    len = lengthAt(input, pos + 1, lenOfLen);
    start = pos + 1 + lenOfLen;
  }
  const end = start + len;
  if (end > input.length) throw new ParseError("RLP: truncated list");
  const items: RlpItem[] = [];
  let at = start;
  while (at < end) {
    const [item, next] = decodeAt(input, at, depth + 1);
    if (next > end) throw new ParseError("RLP: list item overruns its list");
    items.push(item);
    at = next;
  }
  return [items, end];
}

function lengthPrefix(len: number, offset: number): Uint8Array {
  if (len < 56) return Uint8Array.of(offset + len);
  const bytes: number[] = [];
  for (let n = len; n > 0; n = Math.floor(n / 256)) bytes.unshift(n % 256);
  return Uint8Array.of(offset + 55 + bytes.length, ...bytes);
}

export function rlpEncode(item: RlpItem): Uint8Array {
  if (item instanceof Uint8Array) {
    if (item.length === 1 && item[0]! < 0x80) return item;
    return concatBytes(lengthPrefix(item.length, 0x80), item);
  }
  const body = concatBytes(...item.map(rlpEncode));
  return concatBytes(lengthPrefix(body.length, 0xc0), body);
}

/** An RLP scalar: big-endian, no leading zero (the empty string is 0). */
export function rlpInt(item: RlpItem, what: string): bigint {
  if (!(item instanceof Uint8Array)) throw new ParseError(`${what}: expected a number, found a list`);
  if (item.length > 32) throw new ParseError(`${what}: more than 256 bits`);
  if (item.length > 0 && item[0] === 0) throw new ParseError(`${what}: number with a leading zero`);
  let n = 0n;
  for (const b of item) n = (n << 8n) | BigInt(b);
  return n;
}

/** The minimal big-endian bytes of a non-negative integer (0 → empty). */
export function intBytes(n: bigint): Uint8Array {
  if (n === 0n) return new Uint8Array(0);
  let hex = n.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  return Uint8Array.from(Buffer.from(hex, "hex"));
}
