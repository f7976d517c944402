// Bitcoin PSBTs (BIP-174 v0, BIP-370 v2) as hex → the `bitcoin.tx` facts, and the inputs a
// key signs with the signatures placed in the PSBT, unfinalized (docs/signing-policies.md
// §1.4, §2.3). @scure/btc-signer reads and signs; this module decides which inputs are the
// key's and which of those it refuses.
import { Address, NETWORK, OutScript, TEST_NETWORK, Transaction } from "@scure/btc-signer";
import { p2pkh, p2tr, p2wpkh } from "@scure/btc-signer";
import { ParseError, hexBytes, toHex } from "./errors.ts";

/** Inputs and outputs one PSBT may have (bounds the sighash work of legacy inputs). [our choice] */
export const MAX_BITCOIN_INPUTS = 256;
export const MAX_BITCOIN_OUTPUTS = 256;
/** nLockTime below this counts blocks, from it on seconds (Bitcoin's consensus rule). */
const LOCKTIME_THRESHOLD = 500_000_000;

export type BitcoinTxInputFacts = { tx_id: string; vout: bigint; sequence: bigint };
export type BitcoinTxOutputFacts = { value: bigint; script_pubkey: string; address: string; address_type: string };
export type BitcoinTxFacts = {
  version: string;
  inputs: BitcoinTxInputFacts[];
  outputs: BitcoinTxOutputFacts[];
  locktime: { amount: bigint; type: "Blocks" | "Seconds" };
  fee: bigint;
};

type Network = typeof NETWORK;
const REGTEST: Network = { ...TEST_NETWORK, bech32: "bcrt" };

export interface ParsedBitcoinTx {
  /** A fresh PSBT of this parse (signing adds to it). */
  psbt: Transaction;
  network: Network;
  facts: BitcoinTxFacts;
}

/**
 * The network output addresses are written for: the one of signWith when it is a Bitcoin
 * address (bc1 / tb1 / bcrt1, 1 / 3, m / n / 2), mainnet otherwise. A PSBT does not name it.
 */
export function networkOf(signWith: string): Network {
  const s = signWith.toLowerCase();
  if (s.startsWith("bcrt1")) return REGTEST;
  if (s.startsWith("tb1") || /^[mn2][1-9a-hj-np-z]{25,34}$/i.test(signWith)) return TEST_NETWORK;
  return NETWORK;
}

// The address type names of `address_type` [our choice: upstream names the field, not its values].
const ADDRESS_TYPES: Readonly<Record<string, string>> = { pkh: "P2PKH", sh: "P2SH", wpkh: "P2WPKH", wsh: "P2WSH", tr: "P2TR", pk: "P2PK", ms: "P2MS", p2a: "P2A" };

function outputFacts(script: Uint8Array, value: bigint, network: Network): BitcoinTxOutputFacts {
  const decoded = OutScript.decode(script);
  let address = "";
  let type = ADDRESS_TYPES[decoded.type] ?? (script[0] === 0x6a ? "OP_RETURN" : "UNKNOWN");
  if (decoded.type === "pkh" || decoded.type === "sh" || decoded.type === "wpkh" || decoded.type === "wsh" || decoded.type === "tr") {
    address = Address(network).encode(decoded);
  } else if (type === "UNKNOWN" && script.length >= 4 && script.length <= 42 && script[0]! >= 0x51 && script[0]! <= 0x60 && script[1] === script.length - 2) {
    // A witness program of a version this library does not name: still an address (BIP-350).
    type = "WITNESS_UNKNOWN";
  }
  return { value, script_pubkey: toHex(script), address, address_type: type };
}

/** The output an input spends (its script and value), from witness_utxo or non_witness_utxo. */
function prevout(psbt: Transaction, i: number): { script: Uint8Array; amount: bigint } | undefined {
  const input = psbt.getInput(i);
  if (input.witnessUtxo) return input.witnessUtxo;
  const out = input.nonWitnessUtxo?.outputs[input.index ?? -1];
  return out ? { script: out.script, amount: out.amount } : undefined;
}

/** Reads a PSBT given as hex; anything unreadable or outside the bounds is a ParseError. */
export function parseBitcoinPsbt(hex: string, network: Network): ParsedBitcoinTx {
  const bytes = hexBytes(hex, "the PSBT");
  let psbt: Transaction;
  try {
    // Unknown input and output scripts are read (an OP_RETURN output, another party's input);
    // only the key's own inputs are signed, and those must be of the supported kinds.
    psbt = Transaction.fromPSBT(bytes, { allowUnknownInputs: true, allowUnknownOutputs: true, allowUnknownVersion: true });
  } catch (err) {
    throw new ParseError(`not a PSBT (BIP-174 / BIP-370, as hex): ${(err as Error).message.slice(0, 200)}`);
  }
  if (psbt.inputsLength === 0) throw new ParseError("the PSBT has no inputs");
  if (psbt.inputsLength > MAX_BITCOIN_INPUTS) throw new ParseError(`the PSBT has ${psbt.inputsLength} inputs; at most ${MAX_BITCOIN_INPUTS} are accepted`);
  if (psbt.outputsLength > MAX_BITCOIN_OUTPUTS) throw new ParseError(`the PSBT has ${psbt.outputsLength} outputs; at most ${MAX_BITCOIN_OUTPUTS} are accepted`);
  const inputs: BitcoinTxInputFacts[] = [];
  let valueIn = 0n;
  for (let i = 0; i < psbt.inputsLength; i++) {
    const input = psbt.getInput(i);
    if (!input.txid || input.index === undefined) throw new ParseError(`input ${i} names no previous output`);
    // bitcoin.tx.fee is the inputs' value minus the outputs': every input's must be known.
    const prev = prevout(psbt, i);
    if (!prev) throw new ParseError(`input ${i} has neither witness_utxo nor non_witness_utxo: its value (and the fee) cannot be known`);
    valueIn += prev.amount;
    inputs.push({ tx_id: toHex(input.txid), vout: BigInt(input.index), sequence: BigInt(input.sequence ?? 0xffffffff) });
  }
  const outputs: BitcoinTxOutputFacts[] = [];
  let valueOut = 0n;
  for (let i = 0; i < psbt.outputsLength; i++) {
    const o = psbt.getOutput(i);
    if (!o.script || o.amount === undefined) throw new ParseError(`output ${i} has no script or amount`);
    valueOut += o.amount;
    outputs.push(outputFacts(o.script, o.amount, network));
  }
  if (valueOut > valueIn) throw new ParseError(`the outputs (${valueOut} sat) exceed the inputs (${valueIn} sat)`);
  const lockTime = psbt.lockTime;
  return {
    psbt,
    network,
    facts: {
      version: String(psbt.version),
      inputs,
      outputs,
      locktime: { amount: BigInt(lockTime), type: lockTime < LOCKTIME_THRESHOLD ? "Blocks" : "Seconds" },
      fee: valueIn - valueOut,
    },
  };
}

const same = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

/** The key spends no input of the PSBT: a wrong signWith rather than an unreadable PSBT. */
export class NoOwnInputError extends ParseError {}

type OwnInput = { index: number; kind: "P2WPKH" | "P2PKH" | "P2TR" };

/**
 * The inputs that spend an output of this key (compressed secp256k1, 33 bytes): P2WPKH, P2PKH
 * or P2TR key path (no script tree). Any of them in a form this service does not sign (a
 * sighash type other than the default, a P2TR script path, a P2PKH input without its previous
 * transaction) is a ParseError naming it; none at all is one too.
 */
export function ownInputs(parsed: ParsedBitcoinTx, publicKey: Uint8Array): OwnInput[] {
  const { psbt } = parsed;
  const xOnly = publicKey.subarray(1, 33);
  const scripts = { P2WPKH: p2wpkh(publicKey).script, P2PKH: p2pkh(publicKey).script, P2TR: p2tr(xOnly).script };
  const own: OwnInput[] = [];
  for (let i = 0; i < psbt.inputsLength; i++) {
    const prev = prevout(psbt, i);
    if (!prev) continue;
    const kind = (Object.keys(scripts) as OwnInput["kind"][]).find((k) => same(scripts[k], prev.script));
    if (!kind) continue;
    const input = psbt.getInput(i);
    if (kind === "P2PKH" && !input.nonWitnessUtxo) throw new ParseError(`input ${i} (P2PKH) needs non_witness_utxo, the transaction it spends`);
    if (kind !== "P2PKH" && !input.witnessUtxo) throw new ParseError(`input ${i} (${kind}) needs witness_utxo`);
    if (kind === "P2TR") {
      if (input.tapLeafScript?.length || input.tapMerkleRoot) throw new ParseError(`input ${i}: P2TR script-path spending is not signed; only the key path`);
      if (input.tapInternalKey && !same(input.tapInternalKey, xOnly)) throw new ParseError(`input ${i}: tap_internal_key is not this key's`);
    }
    const defaultSighash = kind === "P2TR" ? 0 : 1;
    if (input.sighashType !== undefined && input.sighashType !== defaultSighash) {
      throw new ParseError(`input ${i}: sighash type ${input.sighashType} is not signed; only ${kind === "P2TR" ? "SIGHASH_DEFAULT" : "SIGHASH_ALL"}`);
    }
    own.push({ index: i, kind });
  }
  if (own.length === 0) throw new NoOwnInputError("no input of the PSBT spends an output of this key (P2WPKH, P2PKH or P2TR key path)");
  return own;
}

/**
 * Signs every input of the key (ECDSA with SIGHASH_ALL into partial_sigs; Schnorr with
 * SIGHASH_DEFAULT into tap_key_sig, the key tweaked as BIP-341 says) and returns the PSBT as
 * lower-case hex, not finalized — as upstream returns it.
 */
export function signBitcoinPsbt(parsed: ParsedBitcoinTx, privateKey: Uint8Array, publicKey: Uint8Array): string {
  const { psbt } = parsed;
  for (const { index, kind } of ownInputs(parsed, publicKey)) {
    // The internal key of a key-path output is the key itself: written where it is missing,
    // as finalizers need it.
    if (kind === "P2TR" && !psbt.getInput(index).tapInternalKey) psbt.updateInput(index, { tapInternalKey: publicKey.subarray(1, 33) });
    try {
      if (!psbt.signIdx(privateKey, index)) throw new Error("nothing signed");
    } catch (err) {
      throw new ParseError(`input ${index} (${kind}) cannot be signed: ${(err as Error).message.slice(0, 200)}`);
    }
  }
  return toHex(psbt.toPSBT());
}
