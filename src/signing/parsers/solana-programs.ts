// The instructions of the programs Sigil knows — System, SPL Token, Token-2022, Associated Token
// Account, Compute Budget — read as those programs read them, and what each one moves
// (docs/signing-policies.md §1.3.1). Pure; constant work per instruction (no loop depends on
// the data), so the largest transaction stays cheap to read.
import { ParseError } from "./errors.ts";

export const SYSTEM_PROGRAM = "11111111111111111111111111111111";
export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
export const TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
export const ASSOCIATED_TOKEN_PROGRAM = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL";
export const COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111";

export type SolanaTransferFacts = {
  from: string;
  to: string;
  amount: bigint;
};

export type SolanaSplTransferFacts = {
  from: string;
  to: string;
  amount: bigint;
  owner: string;
  signers: string[];
  /** Absent for a plain Transfer, which names no mint. */
  token_mint?: string;
};

/** What one instruction moves: at most one entry of `transfers` or of `spl_transfers`. */
export type InstructionMoves = { transfer?: SolanaTransferFacts; spl_transfer?: SolanaSplTransferFacts };

/**
 * The amount of a move whose size is read on chain, not from the transaction (CloseAccount,
 * WithdrawExcessLamports): the most an account can hold, so a cap on amounts never lets it
 * through (docs/signing-policies.md §1.3.1).
 */
export const UNKNOWN_AMOUNT = 2n ** 64n - 1n;

const NOTHING: InstructionMoves = Object.freeze({});

/**
 * What instruction `index` moves when it calls a known program; undefined for other programs.
 * `keys` are its accounts' keys in order. A known program's instruction Sigil cannot show to a
 * policy — a tag it does not know, or a funds-moving tag with too little data or too few
 * accounts for the program to run it — is a ParseError naming the instruction, never left out.
 */
export function readKnownInstruction(
  index: number,
  program: string,
  data: Uint8Array,
  keys: readonly string[],
): InstructionMoves | undefined {
  const read = READERS[program];
  if (!read) return undefined;
  try {
    return read(data, keys, program === TOKEN_2022_PROGRAM);
  } catch (err) {
    if (err instanceof ParseError) throw new ParseError(`instruction ${index}: ${err.message}`);
    throw err;
  }
}

type Reader = (data: Uint8Array, keys: readonly string[], token2022: boolean) => InstructionMoves;

const READERS: Record<string, Reader> = {
  [SYSTEM_PROGRAM]: systemInstruction,
  [TOKEN_PROGRAM]: tokenInstruction,
  [TOKEN_2022_PROGRAM]: tokenInstruction,
  [ASSOCIATED_TOKEN_PROGRAM]: associatedTokenInstruction,
  [COMPUTE_BUDGET_PROGRAM]: computeBudgetInstruction,
};

// Read in place: no view object per instruction (a 64 KiB transaction holds thousands).
const u32le = (b: Uint8Array, at: number): number => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16)) + b[at + 3]! * 0x1000000;
const u64le = (b: Uint8Array, at: number): bigint => (BigInt(u32le(b, at + 4)) << 32n) | BigInt(u32le(b, at));

/** The program would refuse the instruction: too little data or too few accounts for `name`. */
function need(name: string, data: Uint8Array, bytes: number, keys: readonly string[], accounts: number): void {
  if (data.length < bytes || keys.length < accounts) {
    throw new ParseError(
      `${name} needs at least ${bytes} bytes of data and ${accounts} accounts; it has ${data.length} and ${keys.length}`,
    );
  }
}

const unknown = (program: string, tag: number | string): never => {
  throw new ParseError(`${program} instruction ${tag} is not one Sigil can show to a policy`);
};

/**
 * A bincode string (u64 LE length, then the bytes) at `at`: the offset after it. Too short for
 * its length is the program's refusal; the length is compared as a bigint, never looped over.
 */
function afterSeed(name: string, data: Uint8Array, at: number): number {
  if (data.length < at + 8) throw new ParseError(`${name} is too short for its seed length`);
  const len = u64le(data, at);
  if (len > BigInt(data.length - at - 8)) throw new ParseError(`${name} is too short for its ${len}-byte seed`);
  return at + 8 + Number(len);
}

const lamports = (from: string, to: string, amount: bigint): InstructionMoves => ({ transfer: { from, to, amount } });

/**
 * System program: a u32 LE tag, then bincode fields; trailing bytes are ignored, as the program
 * ignores them. Tags 0–13 of the program's instruction enum.
 */
function systemInstruction(data: Uint8Array, keys: readonly string[]): InstructionMoves {
  if (data.length < 4) throw new ParseError(`System instruction data is ${data.length} bytes, shorter than its 4-byte tag`);
  const tag = u32le(data, 0);
  switch (tag) {
    case 0: // CreateAccount { lamports, space, owner }: [funding, new account]
      need("System CreateAccount", data, 52, keys, 2);
      return lamports(keys[0]!, keys[1]!, u64le(data, 4));
    case 2: // Transfer { lamports }: [from, to]
      need("System Transfer", data, 12, keys, 2);
      return lamports(keys[0]!, keys[1]!, u64le(data, 4));
    case 3: {
      // CreateAccountWithSeed { base, seed, lamports, space, owner }: [funding, new account, base?]
      const at = afterSeed("System CreateAccountWithSeed", data, 36);
      need("System CreateAccountWithSeed", data, at + 48, keys, 2);
      return lamports(keys[0]!, keys[1]!, u64le(data, at));
    }
    case 5: // WithdrawNonceAccount(lamports): [nonce account, recipient, …]
      need("System WithdrawNonceAccount", data, 12, keys, 2);
      return lamports(keys[0]!, keys[1]!, u64le(data, 4));
    case 11: {
      // TransferWithSeed { lamports, from_seed, from_owner }: [from, base, to]
      const at = afterSeed("System TransferWithSeed", data, 12);
      need("System TransferWithSeed", data, at + 32, keys, 3);
      return lamports(keys[0]!, keys[2]!, u64le(data, 4));
    }
    case 13: {
      // CreateAccountAllowPrefund { lamports, space, owner }: [new account, funding?]
      need("System CreateAccountAllowPrefund", data, 52, keys, 1);
      const amount = u64le(data, 4);
      if (keys.length >= 2) return lamports(keys[1]!, keys[0]!, amount);
      if (amount === 0n) return NOTHING;
      throw new ParseError("System CreateAccountAllowPrefund moves lamports without a funding account");
    }
    // Assign, AdvanceNonceAccount, InitializeNonceAccount, AuthorizeNonceAccount, Allocate,
    // AllocateWithSeed, AssignWithSeed, UpgradeNonceAccount: no lamports move.
    case 1:
    case 4:
    case 6:
    case 7:
    case 8:
    case 9:
    case 10:
    case 12:
      return NOTHING;
    default:
      return unknown("System", tag);
  }
}

const spl = (
  from: string,
  to: string,
  amount: bigint,
  owner: string,
  signers: readonly string[],
  token_mint?: string,
): InstructionMoves => ({
  spl_transfer: { from, to, amount, owner, signers: [...signers], ...(token_mint === undefined ? {} : { token_mint }) },
});

/** Token tags that move neither tokens nor lamports out of an account (both programs). */
const TOKEN_MOVES_NOTHING = new Set([0, 1, 2, 4, 5, 6, 7, 10, 11, 13, 14, 16, 17, 18, 19, 20, 21, 22, 23, 24]);
/** Token-2022 extension tags none of whose sub-instructions move tokens or lamports. */
const TOKEN_2022_MOVES_NOTHING = new Set([25, 28, 29, 30, 31, 32, 33, 34, 35, 36, 39, 40, 41, 43, 44]);

/**
 * SPL Token and Token-2022: a u8 tag, then fixed fields read from the front; trailing bytes are
 * ignored, as the programs ignore them.
 */
function tokenInstruction(data: Uint8Array, keys: readonly string[], token2022: boolean): InstructionMoves {
  const name = token2022 ? "Token-2022" : "Token";
  if (data.length === 0) throw new ParseError(`${name} instruction has no tag`);
  const tag = data[0]!;
  switch (tag) {
    case 3: // Transfer { amount }: [source, destination, owner, …signers]
      need(`${name} Transfer`, data, 9, keys, 3);
      return spl(keys[0]!, keys[1]!, u64le(data, 1), keys[2]!, keys.slice(3));
    case 12: // TransferChecked { amount, decimals }: [source, mint, destination, owner, …signers]
      need(`${name} TransferChecked`, data, 10, keys, 4);
      return spl(keys[0]!, keys[2]!, u64le(data, 1), keys[3]!, keys.slice(4), keys[1]!);
    case 8: // Burn { amount }: [account, mint, owner, …signers] — the tokens go to no one.
      need(`${name} Burn`, data, 9, keys, 3);
      return spl(keys[0]!, "", u64le(data, 1), keys[2]!, keys.slice(3), keys[1]!);
    case 15: // BurnChecked { amount, decimals }
      need(`${name} BurnChecked`, data, 10, keys, 3);
      return spl(keys[0]!, "", u64le(data, 1), keys[2]!, keys.slice(3), keys[1]!);
    case 9: // CloseAccount: [account, destination, owner, …] — its lamports go to destination.
      need(`${name} CloseAccount`, data, 1, keys, 3);
      return lamports(keys[0]!, keys[1]!, UNKNOWN_AMOUNT);
    case 38: // WithdrawExcessLamports: [source, destination, authority, …]
      need(`${name} WithdrawExcessLamports`, data, 1, keys, 3);
      return lamports(keys[0]!, keys[1]!, UNKNOWN_AMOUNT);
  }
  if (TOKEN_MOVES_NOTHING.has(tag)) return NOTHING;
  if (!token2022) return unknown(name, tag);
  if (tag === 26) return transferFeeInstruction(data, keys);
  if (TOKEN_2022_MOVES_NOTHING.has(tag)) return NOTHING;
  // 27 confidential transfers, 37 confidential transfer fees, 42 confidential mint and burn
  // (amounts encrypted), the token-metadata and token-group interfaces, anything later.
  return unknown(name, tag);
}

/** Token-2022's transfer-fee extension (tag 26): a u8 sub-tag, then fixed fields. */
function transferFeeInstruction(data: Uint8Array, keys: readonly string[]): InstructionMoves {
  if (data.length < 2) throw new ParseError("Token-2022 TransferFeeExtension instruction has no sub-tag");
  switch (data[1]) {
    case 1: // TransferCheckedWithFee { amount, decimals, fee }: [source, mint, destination, owner, …signers]
      need("Token-2022 TransferCheckedWithFee", data, 19, keys, 4);
      return spl(keys[0]!, keys[2]!, u64le(data, 2), keys[3]!, keys.slice(4), keys[1]!);
    case 0:
    case 4:
    case 5: // InitializeTransferFeeConfig, HarvestWithheldTokensToMint, SetTransferFee
      return NOTHING;
    default: // 2, 3: withdrawals of withheld fees, whose amounts are on chain.
      return unknown("Token-2022", `26/${data[1]}`);
  }
}

/** Associated Token Account: Create (empty or 0), CreateIdempotent (1), RecoverNested (2). */
function associatedTokenInstruction(data: Uint8Array): InstructionMoves {
  if (data.length === 0 || (data.length === 1 && data[0]! <= 2)) return NOTHING;
  return unknown("Associated Token Account", data.length === 1 ? data[0]! : `of ${data.length} bytes`);
}

/** Compute Budget: RequestHeapFrame (1), SetComputeUnitLimit (2), SetComputeUnitPrice (3), SetLoadedAccountsDataSizeLimit (4). */
function computeBudgetInstruction(data: Uint8Array): InstructionMoves {
  if (data.length >= 1 && data[0]! >= 1 && data[0]! <= 4) return NOTHING;
  return unknown("Compute Budget", data.length === 0 ? "without a tag" : data[0]!);
}
