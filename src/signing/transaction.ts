// sign_transaction's chain-specific steps (docs/signing-policies.md §2): parse the unsigned
// transaction by its declared type, the facts policies read, and the signed transaction made
// from a key. The key resolution and signers are src/signing/resolve.ts and sign.ts.
import { keccak_256 } from "@noble/hashes/sha3.js";
import { base58 } from "@scure/base";
import { invalid } from "../errors.ts";
import type { SigningFacts } from "../policy/facts.ts";
import { ParseError } from "./parsers/errors.ts";
import { parseEthereumTransaction, serializeSignedEthereum, type ParsedEthereumTx } from "./parsers/ethereum.ts";
import { parseSolanaTransaction, placeSolanaSignature, type ParsedSolanaTx } from "./parsers/solana.ts";
import { NoOwnInputError, networkOf, ownInputs, parseBitcoinPsbt, type BitcoinPsbtView } from "./parsers/bitcoin.ts";
import { readPsbtOffThread, signPsbtOffThread } from "./psbt-thread.ts";
import type { BitcoinNetwork } from "./psbt-thread-protocol.ts";
import { bitcoinTxFacts, ethTxFacts, solanaTxFacts } from "./facts.ts";
import { signWithKey, type SigningCurve } from "./sign.ts";

export const TRANSACTION_TYPES = [
  "TRANSACTION_TYPE_ETHEREUM",
  "TRANSACTION_TYPE_SOLANA",
  "TRANSACTION_TYPE_TRON",
  "TRANSACTION_TYPE_BITCOIN",
  "TRANSACTION_TYPE_TEMPO",
] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

export type ParsedTransaction =
  | { chain: "ethereum"; tx: ParsedEthereumTx }
  | { chain: "solana"; tx: ParsedSolanaTx }
  // The PSBT as sent and its network: it is signed on the PSBT thread, from the hex (./psbt-thread.ts).
  | { chain: "bitcoin"; tx: BitcoinPsbtView; hex: string; network: BitcoinNetwork };

const FIELD = "parameters.unsignedTransaction";
const bad = (field: string, description: string) => invalid(`${field}: ${description}`, [{ field, description }]);

/** The signer address `eth.tx.from` reads: signWith itself when it is an Ethereum address, else ''. */
function fromOf(signWith: string): string {
  return /^0x[0-9a-fA-F]{40}$/.test(signWith) ? signWith.toLowerCase() : "";
}

/** Parses by the declared type; anything unreadable or unsupported is a 400 naming the field. */
export function parseTransaction(type: TransactionType, unsigned: string, signWith: string): ParsedTransaction {
  try {
    switch (type) {
      case "TRANSACTION_TYPE_ETHEREUM":
        return { chain: "ethereum", tx: parseEthereumTransaction(unsigned, fromOf(signWith)) };
      case "TRANSACTION_TYPE_SOLANA":
        return { chain: "solana", tx: parseSolanaTransaction(unsigned) };
      case "TRANSACTION_TYPE_BITCOIN": {
        const network = networkOf(signWith);
        return {
          chain: "bitcoin",
          tx: readOffThread.get(psbtKey(network, unsigned)) ?? parseBitcoinPsbt(unsigned, network),
          hex: unsigned,
          network,
        };
      }
      default:
        throw bad("parameters.type", `${type} is not supported by this service (docs/signing-policies.md §3)`);
    }
  } catch (err) {
    if (err instanceof ParseError) throw bad(FIELD, `cannot parse as ${type}: ${err.message}`);
    throw err;
  }
}

/**
 * The last PSBTs read on the PSBT thread, by network and hex: parseTransaction finds them here
 * instead of reading them on the main thread. An approval reads its PSBT there before its
 * transaction (sign_transaction's prepare), and the policy facts in the transaction are
 * parsed from another copy of the same parameters (docs/signing.md §6). Four, as the thread's
 * own list. [our choice]
 */
const readOffThread = new Map<string, BitcoinPsbtView>();
const psbtKey = (network: BitcoinNetwork, hex: string) => `${network.bech32}:${hex}`;

/**
 * As parseTransaction, with a Bitcoin PSBT read on the PSBT thread (docs/signing.md §6): the
 * same result and the same refusals, without the read's block on the main thread. The other
 * chains' transactions are small (a few KiB) and parsed here.
 */
export async function parseTransactionOffThread(type: TransactionType, unsigned: string, signWith: string): Promise<ParsedTransaction> {
  if (type !== "TRANSACTION_TYPE_BITCOIN") return parseTransaction(type, unsigned, signWith);
  const network = networkOf(signWith);
  try {
    const key = psbtKey(network, unsigned);
    const tx = readOffThread.get(key) ?? (await readPsbtOffThread(unsigned, network));
    readOffThread.delete(key);
    if (readOffThread.size >= 4) readOffThread.delete(readOffThread.keys().next().value!);
    readOffThread.set(key, tx);
    return { chain: "bitcoin", tx, hex: unsigned, network };
  } catch (err) {
    if (err instanceof ParseError) throw bad(FIELD, `cannot parse as ${type}: ${err.message}`);
    throw err;
  }
}

export function transactionFacts(parsed: ParsedTransaction): SigningFacts {
  switch (parsed.chain) {
    case "ethereum":
      return ethTxFacts(parsed.tx.facts);
    case "solana":
      return solanaTxFacts(parsed.tx.facts);
    case "bitcoin":
      return bitcoinTxFacts(parsed.tx.facts);
  }
}

/** The curve each chain signs with. */
export function curveFor(parsed: ParsedTransaction): SigningCurve {
  return parsed.chain === "solana" ? "CURVE_ED25519" : "CURVE_SECP256K1";
}

/**
 * The signed transaction as the SDK expects it: lower-case hex without 0x (the viem and
 * Solana adapters add or decode it). `publicKey` is the signer's (ed25519: 32 bytes hex).
 */
export async function signParsed(parsed: ParsedTransaction, privateKey: Uint8Array, publicKey: string): Promise<string> {
  if (parsed.chain === "ethereum") {
    const sig = signWithKey("CURVE_SECP256K1", privateKey, keccak_256(parsed.tx.payload));
    return serializeSignedEthereum(parsed.tx, {
      r: BigInt(`0x${sig.r}`),
      s: BigInt(`0x${sig.s}`),
      recovery: Number.parseInt(sig.v, 16),
    }).slice(2);
  }
  if (parsed.chain === "bitcoin") {
    try {
      return await signPsbtOffThread(parsed.hex, parsed.network, privateKey, Uint8Array.from(Buffer.from(publicKey, "hex")));
    } catch (err) {
      throw bitcoinRefusal(err);
    }
  }
  try {
    const sig = signWithKey("CURVE_ED25519", privateKey, parsed.tx.message);
    const signer = base58.encode(Uint8Array.from(Buffer.from(publicKey, "hex")));
    return placeSolanaSignature(parsed.tx, signer, Uint8Array.from(Buffer.from(sig.r + sig.s, "hex")));
  } catch (err) {
    if (err instanceof ParseError) throw bad("parameters.signWith", err.message);
    throw err;
  }
}

/** Refuses a key of the wrong curve for the chain (at submission, and again at execution). */
function checkCurve(parsed: ParsedTransaction, curve: SigningCurve): void {
  const want = curveFor(parsed);
  if (curve !== want) throw bad("parameters.signWith", `a ${parsed.chain} transaction is signed with a ${want} key; this key is ${curve}`);
}

/** A key that spends no input names the wrong signWith; an input it cannot sign is the PSBT's fault. */
function bitcoinRefusal(err: unknown): unknown {
  if (err instanceof NoOwnInputError) return bad("parameters.signWith", err.message);
  if (err instanceof ParseError) return bad(FIELD, err.message);
  return err;
}

/**
 * Refuses, before any key is opened (and at submission before any policy): a key of the
 * wrong curve, one that is not a required Solana signer, one that spends no input of a
 * Bitcoin PSBT or spends one in a form this service does not sign.
 */
export function checkSigner(parsed: ParsedTransaction, curve: SigningCurve, publicKey: string): void {
  checkCurve(parsed, curve);
  if (parsed.chain === "solana") {
    const signer = base58.encode(Uint8Array.from(Buffer.from(publicKey, "hex")));
    const slot = parsed.tx.facts.account_keys.indexOf(signer);
    if (slot < 0 || slot >= parsed.tx.signatures.length)
      throw bad("parameters.signWith", `${signer} is not a required signer of this transaction`);
  }
  if (parsed.chain === "bitcoin") {
    try {
      ownInputs(parsed.tx, Uint8Array.from(Buffer.from(publicKey, "hex")));
    } catch (err) {
      throw bitcoinRefusal(err);
    }
  }
}
