// Signatures written into a PSBT's own bytes (BIP-174 framing: magic, the global map, one map
// per input, one per output; a map is key-value pairs ended by a zero-length key). Only the
// signed inputs' maps change: the new pairs replace any of the same key and the rest stays as
// the client sent it. Re-encoding the whole PSBT through @scure/btc-signer validated every
// public key it wrote (a square root in JavaScript per signature) and cost more than the
// signatures (docs/signing.md §6). Callers pass bytes @scure/btc-signer has already read.
import { varint } from "./bitcoin-sighash.ts";

const MAGIC = Buffer.from("70736274ff", "hex");

export type PsbtPair = { key: Uint8Array; value: Uint8Array };

function readVarint(b: Buffer, at: number): [number, number] {
  const first = b[at];
  if (first === undefined) throw new Error("the PSBT ends inside a length");
  if (first < 0xfd) return [first, at + 1];
  if (first === 0xfd) return [b.readUInt16LE(at + 1), at + 3];
  if (first === 0xfe) return [b.readUInt32LE(at + 1), at + 5];
  throw new Error("a PSBT length over 4 GiB");
}

/** Skips one map from `at`; returns where each of its pairs starts and ends, and where the map ends (after its 0x00). */
function skipMap(b: Buffer, at: number): { pairs: { key: Buffer; start: number; end: number }[]; end: number } {
  const pairs: { key: Buffer; start: number; end: number }[] = [];
  for (;;) {
    const start = at;
    const [keyLength, keyAt] = readVarint(b, at);
    if (keyLength === 0) return { pairs, end: keyAt };
    const key = b.subarray(keyAt, keyAt + keyLength);
    const [valueLength, valueAt] = readVarint(b, keyAt + keyLength);
    at = valueAt + valueLength;
    if (at > b.length) throw new Error("the PSBT ends inside a value");
    pairs.push({ key, start, end: at });
  }
}

/**
 * The PSBT with `added` pairs in the maps of the inputs named (index → pairs); a pair of the
 * same key already there is replaced. `inputCount` is the number of input maps.
 */
export function withInputPairs(psbt: Uint8Array, inputCount: number, added: ReadonlyMap<number, readonly PsbtPair[]>): Buffer {
  const b = Buffer.from(psbt.buffer, psbt.byteOffset, psbt.byteLength);
  if (!b.subarray(0, MAGIC.length).equals(MAGIC)) throw new Error("not a PSBT");
  const parts: Buffer[] = [];
  let copied = 0;
  let at = skipMap(b, MAGIC.length).end;
  for (let i = 0; i < inputCount; i++) {
    const map = skipMap(b, at);
    const pairs = added.get(i);
    if (pairs) {
      parts.push(b.subarray(copied, at));
      for (const p of map.pairs) if (!pairs.some((n) => p.key.equals(n.key))) parts.push(b.subarray(p.start, p.end));
      for (const p of pairs) parts.push(varint(p.key.length), Buffer.from(p.key), varint(p.value.length), Buffer.from(p.value));
      parts.push(Buffer.of(0));
      copied = map.end;
    }
    at = map.end;
  }
  parts.push(b.subarray(copied));
  return Buffer.concat(parts);
}
