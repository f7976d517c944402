// Signatures written into a PSBT's own bytes (BIP-174 framing: magic, the global map, one map
// per input, one per output; a map is key-value pairs ended by a zero-length key). Only the
// signed inputs' maps change: the new pairs replace any of the same key and the rest stays as
// the client sent it. Re-encoding the whole PSBT through @scure/btc-signer validated every
// public key it wrote (a square root in JavaScript per signature) and cost more than the
// signatures (docs/signing.md §6). Callers pass bytes @scure/btc-signer has already read.
import { createHash } from "node:crypto";
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

/** What the reduced read keeps aside of an input map (reduced() drops these pairs). */
export interface InputExtras {
  /** PSBT_IN_NON_WITNESS_UTXO, read here: its txid (display order) and outputs. */
  nonWitnessUtxo?: { txid: Buffer; outputs: { script: Uint8Array; amount: bigint }[] };
  tapInternalKey?: Uint8Array;
  tapLeafScript: boolean;
  tapMerkleRoot: boolean;
  redeemScript: boolean;
  witnessScript: boolean;
}

// The pairs the facts and the signer read, by map (BIP-174 / BIP-370 / BIP-371 key types):
// global: unsigned tx, tx version, fallback lock time, input and output counts, tx modifiable,
// PSBT version; input: non-witness and witness UTXO, sighash type, previous txid, output
// index, sequence, required time / height lock time; output: amount, script.
const GLOBAL_KEPT = new Set([0x00, 0x02, 0x03, 0x04, 0x05, 0x06, 0xfb]);
const INPUT_KEPT = new Set([0x01, 0x03, 0x0e, 0x0f, 0x10, 0x11, 0x12]);
const IN_NON_WITNESS_UTXO = 0x00;
const OUTPUT_KEPT = new Set([0x03, 0x04]);
const IN_REDEEM_SCRIPT = 0x04;
const IN_WITNESS_SCRIPT = 0x05;
const IN_TAP_LEAF_SCRIPT = 0x15;
const IN_TAP_INTERNAL_KEY = 0x17;
const IN_TAP_MERKLE_ROOT = 0x18;

/**
 * A previous transaction (network serialization, with or without witnesses): its txid and
 * outputs. The library's reader decoded, re-encoded and hashed each in JavaScript, ~0.5 ms per
 * transaction (docs/signing.md §6); the txid here is node:crypto's double SHA-256 of the
 * serialization without witnesses.
 */
function previousTransaction(b: Buffer): NonNullable<InputExtras["nonWitnessUtxo"]> {
  let at = 4;
  const segwit = b[at] === 0x00 && b[at + 1] === 0x01;
  if (segwit) at += 2;
  const body = at;
  const [inputs, inputsAt] = readVarint(b, at);
  at = inputsAt;
  for (let i = 0; i < inputs; i++) {
    const [len, scriptAt] = readVarint(b, at + 36);
    at = scriptAt + len + 4;
  }
  const [count, outputsAt] = readVarint(b, at);
  at = outputsAt;
  const outputs: { script: Uint8Array; amount: bigint }[] = [];
  for (let i = 0; i < count; i++) {
    const amount = b.readBigUInt64LE(at);
    const [len, scriptAt] = readVarint(b, at + 8);
    outputs.push({ script: Uint8Array.from(b.subarray(scriptAt, scriptAt + len)), amount });
    at = scriptAt + len;
  }
  const bodyEnd = at;
  if (segwit) {
    for (let i = 0; i < inputs; i++) {
      const [items, itemsAt] = readVarint(b, at);
      at = itemsAt;
      for (let j = 0; j < items; j++) {
        const [len, itemAt] = readVarint(b, at);
        at = itemAt + len;
      }
    }
  }
  if (at + 4 !== b.length) throw new Error("a non_witness_utxo is not one transaction");
  const hash = createHash("sha256").update(b.subarray(0, 4)).update(b.subarray(body, bodyEnd)).update(b.subarray(at)).digest();
  return { txid: createHash("sha256").update(hash).digest().reverse(), outputs };
}

/** The number of input and output maps the global map declares (v0: its unsigned transaction; v2: the counts). */
function mapCounts(b: Buffer, pairs: { key: Buffer; start: number; end: number }[]): { inputs: number; outputs: number } {
  const value = (type: number) => {
    const p = pairs.find((x) => x.key.length === 1 && x.key[0] === type);
    if (!p) return undefined;
    const [, valueAt] = readVarint(b, p.start + 2);
    return valueAt;
  };
  const tx = value(0x00);
  if (tx !== undefined) {
    // version (4), then the inputs: each 36 bytes of outpoint, a script, 4 of sequence.
    let [inputs, at] = readVarint(b, tx + 4);
    for (let i = 0; i < inputs; i++) {
      const [len, scriptAt] = readVarint(b, at + 36);
      at = scriptAt + len + 4;
    }
    const [outputs] = readVarint(b, at);
    return { inputs, outputs };
  }
  const inAt = value(0x04);
  const outAt = value(0x05);
  if (inAt === undefined || outAt === undefined) throw new Error("the PSBT declares no inputs or outputs");
  return { inputs: readVarint(b, inAt)[0], outputs: readVarint(b, outAt)[0] };
}

/**
 * The PSBT with only the pairs the facts and the signer read (`*_KEPT`), and per input what
 * the signer needs of the others. @scure/btc-signer validates every public key it reads — a
 * square root in JavaScript each, ~0.3 ms — so a PSBT of BIP-32 derivation paths or other
 * parties' signatures cost up to 0.7 s to read; they are neither facts nor signed
 * (docs/signing.md §6). The signed PSBT is made from the bytes as sent (withInputPairs).
 */
export function reduced(psbt: Uint8Array): { bytes: Buffer; inputs: InputExtras[] } {
  const b = Buffer.from(psbt.buffer, psbt.byteOffset, psbt.byteLength);
  if (!b.subarray(0, MAGIC.length).equals(MAGIC)) throw new Error("not a PSBT (no magic bytes)");
  const parts: Buffer[] = [MAGIC];
  const keep = (map: { pairs: { key: Buffer; start: number; end: number }[] }, kept: Set<number>) => {
    for (const p of map.pairs) if (kept.has(p.key[0]!)) parts.push(b.subarray(p.start, p.end));
    parts.push(Buffer.of(0));
  };
  const global = skipMap(b, MAGIC.length);
  keep(global, GLOBAL_KEPT);
  const counts = mapCounts(b, global.pairs);
  const inputs: InputExtras[] = [];
  let at = global.end;
  for (let i = 0; i < counts.inputs; i++) {
    const map = skipMap(b, at);
    keep(map, INPUT_KEPT);
    const has = (type: number) => map.pairs.some((p) => p.key[0] === type);
    const value = (type: number) => {
      const p = map.pairs.find((x) => x.key.length === 1 && x.key[0] === type);
      return p && b.subarray(readVarint(b, p.start + 2)[1], p.end);
    };
    const internal = value(IN_TAP_INTERNAL_KEY);
    const previous = value(IN_NON_WITNESS_UTXO);
    inputs.push({
      ...(previous ? { nonWitnessUtxo: previousTransaction(previous) } : {}),
      ...(internal ? { tapInternalKey: internal } : {}),
      tapLeafScript: has(IN_TAP_LEAF_SCRIPT),
      tapMerkleRoot: has(IN_TAP_MERKLE_ROOT),
      redeemScript: has(IN_REDEEM_SCRIPT),
      witnessScript: has(IN_WITNESS_SCRIPT),
    });
    at = map.end;
  }
  for (let i = 0; i < counts.outputs; i++) {
    const map = skipMap(b, at);
    keep(map, OUTPUT_KEPT);
    at = map.end;
  }
  if (at !== b.length) throw new Error("bytes after the last output map");
  return { bytes: Buffer.concat(parts), inputs };
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
