// Unsigned legacy Solana transactions built byte by byte: @solana/web3.js refuses to serialize
// past a network packet (1,232 bytes), and the limits under test (docs/signing-policies.md §1.3)
// are above it.
import { base58 } from "@scure/base";

const shortvec = (n: number) =>
  n < 0x80 ? [n] : n < 0x4000 ? [0x80 | (n & 0x7f), n >> 7] : [0x80 | (n & 0x7f), 0x80 | ((n >> 7) & 0x7f), n >> 14];

/**
 * Hex of a legacy transaction paid and signed by `payer` (base58) with `instructions`, each
 * calling an unknown program with no data and naming the payer `accounts` times.
 */
export function solanaInstructions(payer: string, instructions: number, accounts = 0): string {
  const program = Uint8Array.from({ length: 32 }, (_, i) => 200 - i);
  const ix = [1, ...shortvec(accounts), ...Array<number>(accounts).fill(0), 0];
  const bytes = [
    1,
    ...Array<number>(64).fill(0), // one empty signature slot
    1,
    0,
    1, // header: one signer, none read-only signed, the program read-only
    2,
    ...base58.decode(payer),
    ...program,
    ...Array<number>(32).fill(7), // recent blockhash
    ...shortvec(instructions),
  ];
  for (let i = 0; i < instructions; i++) bytes.push(...ix);
  return Buffer.from(bytes).toString("hex");
}
