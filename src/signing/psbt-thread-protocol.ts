// What the main thread and the PSBT thread (./psbt-thread.ts, ./psbt-worker-entry.ts) send
// each other: plain, structured-clonable data (docs/signing.md §6).
import { NoOwnInputError, type BitcoinPsbtView, type networkOf } from "./parsers/bitcoin.ts";
import { ParseError } from "./parsers/errors.ts";

export type BitcoinNetwork = ReturnType<typeof networkOf>;

export type ToPsbtThread =
  | { id: number; op: "read"; hex: string; network: BitcoinNetwork }
  | { id: number; op: "sign"; hex: string; network: BitcoinNetwork; privateKey: Uint8Array; publicKey: Uint8Array };

export type FromPsbtThread =
  { id: number; view: BitcoinPsbtView } | { id: number; signed: string } | { id: number; error: { name: string; message: string } };

/** The answer as plain data: a ParseError (and NoOwnInputError) keeps its class across the thread. */
export function errorAsData(err: unknown): { name: string; message: string } {
  const name = err instanceof NoOwnInputError ? "NoOwnInputError" : err instanceof ParseError ? "ParseError" : "Error";
  return { name, message: err instanceof Error ? err.message : String(err) };
}
