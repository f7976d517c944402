// Writes test/vectors/signing-parsers.json: unsigned transactions made by independent
// libraries (viem for Ethereum, @solana/web3.js for Solana) with the facts each must parse
// into, written down here from the inputs rather than from our parsers. Deterministic (fixed
// keys and blockhash), so test/unit/signing-parsers.test.ts also checks that the committed
// file is this script's output.
//
//   node --import tsx scripts/signing-vectors.ts
import { writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { serializeTransaction, type TransactionSerializable } from "viem";
import {
  Keypair, MessageV0, PublicKey, SystemProgram, Transaction, TransactionInstruction, VersionedTransaction,
  type AddressLookupTableAccount,
} from "@solana/web3.js";

export const VECTOR_FILE = path.resolve(import.meta.dirname, "../test/vectors/signing-parsers.json");

/** Ints are written as "<decimal>n" so JSON keeps them exact. */
const n = (v: bigint | number): string => `${BigInt(v)}n`;

const TO = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const USDC = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48";
// ERC-20 transfer(TO, 1000)
const TRANSFER_DATA = `0xa9059cbb000000000000000000000000${TO.slice(2).toLowerCase()}00000000000000000000000000000000000000000000000000000000000003e8` as const;

function eth(name: string, tx: TransactionSerializable, facts: Record<string, unknown>) {
  return { name, unsigned: serializeTransaction(tx), facts: { from: "", ...facts } };
}

function ethereumVectors() {
  return [
    eth("legacy without a chain id", { type: "legacy", nonce: 7, gasPrice: 20_000_000_000n, gas: 21_000n, to: TO, value: 10n ** 18n },
      { type: "LEGACY", to: TO.toLowerCase(), value: n(10n ** 18n), data: "0x", function_signature: "", nonce: n(7), gas: n(21_000), gas_price: n(20_000_000_000n) }),
    eth("legacy, EIP-155 chain 1", { type: "legacy", chainId: 1, nonce: 0, gasPrice: 1n, gas: 60_000n, to: USDC, value: 0n, data: TRANSFER_DATA },
      { type: "LEGACY", to: USDC.toLowerCase(), value: n(0), data: TRANSFER_DATA, function_signature: "0xa9059cbb", nonce: n(0), gas: n(60_000), gas_price: n(1), chain_id: n(1) }),
    eth("EIP-2930 with an access list", {
      type: "eip2930", chainId: 11155111, nonce: 3, gasPrice: 5n, gas: 100_000n, to: TO, value: 1n, data: "0x1234",
      accessList: [{ address: USDC, storageKeys: [`0x${"00".repeat(31)}01`] }],
    }, { type: "TYPE_1", to: TO.toLowerCase(), value: n(1), data: "0x1234", function_signature: "", nonce: n(3), gas: n(100_000), gas_price: n(5), chain_id: n(11155111) }),
    eth("EIP-1559 ERC-20 transfer on Base", {
      type: "eip1559", chainId: 8453, nonce: 42, maxFeePerGas: 3_000_000_000n, maxPriorityFeePerGas: 1_000_000n, gas: 65_000n, to: USDC, value: 0n, data: TRANSFER_DATA,
    }, {
      type: "TYPE_2", to: USDC.toLowerCase(), value: n(0), data: TRANSFER_DATA, function_signature: "0xa9059cbb", nonce: n(42), gas: n(65_000),
      gas_price: n(3_000_000_000n), max_fee_per_gas: n(3_000_000_000n), max_priority_fee_per_gas: n(1_000_000), chain_id: n(8453),
    }),
    eth("EIP-1559 contract creation with a large value", {
      type: "eip1559", chainId: 1, nonce: 0, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n, gas: 1_000_000n, value: 2n ** 200n, data: "0x6080604052",
    }, {
      type: "TYPE_2", to: "", value: n(2n ** 200n), data: "0x6080604052", function_signature: "0x60806040", nonce: n(0), gas: n(1_000_000),
      gas_price: n(2), max_fee_per_gas: n(2), max_priority_fee_per_gas: n(1), chain_id: n(1),
    }),
    eth("EIP-7702 with one authorization", {
      type: "eip7702", chainId: 1, nonce: 9, maxFeePerGas: 10n, maxPriorityFeePerGas: 2n, gas: 80_000n, to: TO, value: 0n,
      authorizationList: [{ chainId: 1, address: USDC, nonce: 10, yParity: 1, r: `0x${"11".repeat(32)}`, s: `0x${"22".repeat(32)}` }],
    }, {
      type: "TYPE_4", to: TO.toLowerCase(), value: n(0), data: "0x", function_signature: "", nonce: n(9), gas: n(80_000),
      gas_price: n(10), max_fee_per_gas: n(10), max_priority_fee_per_gas: n(2), chain_id: n(1),
      authorization_list: [{ address: USDC.toLowerCase(), chain_id: n(1), nonce: n(10) }],
    }),
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
  const payer = key(1), alice = key(2), bob = key(3), mint = key(4), source = key(5), dest = key(6), table = key(7);
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
    new TransactionInstruction({ programId: TOKEN_2022, data: checkedData, keys: [
      { pubkey: source.publicKey, isSigner: false, isWritable: true }, { pubkey: mint.publicKey, isSigner: false, isWritable: false },
      { pubkey: dest.publicKey, isSigner: false, isWritable: true }, { pubkey: alice.publicKey, isSigner: true, isWritable: false }] }),
    new TransactionInstruction({ programId: TOKEN, data: plainData, keys: [
      { pubkey: source.publicKey, isSigner: false, isWritable: true }, { pubkey: dest.publicKey, isSigner: false, isWritable: true },
      { pubkey: alice.publicKey, isSigner: true, isWritable: false }] }),
  ];
  const splMsg = MessageV0.compile({ payerKey: payer.publicKey, recentBlockhash: BLOCKHASH, instructions: splIxs });
  const splKeys = splMsg.staticAccountKeys.map((k) => k.toBase58());

  // 3. v0 with an address lookup table: the recipient comes from the table.
  const lookup: AddressLookupTableAccount = {
    key: table.publicKey,
    state: { deactivationSlot: 2n ** 64n - 1n, lastExtendedSlot: 0, lastExtendedSlotStartIndex: 0, authority: undefined, addresses: [alice.publicKey, bob.publicKey] },
    isActive: () => true,
  } as AddressLookupTableAccount;
  const altMsg = MessageV0.compile({
    payerKey: payer.publicKey, recentBlockhash: BLOCKHASH,
    instructions: [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: bob.publicKey, lamports: 5n })],
    addressLookupTableAccounts: [lookup],
  });
  const altKeys = altMsg.staticAccountKeys.map((k) => k.toBase58());

  const acct = (keys: string[], k: string, signer: boolean, writable: boolean) => ({ account_key: k, signer, writable, _index: keys.indexOf(k) });
  const strip = <T extends { _index: number }>(a: T) => { const { _index, ...rest } = a; if (_index < 0) throw new Error("missing key"); return rest; };
  return [
    {
      name: "legacy: System transfer and a memo",
      unsigned: hex(legacy.serialize({ requireAllSignatures: false, verifySignatures: false })),
      signers: [payer.publicKey.toBase58()],
      facts: {
        account_keys: legacyKeys,
        program_keys: [sys, MEMO.toBase58()],
        instructions: [
          { program_key: sys, accounts: [acct(legacyKeys, payer.publicKey.toBase58(), true, true), acct(legacyKeys, bob.publicKey.toBase58(), false, true)].map(strip),
            instruction_data_hex: hex(legacy.instructions[0]!.data), address_table_lookups: [] },
          { program_key: MEMO.toBase58(), accounts: [], instruction_data_hex: Buffer.from("hi").toString("hex"), address_table_lookups: [] },
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
          { program_key: TOKEN_2022.toBase58(), accounts: [acct(splKeys, source.publicKey.toBase58(), false, true), acct(splKeys, mint.publicKey.toBase58(), false, false),
            acct(splKeys, dest.publicKey.toBase58(), false, true), acct(splKeys, alice.publicKey.toBase58(), true, false)].map(strip),
            instruction_data_hex: hex(checkedData), address_table_lookups: [] },
          { program_key: TOKEN.toBase58(), accounts: [acct(splKeys, source.publicKey.toBase58(), false, true), acct(splKeys, dest.publicKey.toBase58(), false, true),
            acct(splKeys, alice.publicKey.toBase58(), true, false)].map(strip),
            instruction_data_hex: hex(plainData), address_table_lookups: [] },
        ],
        transfers: [],
        spl_transfers: [
          { from: source.publicKey.toBase58(), to: dest.publicKey.toBase58(), amount: n(250_000), owner: alice.publicKey.toBase58(), signers: [], token_mint: mint.publicKey.toBase58() },
          { from: source.publicKey.toBase58(), to: dest.publicKey.toBase58(), amount: n(7), owner: alice.publicKey.toBase58(), signers: [] },
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
          { program_key: sys, accounts: [{ account_key: payer.publicKey.toBase58(), signer: true, writable: true }, { account_key: "", signer: false, writable: true }],
            instruction_data_hex: hex(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: bob.publicKey, lamports: 5n }).data),
            address_table_lookups: [{ address_table_key: table.publicKey.toBase58(), writable_indexes: [n(1)], readonly_indexes: [] }] },
        ],
        transfers: [{ from: payer.publicKey.toBase58(), to: "", amount: n(5) }],
        spl_transfers: [],
        address_table_lookups: [{ address_table_key: table.publicKey.toBase58(), writable_indexes: [n(1)], readonly_indexes: [] }],
        recent_blockhash: BLOCKHASH,
      },
    },
  ];
}

export function signingVectors() {
  return { ethereum: ethereumVectors(), solana: solanaVectors() };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  writeFileSync(VECTOR_FILE, `${JSON.stringify(signingVectors(), null, 2)}\n`);
  console.log(`wrote ${VECTOR_FILE}`);
}
