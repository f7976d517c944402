// Writes test/vectors/signing-parsers.json: unsigned transactions made by independent
// libraries (viem for Ethereum, @solana/web3.js for Solana) with the facts each must parse
// into, written down here from the inputs rather than from our parsers. Deterministic (fixed
// keys and blockhash), so test/unit/signing-parsers.test.ts also checks that the committed
// file is this script's output.
//
//   node --import tsx scripts/signing-vectors.ts
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { serializeTransaction, type TransactionSerializable } from "viem";
import {
  ComputeBudgetProgram,
  Keypair,
  LAMPORTS_PER_SOL,
  MessageV0,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
  VersionedTransaction,
  type AddressLookupTableAccount,
} from "@solana/web3.js";

export const VECTOR_FILE = path.resolve(import.meta.dirname, "../test/vectors/signing-parsers.json");

/** Ints are written as "<decimal>n" so JSON keeps them exact. */
const n = (v: bigint | number): string => `${BigInt(v)}n`;

const TO = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const USDC = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48";
// ERC-20 transfer(TO, 1000)
const TRANSFER_DATA =
  `0xa9059cbb000000000000000000000000${TO.slice(2).toLowerCase()}00000000000000000000000000000000000000000000000000000000000003e8` as const;

function eth(name: string, tx: TransactionSerializable, facts: Record<string, unknown>) {
  return { name, unsigned: serializeTransaction(tx), facts: { from: "", ...facts } };
}

function ethereumVectors() {
  return [
    eth(
      "legacy without a chain id",
      { type: "legacy", nonce: 7, gasPrice: 20_000_000_000n, gas: 21_000n, to: TO, value: 10n ** 18n },
      {
        type: "LEGACY",
        to: TO.toLowerCase(),
        value: n(10n ** 18n),
        data: "0x",
        function_signature: "",
        nonce: n(7),
        gas: n(21_000),
        gas_price: n(20_000_000_000n),
      },
    ),
    eth(
      "legacy, EIP-155 chain 1",
      { type: "legacy", chainId: 1, nonce: 0, gasPrice: 1n, gas: 60_000n, to: USDC, value: 0n, data: TRANSFER_DATA },
      {
        type: "LEGACY",
        to: USDC.toLowerCase(),
        value: n(0),
        data: TRANSFER_DATA,
        function_signature: "0xa9059cbb",
        nonce: n(0),
        gas: n(60_000),
        gas_price: n(1),
        chain_id: n(1),
      },
    ),
    eth(
      "EIP-2930 with an access list",
      {
        type: "eip2930",
        chainId: 11155111,
        nonce: 3,
        gasPrice: 5n,
        gas: 100_000n,
        to: TO,
        value: 1n,
        data: "0x1234",
        accessList: [{ address: USDC, storageKeys: [`0x${"00".repeat(31)}01`] }],
      },
      {
        type: "TYPE_1",
        to: TO.toLowerCase(),
        value: n(1),
        data: "0x1234",
        function_signature: "",
        nonce: n(3),
        gas: n(100_000),
        gas_price: n(5),
        chain_id: n(11155111),
      },
    ),
    eth(
      "EIP-1559 ERC-20 transfer on Base",
      {
        type: "eip1559",
        chainId: 8453,
        nonce: 42,
        maxFeePerGas: 3_000_000_000n,
        maxPriorityFeePerGas: 1_000_000n,
        gas: 65_000n,
        to: USDC,
        value: 0n,
        data: TRANSFER_DATA,
      },
      {
        type: "TYPE_2",
        to: USDC.toLowerCase(),
        value: n(0),
        data: TRANSFER_DATA,
        function_signature: "0xa9059cbb",
        nonce: n(42),
        gas: n(65_000),
        gas_price: n(3_000_000_000n),
        max_fee_per_gas: n(3_000_000_000n),
        max_priority_fee_per_gas: n(1_000_000),
        chain_id: n(8453),
      },
    ),
    eth(
      "EIP-1559 contract creation with a large value",
      {
        type: "eip1559",
        chainId: 1,
        nonce: 0,
        maxFeePerGas: 2n,
        maxPriorityFeePerGas: 1n,
        gas: 1_000_000n,
        value: 2n ** 200n,
        data: "0x6080604052",
      },
      {
        type: "TYPE_2",
        to: "",
        value: n(2n ** 200n),
        data: "0x6080604052",
        function_signature: "0x60806040",
        nonce: n(0),
        gas: n(1_000_000),
        gas_price: n(2),
        max_fee_per_gas: n(2),
        max_priority_fee_per_gas: n(1),
        chain_id: n(1),
      },
    ),
    eth(
      "EIP-7702 with one authorization",
      {
        type: "eip7702",
        chainId: 1,
        nonce: 9,
        maxFeePerGas: 10n,
        maxPriorityFeePerGas: 2n,
        gas: 80_000n,
        to: TO,
        value: 0n,
        authorizationList: [{ chainId: 1, address: USDC, nonce: 10, yParity: 1, r: `0x${"11".repeat(32)}`, s: `0x${"22".repeat(32)}` }],
      },
      {
        type: "TYPE_4",
        to: TO.toLowerCase(),
        value: n(0),
        data: "0x",
        function_signature: "",
        nonce: n(9),
        gas: n(80_000),
        gas_price: n(10),
        max_fee_per_gas: n(10),
        max_priority_fee_per_gas: n(2),
        chain_id: n(1),
        authorization_list: [{ address: USDC.toLowerCase(), chain_id: n(1), nonce: n(10) }],
      },
    ),
  ];
}

const key = (i: number) => Keypair.fromSeed(Uint8Array.from({ length: 32 }, (_, k) => (k * 7 + i * 31 + 1) & 0xff));
const BLOCKHASH = new PublicKey(Uint8Array.from({ length: 32 }, (_, k) => (k * 13 + 5) & 0xff)).toBase58();
const TOKEN = new PublicKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
const TOKEN_2022 = new PublicKey("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb");
const MEMO = new PublicKey("MemoSq4gqABAXKb7YSrLuRMH5W2cdzzxWwJgJ7kn5Hm");

function u64(v: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(v);
  return b;
}

function solanaVectors() {
  const payer = key(1),
    alice = key(2),
    bob = key(3),
    mint = key(4),
    source = key(5),
    dest = key(6),
    table = key(7);
  const sys = SystemProgram.programId.toBase58();
  const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

  // 1. legacy: a System transfer and a memo.
  const legacy = new Transaction({ feePayer: payer.publicKey, recentBlockhash: BLOCKHASH });
  legacy.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: bob.publicKey, lamports: 1_500_000 }));
  legacy.add(new TransactionInstruction({ programId: MEMO, keys: [], data: Buffer.from("hi") }));
  const legacyMsg = legacy.compileMessage();
  const legacyKeys = legacyMsg.accountKeys.map((k) => k.toBase58());

  // 2. v0: an SPL TransferChecked (Token-2022) and a plain Transfer, no lookups.
  const checkedData = Buffer.concat([Buffer.of(12), u64(250_000n), Buffer.of(6)]);
  const plainData = Buffer.concat([Buffer.of(3), u64(7n)]);
  const splIxs = [
    new TransactionInstruction({
      programId: TOKEN_2022,
      data: checkedData,
      keys: [
        { pubkey: source.publicKey, isSigner: false, isWritable: true },
        { pubkey: mint.publicKey, isSigner: false, isWritable: false },
        { pubkey: dest.publicKey, isSigner: false, isWritable: true },
        { pubkey: alice.publicKey, isSigner: true, isWritable: false },
      ],
    }),
    new TransactionInstruction({
      programId: TOKEN,
      data: plainData,
      keys: [
        { pubkey: source.publicKey, isSigner: false, isWritable: true },
        { pubkey: dest.publicKey, isSigner: false, isWritable: true },
        { pubkey: alice.publicKey, isSigner: true, isWritable: false },
      ],
    }),
  ];
  const splMsg = MessageV0.compile({ payerKey: payer.publicKey, recentBlockhash: BLOCKHASH, instructions: splIxs });
  const splKeys = splMsg.staticAccountKeys.map((k) => k.toBase58());

  // 3. v0 with an address lookup table: the recipient comes from the table.
  const lookup: AddressLookupTableAccount = {
    key: table.publicKey,
    state: {
      deactivationSlot: 2n ** 64n - 1n,
      lastExtendedSlot: 0,
      lastExtendedSlotStartIndex: 0,
      authority: undefined,
      addresses: [alice.publicKey, bob.publicKey],
    },
    isActive: () => true,
  } as AddressLookupTableAccount;
  const altMsg = MessageV0.compile({
    payerKey: payer.publicKey,
    recentBlockhash: BLOCKHASH,
    instructions: [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: bob.publicKey, lamports: 5n })],
    addressLookupTableAccounts: [lookup],
  });
  const altKeys = altMsg.staticAccountKeys.map((k) => k.toBase58());

  const acct = (keys: string[], k: string, signer: boolean, writable: boolean) => ({
    account_key: k,
    signer,
    writable,
    _index: keys.indexOf(k),
  });
  const strip = <T extends { _index: number }>(a: T) => {
    const { _index, ...rest } = a;
    if (_index < 0) throw new Error("missing key");
    return rest;
  };
  return [
    {
      name: "legacy: System transfer and a memo",
      unsigned: hex(legacy.serialize({ requireAllSignatures: false, verifySignatures: false })),
      signers: [payer.publicKey.toBase58()],
      facts: {
        account_keys: legacyKeys,
        program_keys: [sys, MEMO.toBase58()],
        instructions: [
          {
            program_key: sys,
            accounts: [
              acct(legacyKeys, payer.publicKey.toBase58(), true, true),
              acct(legacyKeys, bob.publicKey.toBase58(), false, true),
            ].map(strip),
            instruction_data_hex: hex(legacy.instructions[0]!.data),
            address_table_lookups: [],
          },
          {
            program_key: MEMO.toBase58(),
            accounts: [],
            instruction_data_hex: Buffer.from("hi").toString("hex"),
            address_table_lookups: [],
          },
        ],
        transfers: [{ from: payer.publicKey.toBase58(), to: bob.publicKey.toBase58(), amount: n(1_500_000) }],
        spl_transfers: [],
        address_table_lookups: [],
        recent_blockhash: BLOCKHASH,
      },
    },
    {
      name: "v0: SPL TransferChecked (Token-2022) and Transfer, two signers",
      unsigned: hex(new VersionedTransaction(splMsg).serialize()),
      signers: [payer.publicKey.toBase58(), alice.publicKey.toBase58()],
      facts: {
        account_keys: splKeys,
        program_keys: [TOKEN_2022.toBase58(), TOKEN.toBase58()],
        instructions: [
          {
            program_key: TOKEN_2022.toBase58(),
            accounts: [
              acct(splKeys, source.publicKey.toBase58(), false, true),
              acct(splKeys, mint.publicKey.toBase58(), false, false),
              acct(splKeys, dest.publicKey.toBase58(), false, true),
              acct(splKeys, alice.publicKey.toBase58(), true, false),
            ].map(strip),
            instruction_data_hex: hex(checkedData),
            address_table_lookups: [],
          },
          {
            program_key: TOKEN.toBase58(),
            accounts: [
              acct(splKeys, source.publicKey.toBase58(), false, true),
              acct(splKeys, dest.publicKey.toBase58(), false, true),
              acct(splKeys, alice.publicKey.toBase58(), true, false),
            ].map(strip),
            instruction_data_hex: hex(plainData),
            address_table_lookups: [],
          },
        ],
        transfers: [],
        spl_transfers: [
          {
            from: source.publicKey.toBase58(),
            to: dest.publicKey.toBase58(),
            amount: n(250_000),
            owner: alice.publicKey.toBase58(),
            signers: [],
            token_mint: mint.publicKey.toBase58(),
          },
          {
            from: source.publicKey.toBase58(),
            to: dest.publicKey.toBase58(),
            amount: n(7),
            owner: alice.publicKey.toBase58(),
            signers: [],
          },
        ],
        address_table_lookups: [],
        recent_blockhash: BLOCKHASH,
      },
    },
    {
      name: "v0: System transfer to an address-table account",
      unsigned: hex(new VersionedTransaction(altMsg).serialize()),
      signers: [payer.publicKey.toBase58()],
      facts: {
        account_keys: altKeys,
        program_keys: [sys],
        instructions: [
          {
            program_key: sys,
            accounts: [
              { account_key: payer.publicKey.toBase58(), signer: true, writable: true },
              { account_key: "", signer: false, writable: true },
            ],
            instruction_data_hex: hex(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: bob.publicKey, lamports: 5n }).data),
            address_table_lookups: [{ address_table_key: table.publicKey.toBase58(), writable_indexes: [n(1)], readonly_indexes: [] }],
          },
        ],
        transfers: [{ from: payer.publicKey.toBase58(), to: "", amount: n(5) }],
        spl_transfers: [],
        address_table_lookups: [{ address_table_key: table.publicKey.toBase58(), writable_indexes: [n(1)], readonly_indexes: [] }],
        recent_blockhash: BLOCKHASH,
      },
    },
  ];
}

const ATA = new PublicKey("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL");
const UNKNOWN_AMOUNT = 2n ** 64n - 1n;

/**
 * Instructions of the known programs (docs/signing-policies.md §1.3.1), each alone or in a small
 * transaction: what `transfers` and `spl_transfers` must hold, or the refusal (a pattern of the
 * ParseError's message). System instructions are @solana/web3.js's own encodings, some with
 * bytes appended the programs ignore; Token instructions are their documented byte layouts.
 */
function solanaInstructionVectors() {
  const payer = key(1),
    bob = key(3),
    mint = key(4),
    source = key(5),
    dest = key(6),
    fresh = key(8),
    nonce = key(9),
    base = key(10);
  const pk = (k: Keypair) => k.publicKey.toBase58();
  const meta = (k: Keypair, isSigner = false, isWritable = true) => ({ pubkey: k.publicKey, isSigner, isWritable });
  const ix = (programId: PublicKey, data: Uint8Array, keys: ReturnType<typeof meta>[]) =>
    new TransactionInstruction({ programId, keys, data: Buffer.from(data) });
  const withData = (i: TransactionInstruction, data: Uint8Array) =>
    new TransactionInstruction({ programId: i.programId, keys: i.keys, data: Buffer.from(data) });
  const unsigned = (instructions: TransactionInstruction[]) =>
    Buffer.from(
      new VersionedTransaction(MessageV0.compile({ payerKey: payer.publicKey, recentBlockhash: BLOCKHASH, instructions })).serialize(),
    ).toString("hex");
  const transfer = (from: Keypair | string, to: Keypair | string, amount: bigint) => ({
    from: typeof from === "string" ? from : pk(from),
    to: typeof to === "string" ? to : pk(to),
    amount: n(amount),
  });
  const splTransfer = (to: string, amount: bigint, token_mint?: string) => ({
    from: pk(source),
    to,
    amount: n(amount),
    owner: pk(payer),
    signers: [] as string[],
    ...(token_mint ? { token_mint } : {}),
  });
  const moves = (name: string, instructions: TransactionInstruction[], transfers: unknown[], spl_transfers: unknown[] = []) => ({
    name,
    unsigned: unsigned(instructions),
    transfers,
    spl_transfers,
  });
  const refused = (name: string, instructions: TransactionInstruction[], pattern: string) => ({
    name,
    unsigned: unsigned(instructions),
    refused: pattern,
  });

  const FIVE_SOL = 5n * BigInt(LAMPORTS_PER_SOL);
  const sysTransfer = SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: bob.publicKey, lamports: FIVE_SOL });
  // PublicKey.createWithSeed, which is async: sha256(base ‖ seed ‖ owner).
  const seeded = new PublicKey(
    createHash("sha256")
      .update(Buffer.concat([base.publicKey.toBuffer(), Buffer.from("vault"), SystemProgram.programId.toBuffer()]))
      .digest(),
  );
  const createWithSeed = SystemProgram.createAccountWithSeed({
    fromPubkey: payer.publicKey,
    newAccountPubkey: seeded,
    basePubkey: base.publicKey,
    seed: "vault",
    lamports: 3_000_000,
    space: 0,
    programId: SystemProgram.programId,
  });
  const withSeedData = Buffer.from(createWithSeed.data);
  // The seed length field (u64 LE after the tag and the base key) claims more bytes than follow.
  const longSeed = Buffer.from(withSeedData);
  longSeed.writeBigUInt64LE(1000n, 36);
  const prefund = Buffer.concat([Buffer.from([13, 0, 0, 0]), u64(2_000_000n), u64(0n), SystemProgram.programId.toBuffer()]);
  const amount = (tag: number, v: bigint, ...tail: number[]) => Buffer.concat([Buffer.of(tag), u64(v), Buffer.of(...tail)]);
  const checkedKeys = [meta(source), meta(mint, false, false), meta(dest), meta(payer, true, false)];
  const burnKeys = [meta(source), meta(mint), meta(payer, true, false)];
  return [
    moves(
      "System Transfer of 5 SOL with one trailing 00 byte",
      [withData(sysTransfer, Buffer.concat([sysTransfer.data, Buffer.of(0)]))],
      [transfer(payer, bob, FIVE_SOL)],
    ),
    moves(
      "System CreateAccount: the lamports go to the new account",
      [
        SystemProgram.createAccount({
          fromPubkey: payer.publicKey,
          newAccountPubkey: fresh.publicKey,
          lamports: 1_000_000,
          space: 165,
          programId: TOKEN,
        }),
      ],
      [transfer(payer, fresh, 1_000_000n)],
    ),
    moves(
      "System CreateAccountWithSeed, with trailing bytes",
      [withData(createWithSeed, Buffer.concat([withSeedData, Buffer.of(1, 2, 3)]))],
      [transfer(payer, seeded.toBase58(), 3_000_000n)],
    ),
    moves(
      "System TransferWithSeed: from the derived account to the third account",
      [
        SystemProgram.transfer({
          fromPubkey: seeded,
          basePubkey: base.publicKey,
          toPubkey: bob.publicKey,
          lamports: 42,
          seed: "vault",
          programId: SystemProgram.programId,
        }),
      ],
      [transfer(seeded.toBase58(), bob, 42n)],
    ),
    moves(
      "System WithdrawNonceAccount: from the nonce account to the recipient",
      [
        SystemProgram.nonceWithdraw({
          noncePubkey: nonce.publicKey,
          authorizedPubkey: payer.publicKey,
          toPubkey: bob.publicKey,
          lamports: 777,
        }),
      ],
      [transfer(nonce, bob, 777n)],
    ),
    moves(
      "System CreateAccountAllowPrefund: from the funding account (second) to the new one (first)",
      [ix(SystemProgram.programId, prefund, [meta(fresh, true), meta(payer, true)])],
      [transfer(payer, fresh, 2_000_000n)],
    ),
    moves(
      "System Assign, AdvanceNonceAccount, Allocate: nothing moves",
      [
        SystemProgram.assign({ accountPubkey: payer.publicKey, programId: TOKEN }),
        SystemProgram.nonceAdvance({ noncePubkey: nonce.publicKey, authorizedPubkey: payer.publicKey }),
        SystemProgram.allocate({ accountPubkey: fresh.publicKey, space: 10 }),
      ],
      [],
    ),
    moves(
      "Token Transfer and TransferChecked with trailing bytes",
      [
        ix(TOKEN, amount(3, 9n, 0, 0), [meta(source), meta(dest), meta(payer, true, false)]),
        ix(TOKEN, amount(12, 10n, 6, 0xff), checkedKeys),
      ],
      [],
      [splTransfer(pk(dest), 9n), splTransfer(pk(dest), 10n, pk(mint))],
    ),
    moves(
      "Token-2022 TransferCheckedWithFee with a trailing byte",
      [ix(TOKEN_2022, Buffer.concat([Buffer.of(26, 1), u64(500n), Buffer.of(6), u64(5n), Buffer.of(0)]), checkedKeys)],
      [],
      [splTransfer(pk(dest), 500n, pk(mint))],
    ),
    moves(
      "Token Burn and Token-2022 BurnChecked: the tokens go to no one",
      [ix(TOKEN, amount(8, 11n), burnKeys), ix(TOKEN_2022, amount(15, 12n, 6), burnKeys)],
      [],
      [splTransfer("", 11n, pk(mint)), splTransfer("", 12n, pk(mint))],
    ),
    moves(
      "Token CloseAccount and Token-2022 WithdrawExcessLamports: lamports to the destination, amount read on chain",
      [
        ix(TOKEN, Buffer.of(9), [meta(source), meta(bob), meta(payer, true, false)]),
        ix(TOKEN_2022, Buffer.of(38), [meta(source), meta(dest), meta(payer, true, false)]),
      ],
      [transfer(source, bob, UNKNOWN_AMOUNT), transfer(source, dest, UNKNOWN_AMOUNT)],
    ),
    moves(
      "Compute Budget, Associated Token Account CreateIdempotent, Token SyncNative: nothing moves",
      [
        ComputeBudgetProgram.setComputeUnitLimit({ units: 200_000 }),
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1000 }),
        ix(ATA, Buffer.of(1), [meta(payer, true), meta(dest), meta(bob, false, false), meta(mint, false, false)]),
        ix(TOKEN, Buffer.of(17), [meta(dest)]),
      ],
      [],
    ),
    refused(
      "System Transfer one byte short",
      [withData(sysTransfer, sysTransfer.data.subarray(0, 11))],
      "^instruction 0: System Transfer needs at least 12 bytes of data and 2 accounts; it has 11 and 2$",
    ),
    refused(
      "System Transfer with one account",
      [ix(SystemProgram.programId, sysTransfer.data, [meta(payer, true)])],
      "^instruction 0: System Transfer needs at least 12 bytes of data and 2 accounts",
    ),
    refused(
      "a System tag the program does not have, after a memo",
      [ix(MEMO, Buffer.from("x"), []), ix(SystemProgram.programId, Buffer.of(14, 0, 0, 0), [meta(payer, true)])],
      "^instruction 1: System instruction 14 is not one Sigil can show to a policy$",
    ),
    refused(
      "Transfer's tag byte with a high byte set (a u32 tag of 16777218)",
      [withData(sysTransfer, Buffer.concat([Buffer.of(2, 0, 0, 1), sysTransfer.data.subarray(4)]))],
      "^instruction 0: System instruction 16777218 is not one",
    ),
    refused(
      "System data shorter than its tag",
      [ix(SystemProgram.programId, Buffer.of(2), [meta(payer, true), meta(bob)])],
      "^instruction 0: System instruction data is 1 bytes",
    ),
    refused(
      "CreateAccountWithSeed whose seed runs past the data",
      [withData(createWithSeed, longSeed)],
      "^instruction 0: System CreateAccountWithSeed is too short for its 1000-byte seed$",
    ),
    refused(
      "Token Transfer with two accounts",
      [ix(TOKEN, amount(3, 9n), [meta(source), meta(dest)])],
      "^instruction 0: Token Transfer needs at least 9 bytes of data and 3 accounts",
    ),
    refused(
      "Token TransferChecked without its decimals byte",
      [ix(TOKEN, amount(12, 10n), checkedKeys)],
      "^instruction 0: Token TransferChecked needs at least 10 bytes",
    ),
    refused(
      "a Token batch (tag 255)",
      [ix(TOKEN, Buffer.of(255, 2, 9, 3), [meta(source), meta(dest), meta(payer, true, false)])],
      "^instruction 0: Token instruction 255 is not one",
    ),
    refused(
      "a Token-2022 tag on the Token program",
      [ix(TOKEN, Buffer.concat([Buffer.of(26, 1), u64(1n), Buffer.of(6), u64(0n)]), checkedKeys)],
      "^instruction 0: Token instruction 26 is not one",
    ),
    refused(
      "a Token-2022 confidential transfer",
      [ix(TOKEN_2022, Buffer.of(27, 7), checkedKeys)],
      "^instruction 0: Token-2022 instruction 27 is not one",
    ),
    refused(
      "a Token-2022 withdrawal of withheld fees",
      [ix(TOKEN_2022, Buffer.of(26, 2), checkedKeys)],
      "^instruction 0: Token-2022 instruction 26/2 is not one",
    ),
    refused("an empty Token instruction", [ix(TOKEN_2022, Buffer.of(), checkedKeys)], "^instruction 0: Token-2022 instruction has no tag$"),
    refused(
      "an Associated Token Account instruction with an unknown tag",
      [ix(ATA, Buffer.of(3), [meta(payer, true)])],
      "^instruction 0: Associated Token Account instruction 3 is not one",
    ),
    refused(
      "a Compute Budget instruction with the retired tag 0",
      [ix(ComputeBudgetProgram.programId, Buffer.of(0, 1, 2, 3, 4), [])],
      "^instruction 0: Compute Budget instruction 0 is not one",
    ),
  ];
}

export function signingVectors() {
  return { ethereum: ethereumVectors(), solana: solanaVectors(), solana_instructions: solanaInstructionVectors() };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  writeFileSync(VECTOR_FILE, `${JSON.stringify(signingVectors(), null, 2)}\n`);
  console.log(`wrote ${VECTOR_FILE}`);
}
