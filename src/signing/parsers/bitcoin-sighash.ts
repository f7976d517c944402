// The digests a Bitcoin input's signature commits to (docs/signing.md §6), for the sighash
// types this service signs: SIGHASH_ALL for legacy (P2PKH) and segwit v0 (BIP-143) inputs,
// SIGHASH_DEFAULT for taproot key-path (BIP-341) inputs. The parts every input shares (the
// hashes of all outpoints, amounts, scripts, sequences and outputs) are computed once per
// transaction, so signing n segwit or taproot inputs hashes O(n) bytes, not O(n²); the legacy
// digest serializes the whole transaction per input, which is why its total is bounded
// (`legacySighashBytes`). SHA-256 is node:crypto's (native). Pure: no I/O.
import { createHash } from "node:crypto";

export interface SighashInput {
  /** The previous transaction's id in display order (as @scure/btc-signer holds it). */
  txid: Uint8Array;
  index: number;
  sequence: number;
  /** The output it spends. */
  prevout: { script: Uint8Array; amount: bigint };
}

export interface SighashTx {
  version: number;
  lockTime: number;
  inputs: readonly SighashInput[];
  outputs: readonly { script: Uint8Array; amount: bigint }[];
}

const SIGHASH_ALL = 1;

const sha256 = (...parts: Uint8Array[]): Buffer => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest();
};
const sha256d = (...parts: Uint8Array[]): Buffer => sha256(sha256(...parts));
/** BIP-340's tagged hash: SHA-256(SHA-256(tag) ‖ SHA-256(tag) ‖ parts). */
export const taggedHash = (tag: string, ...parts: Uint8Array[]): Buffer => {
  const t = sha256(Buffer.from(tag, "utf8"));
  return sha256(t, t, ...parts);
};

const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
};
const u64 = (n: bigint): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(n);
  return b;
};
/** Bitcoin's CompactSize length prefix. */
export function varint(n: number): Buffer {
  if (n < 0xfd) return Buffer.of(n);
  if (n <= 0xffff) return Buffer.of(0xfd, n & 0xff, n >>> 8);
  const b = Buffer.alloc(5);
  b[0] = 0xfe;
  b.writeUInt32LE(n, 1);
  return b;
}
const varBytes = (b: Uint8Array): Buffer => Buffer.concat([varint(b.length), b]);
/** txid (wire order: reversed) ‖ index. */
const outpoint = (i: SighashInput): Buffer => Buffer.concat([Buffer.from(i.txid).reverse(), u32(i.index)]);
const output = (o: { script: Uint8Array; amount: bigint }): Buffer => Buffer.concat([u64(o.amount), varBytes(o.script)]);

/**
 * The sighashes of one transaction. Each shared part is computed on first use and kept:
 * a new instance per transaction (and per signing: nothing here outlives the request).
 */
export class Sighasher {
  private readonly tx: SighashTx;
  /** Each input's outpoint, serialized once. */
  private readonly outpoints: Buffer[];
  private v0?: { before: Buffer; after: Buffer };
  private v1?: Buffer;
  private legacyTx?: { bytes: Buffer; scriptOffsets: number[] };

  constructor(tx: SighashTx) {
    this.tx = tx;
    this.outpoints = tx.inputs.map(outpoint);
  }

  /** BIP-143 digest, SIGHASH_ALL; `scriptCode` is P2PKH's script for a P2WPKH input. */
  segwitV0(idx: number, scriptCode: Uint8Array): Buffer {
    const { tx } = this;
    // version ‖ hashPrevouts ‖ hashSequence, and hashOutputs ‖ lock time ‖ hash type.
    this.v0 ??= {
      before: Buffer.concat([u32(tx.version), sha256d(...this.outpoints), sha256d(...tx.inputs.map((i) => u32(i.sequence)))]),
      after: Buffer.concat([sha256d(...tx.outputs.map(output)), u32(tx.lockTime), u32(SIGHASH_ALL)]),
    };
    const input = tx.inputs[idx]!;
    return sha256d(
      this.v0.before,
      this.outpoints[idx]!,
      varBytes(scriptCode),
      u64(input.prevout.amount),
      u32(input.sequence),
      this.v0.after,
    );
  }

  /** BIP-341 key-path digest, SIGHASH_DEFAULT, no annex. */
  taprootKeyPath(idx: number): Buffer {
    const { tx } = this;
    // epoch 0, hash type 0, version, lock time, the five transaction-wide hashes, and spend
    // type 0 (key path, no annex); then the input's index.
    this.v1 ??= Buffer.concat([
      Buffer.of(0, 0),
      u32(tx.version),
      u32(tx.lockTime),
      sha256(...this.outpoints),
      sha256(...tx.inputs.map((i) => u64(i.prevout.amount))),
      sha256(...tx.inputs.map((i) => varBytes(i.prevout.script))),
      sha256(...tx.inputs.map((i) => u32(i.sequence))),
      sha256(...tx.outputs.map(output)),
      Buffer.of(0),
    ]);
    return taggedHash("TapSighash", this.v1, u32(idx));
  }

  /**
   * The legacy digest, SIGHASH_ALL: the transaction without witnesses, every scriptSig empty
   * but this input's, which is `scriptCode` (P2PKH's script: no OP_CODESEPARATOR to strip).
   */
  legacy(idx: number, scriptCode: Uint8Array): Buffer {
    const { bytes, scriptOffsets } = (this.legacyTx ??= legacySerialization(this.tx, this.outpoints));
    const at = scriptOffsets[idx]!;
    // The empty scriptSig is one 0x00 byte at `at`; this input's script takes its place.
    return sha256d(bytes.subarray(0, at), varBytes(scriptCode), bytes.subarray(at + 1), u32(SIGHASH_ALL));
  }
}

/** The transaction with empty scriptSigs, and where each input's scriptSig byte is. */
function legacySerialization(tx: SighashTx, outpoints: Buffer[]): { bytes: Buffer; scriptOffsets: number[] } {
  const parts: Buffer[] = [u32(tx.version), varint(tx.inputs.length)];
  const scriptOffsets: number[] = [];
  let offset = parts[0]!.length + parts[1]!.length;
  for (const [i, input] of tx.inputs.entries()) {
    const op = outpoints[i]!;
    parts.push(op, Buffer.of(0), u32(input.sequence));
    scriptOffsets.push(offset + op.length);
    offset += op.length + 1 + 4;
  }
  parts.push(varint(tx.outputs.length), ...tx.outputs.map(output), u32(tx.lockTime));
  return { bytes: Buffer.concat(parts), scriptOffsets };
}

/** What the legacy digests of `count` inputs hash: the transaction's size, per input. */
export function legacySighashBytes(tx: SighashTx, count: number): number {
  const inputs = tx.inputs.length * (36 + 1 + 4);
  const outputs = tx.outputs.reduce((n, o) => n + 8 + varint(o.script.length).length + o.script.length, 0);
  // version, lock time, the two counts, this input's script (25 bytes for P2PKH) and the hash type.
  return count * (4 + 4 + 9 + 9 + 26 + 4 + inputs + outputs);
}
