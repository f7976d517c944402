// Serialized Solana transactions (legacy and v0 messages, signatures unset or not) → the
// `solana.tx` facts, and the slot each signer's signature goes in. Pure
// (docs/signing-policies.md §1.3, §2.2).
import { base58 } from "@scure/base";
import { ParseError, hexBytes, toHex } from "./errors.ts";
import { readKnownInstruction, type SolanaSplTransferFacts, type SolanaTransferFacts } from "./solana-programs.ts";

export type { SolanaSplTransferFacts, SolanaTransferFacts } from "./solana-programs.ts";

export type SolanaAccountFacts = {
  /** '' for an account loaded from an address table (its key is not in the transaction). */
  account_key: string;
  signer: boolean;
  writable: boolean;
};

export type SolanaLookupFacts = {
  address_table_key: string;
  writable_indexes: bigint[];
  readonly_indexes: bigint[];
};

export type SolanaInstructionFacts = {
  program_key: string;
  accounts: SolanaAccountFacts[];
  instruction_data_hex: string;
  /** The address-table entries this instruction's accounts come from. */
  address_table_lookups: SolanaLookupFacts[];
};

export type SolanaTxFacts = {
  account_keys: string[];
  program_keys: string[];
  instructions: SolanaInstructionFacts[];
  transfers: SolanaTransferFacts[];
  spl_transfers: SolanaSplTransferFacts[];
  address_table_lookups: SolanaLookupFacts[];
  recent_blockhash: string;
};

export interface ParsedSolanaTx {
  version: "legacy" | 0;
  /** The serialized message: what each signer signs. */
  message: Uint8Array;
  /** The signature slots, in order; slot i belongs to account_keys[i]. */
  signatures: Uint8Array[];
  facts: SolanaTxFacts;
}

const MAX_TX_BYTES = 64 * 1024;
/**
 * Instructions, and account references summed over them, per transaction (docs/signing-policies.md §1.3):
 * each becomes facts a policy walks, so their count, not the bytes, is what a transaction
 * costs — 21,800 empty instructions (64 KiB) held the event loop 0.5–1 s. Both are above what
 * fits in a network packet (1,232 bytes: at most ~390 instructions, ~1,150 references).
 */
export const MAX_SOLANA_INSTRUCTIONS = 512;
export const MAX_SOLANA_ACCOUNT_REFERENCES = 2_048;

class Reader {
  at = 0;
  constructor(readonly b: Uint8Array) {}
  u8(what: string): number {
    if (this.at >= this.b.length) throw new ParseError(`Solana transaction truncated at ${what}`);
    return this.b[this.at++]!;
  }
  bytes(n: number, what: string): Uint8Array {
    if (this.at + n > this.b.length) throw new ParseError(`Solana transaction truncated at ${what}`);
    const out = this.b.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
  /** compact-u16 ("shortvec"): 7 bits a byte, at most 3 bytes, minimal. */
  shortvec(what: string): number {
    let n = 0;
    for (let i = 0; i < 3; i++) {
      const b = this.u8(what);
      n |= (b & 0x7f) << (7 * i);
      if ((b & 0x80) === 0) {
        if (i > 0 && b === 0) throw new ParseError(`${what}: non-minimal length`);
        if (n > 0xffff) throw new ParseError(`${what}: length out of range`);
        return n;
      }
    }
    throw new ParseError(`${what}: length out of range`);
  }
}

export function parseSolanaTransaction(hex: string): ParsedSolanaTx {
  const raw = hexBytes(hex, "unsignedTransaction");
  if (raw.length > MAX_TX_BYTES) throw new ParseError(`unsignedTransaction is longer than ${MAX_TX_BYTES} bytes`);
  const r = new Reader(raw);
  const sigCount = r.shortvec("signature count");
  const signatures: Uint8Array[] = [];
  for (let i = 0; i < sigCount; i++) signatures.push(r.bytes(64, `signature ${i}`));
  const messageStart = r.at;
  let version: "legacy" | 0 = "legacy";
  let first = r.u8("message header");
  if (first & 0x80) {
    if ((first & 0x7f) !== 0) throw new ParseError(`unsupported Solana message version ${first & 0x7f}`);
    version = 0;
    first = r.u8("message header");
  }
  const required = first;
  const readonlySigned = r.u8("message header");
  const readonlyUnsigned = r.u8("message header");
  if (required === 0) throw new ParseError("a Solana message needs at least one signer");
  if (sigCount !== required) throw new ParseError(`the transaction has ${sigCount} signature slots for ${required} required signers`);
  const keyCount = r.shortvec("account key count");
  const keys: string[] = [];
  for (let i = 0; i < keyCount; i++) keys.push(base58.encode(r.bytes(32, `account key ${i}`)));
  if (required > keyCount || readonlySigned >= required || readonlyUnsigned > keyCount - required)
    throw new ParseError("the message header does not fit its account keys");
  if (new Set(keys).size !== keys.length) throw new ParseError("the message lists an account key twice");
  const recent_blockhash = base58.encode(r.bytes(32, "recent blockhash"));

  const rawInstructions: { program: number; accounts: number[]; data: Uint8Array }[] = [];
  const ixCount = r.shortvec("instruction count");
  if (ixCount > MAX_SOLANA_INSTRUCTIONS)
    throw new ParseError(`the transaction has ${ixCount} instructions; at most ${MAX_SOLANA_INSTRUCTIONS} are accepted`);
  let references = 0;
  for (let i = 0; i < ixCount; i++) {
    const program = r.u8(`instruction ${i} program`);
    const n = r.shortvec(`instruction ${i} account count`);
    if ((references += n) > MAX_SOLANA_ACCOUNT_REFERENCES) {
      throw new ParseError(
        `the transaction's instructions name more than ${MAX_SOLANA_ACCOUNT_REFERENCES} accounts in all (an account named twice counts twice)`,
      );
    }
    const accounts = Array.from(r.bytes(n, `instruction ${i} accounts`));
    const data = r.bytes(r.shortvec(`instruction ${i} data length`), `instruction ${i} data`);
    rawInstructions.push({ program, accounts, data });
  }
  const lookups: SolanaLookupFacts[] = [];
  if (version === 0) {
    const count = r.shortvec("address table lookup count");
    for (let i = 0; i < count; i++) {
      const key = base58.encode(r.bytes(32, `address table ${i}`));
      const writable = Array.from(r.bytes(r.shortvec(`address table ${i} writable count`), `address table ${i}`), BigInt);
      const readonly = Array.from(r.bytes(r.shortvec(`address table ${i} readonly count`), `address table ${i}`), BigInt);
      if (writable.length + readonly.length === 0) throw new ParseError(`address table ${i} loads no account`);
      lookups.push({ address_table_key: key, writable_indexes: writable, readonly_indexes: readonly });
    }
  }
  if (r.at !== raw.length) throw new ParseError(`${raw.length - r.at} trailing bytes after the Solana message`);

  // Loaded accounts follow the static keys: every table's writable entries, then every table's readonly ones.
  const loaded: { table: number; writable: boolean; index: bigint }[] = [];
  lookups.forEach((l, t) => l.writable_indexes.forEach((index) => loaded.push({ table: t, writable: true, index })));
  lookups.forEach((l, t) => l.readonly_indexes.forEach((index) => loaded.push({ table: t, writable: false, index })));
  const total = keyCount + loaded.length;
  if (total > 256) throw new ParseError("the message addresses more than 256 accounts");

  const account = (i: number): SolanaAccountFacts => {
    if (i < keyCount) {
      const signer = i < required;
      const writable = signer ? i < required - readonlySigned : i < keyCount - readonlyUnsigned;
      return { account_key: keys[i]!, signer, writable };
    }
    return { account_key: "", signer: false, writable: loaded[i - keyCount]!.writable };
  };
  const program_keys: string[] = [];
  const instructions: SolanaInstructionFacts[] = [];
  const transfers: SolanaTransferFacts[] = [];
  const spl_transfers: SolanaSplTransferFacts[] = [];
  rawInstructions.forEach((ix, n) => {
    if (ix.program >= keyCount) throw new ParseError(`instruction ${n}: its program must be a static account key`);
    for (const a of ix.accounts) if (a >= total) throw new ParseError(`instruction ${n}: account index ${a} out of range`);
    const program_key = keys[ix.program]!;
    if (!program_keys.includes(program_key)) program_keys.push(program_key);
    const accounts = ix.accounts.map(account);
    const byTable = new Map<number, SolanaLookupFacts>();
    for (const a of ix.accounts) {
      if (a < keyCount) continue;
      const l = loaded[a - keyCount]!;
      let entry = byTable.get(l.table);
      if (!entry)
        byTable.set(
          l.table,
          (entry = { address_table_key: lookups[l.table]!.address_table_key, writable_indexes: [], readonly_indexes: [] }),
        );
      (l.writable ? entry.writable_indexes : entry.readonly_indexes).push(l.index);
    }
    instructions.push({ program_key, accounts, instruction_data_hex: toHex(ix.data), address_table_lookups: [...byTable.values()] });
    // What a known program's instruction moves, read as that program reads it; a form Sigil
    // cannot show to a policy refuses the transaction (docs/signing-policies.md §1.3.1).
    const moves = readKnownInstruction(
      n,
      program_key,
      ix.data,
      accounts.map((a) => a.account_key),
    );
    if (moves?.transfer) transfers.push(moves.transfer);
    if (moves?.spl_transfer) spl_transfers.push(moves.spl_transfer);
  });
  return {
    version,
    message: raw.subarray(messageStart),
    signatures,
    facts: { account_keys: keys, program_keys, instructions, transfers, spl_transfers, address_table_lookups: lookups, recent_blockhash },
  };
}

/** The transaction with `signature` in the slot of `signer` (a base58 public key): 0x-less hex, as it came. */
export function placeSolanaSignature(tx: ParsedSolanaTx, signer: string, signature: Uint8Array): string {
  const slot = tx.facts.account_keys.indexOf(signer);
  if (slot < 0 || slot >= tx.signatures.length) throw new ParseError(`${signer} is not a required signer of this transaction`);
  if (signature.length !== 64) throw new Error("an ed25519 signature is 64 bytes");
  const header = shortvecBytes(tx.signatures.length);
  const sigs = tx.signatures.map((s, i) => (i === slot ? signature : s));
  return toHex(Uint8Array.from([...header, ...sigs.flatMap((s) => Array.from(s)), ...tx.message]));
}

function shortvecBytes(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if (n === 0) return [...out, b];
    out.push(b | 0x80);
  }
}
