// Bitcoin PSBTs (BIP-174 v0, BIP-370 v2) as hex → the `bitcoin.tx` facts, and the inputs a
// key signs with the signatures placed in the PSBT, unfinalized (docs/signing-policies.md
// §1.4, §2.3). @scure/btc-signer reads and signs; this module decides which inputs are the
// key's and which of those it refuses. The digests are ./bitcoin-sighash.ts's and the
// signatures libsecp256k1's (docs/signing.md §6): the library's own signer recomputes the
// transaction-wide hashes for every input and signs in JavaScript.
import { randomBytes } from "node:crypto";
import { NETWORK, TEST_NETWORK, Transaction } from "@scure/btc-signer";
import { ripemd160 } from "@noble/hashes/legacy.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { privateAdd, privateNegate, xOnlyPointAddTweak } from "tiny-secp256k1";
import { schnorrSigner, signDigest, type SchnorrSigner } from "../secp256k1.ts";
import { Sighasher, legacySighashBytes, taggedHash, type SighashTx } from "./bitcoin-sighash.ts";
import { outputFacts, type BitcoinTxOutputFacts } from "./bitcoin-outputs.ts";
import { ParseError, hexBytes, toHex } from "./errors.ts";
import { reduced, withInputPairs, type InputExtras, type PsbtPair } from "./psbt-maps.ts";

/** Inputs and outputs one PSBT may have. [our choice] */
export const MAX_BITCOIN_INPUTS = 256;
export const MAX_BITCOIN_OUTPUTS = 256;
/**
 * What the legacy (P2PKH) digests of one request may hash in all: each serializes the whole
 * transaction (docs/signing.md §6). 4 MiB is 256 P2PKH inputs of a transaction up to 16 KiB,
 * a few milliseconds of SHA-256. [our choice]
 */
export const MAX_LEGACY_SIGHASH_BYTES = 4 * 1024 * 1024;
/** nLockTime below this counts blocks, from it on seconds (Bitcoin's consensus rule). */
const LOCKTIME_THRESHOLD = 500_000_000;

export type BitcoinTxInputFacts = { tx_id: string; vout: bigint; sequence: bigint };
export type BitcoinTxFacts = {
  version: string;
  inputs: BitcoinTxInputFacts[];
  outputs: BitcoinTxOutputFacts[];
  locktime: { amount: bigint; type: "Blocks" | "Seconds" };
  fee: bigint;
};

type Network = typeof NETWORK;
const REGTEST: Network = { ...TEST_NETWORK, bech32: "bcrt" };

type PsbtInput = ReturnType<Transaction["getInput"]>;

/**
 * What deciding whether an input is a key's own (`ownInputs`) reads of it: plain data, so that
 * a PSBT read on the signing thread (../psbt-thread.ts) is checked against a key on the main
 * thread without being read again there (docs/signing.md §6).
 */
export interface InputOwnership {
  /** The script of the output it spends, where witness_utxo or non_witness_utxo gives it. */
  script?: Uint8Array;
  witnessUtxo: boolean;
  nonWitnessUtxo: boolean;
  /** It carries a redeem or a witness script. */
  redeemOrWitnessScript: boolean;
  /** It carries a tap leaf script or a tap merkle root (script-path spending). */
  tapScriptPath: boolean;
  tapInternalKey?: Uint8Array;
  sighashType?: number;
}

/** A read PSBT as plain data: its facts, and what the signer check reads (structured-clonable). */
export interface BitcoinPsbtView {
  facts: BitcoinTxFacts;
  owners: InputOwnership[];
  /** legacySighashBytes for one P2PKH input: the bound scales with their count. */
  legacyBytesEach: number;
}

export interface ParsedBitcoinTx extends BitcoinPsbtView {
  /** The PSBT as sent (signing writes its signatures into a copy: ./psbt-maps.ts). */
  bytes: Uint8Array;
  /** Its inputs as read (the pairs ./psbt-maps.ts `reduced` keeps). */
  inputs: PsbtInput[];
  /** What the signer needs of each input's other pairs. */
  extras: InputExtras[];
  /** What the digests read: outpoints, sequences, the outputs spent, outputs, version, lock time. */
  sighashTx: SighashTx;
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

/** The output an input spends (its script and value), from witness_utxo or non_witness_utxo. */
function prevout(input: PsbtInput, extra: InputExtras): { script: Uint8Array; amount: bigint } | undefined {
  if (input.witnessUtxo) return input.witnessUtxo;
  return extra.nonWitnessUtxo?.outputs[input.index ?? -1];
}

/**
 * A non_witness_utxo must be the transaction the input names, holding the output it spends,
 * and agree with a witness_utxo given too (BIP-174; what the library's reader checked).
 */
function checkPrevious(input: PsbtInput, extra: InputExtras, i: number): void {
  const previous = extra.nonWitnessUtxo;
  if (!previous) return;
  if (!same(previous.txid, input.txid!))
    throw new ParseError(`input ${i}: its non_witness_utxo is not the transaction ${toHex(input.txid!)}`);
  const out = previous.outputs[input.index!];
  if (!out) throw new ParseError(`input ${i}: its non_witness_utxo has no output ${input.index}`);
  if (input.witnessUtxo && (input.witnessUtxo.amount !== out.amount || !same(input.witnessUtxo.script, out.script))) {
    throw new ParseError(`input ${i}: its witness_utxo and non_witness_utxo differ`);
  }
}

/**
 * The last PSBTs read, by network and hex. One sign_transaction reads its PSBT up to four
 * times (the check, the signer check, the policy facts, the signing), each a share of the
 * request's event-loop time (docs/signing.md §6); a parse is a pure function of the two and
 * nothing changes a ParsedBitcoinTx, so the later reads reuse the first. Four entries: the
 * requests in flight at once rarely interleave more. [our choice]
 */
const recent = new Map<string, ParsedBitcoinTx>();
const RECENT = 4;

/** Reads a PSBT given as hex; anything unreadable or outside the bounds is a ParseError. */
export function parseBitcoinPsbt(hex: string, network: Network): ParsedBitcoinTx {
  const key = `${network.bech32}:${hex}`;
  const hit = recent.get(key);
  if (hit) return hit;
  const parsed = readPsbt(hex, network);
  if (recent.size >= RECENT) recent.delete(recent.keys().next().value!);
  recent.set(key, parsed);
  return parsed;
}

function readPsbt(hex: string, network: Network): ParsedBitcoinTx {
  const bytes = hexBytes(hex, "the PSBT");
  let psbt: Transaction;
  let extras: InputExtras[];
  try {
    // The library reads only the pairs facts and signatures need (./psbt-maps.ts `reduced`).
    // Unknown input and output scripts are read (an OP_RETURN output, another party's input);
    // only the key's own inputs are signed, and those must be of the supported kinds. The
    // library's checks of other parties' wrapper scripts and taproot commitments are skipped:
    // they cost a point operation in JavaScript each, seconds for a PSBT of 256 taproot inputs,
    // and concern inputs this key does not sign (docs/signing.md §6; ownInputs checks the key's).
    const kept = reduced(bytes);
    extras = kept.inputs;
    psbt = Transaction.fromPSBT(kept.bytes, {
      allowUnknownInputs: true,
      allowUnknownOutputs: true,
      allowUnknownVersion: true,
      disableScriptCheck: true,
    });
  } catch (err) {
    throw new ParseError(`not a PSBT (BIP-174 / BIP-370, as hex): ${(err as Error).message.slice(0, 200)}`);
  }
  if (psbt.inputsLength !== extras.length)
    throw new ParseError(`not a PSBT (BIP-174 / BIP-370, as hex): ${extras.length} input maps for ${psbt.inputsLength} inputs`);
  if (psbt.inputsLength === 0) throw new ParseError("the PSBT has no inputs");
  if (psbt.inputsLength > MAX_BITCOIN_INPUTS)
    throw new ParseError(`the PSBT has ${psbt.inputsLength} inputs; at most ${MAX_BITCOIN_INPUTS} are accepted`);
  if (psbt.outputsLength > MAX_BITCOIN_OUTPUTS)
    throw new ParseError(`the PSBT has ${psbt.outputsLength} outputs; at most ${MAX_BITCOIN_OUTPUTS} are accepted`);
  const read: PsbtInput[] = [];
  const inputs: BitcoinTxInputFacts[] = [];
  const spent: SighashTx["inputs"][number][] = [];
  const paid: SighashTx["outputs"][number][] = [];
  let valueIn = 0n;
  for (let i = 0; i < psbt.inputsLength; i++) {
    const input = psbt.getInput(i);
    if (!input.txid || input.index === undefined) throw new ParseError(`input ${i} names no previous output`);
    checkPrevious(input, extras[i]!, i);
    // bitcoin.tx.fee is the inputs' value minus the outputs': every input's must be known.
    const prev = prevout(input, extras[i]!);
    if (!prev) throw new ParseError(`input ${i} has neither witness_utxo nor non_witness_utxo: its value (and the fee) cannot be known`);
    valueIn += prev.amount;
    const sequence = input.sequence ?? 0xffffffff;
    read.push(input);
    inputs.push({ tx_id: toHex(input.txid), vout: BigInt(input.index), sequence: BigInt(sequence) });
    spent.push({ txid: input.txid, index: input.index, sequence, prevout: prev });
  }
  const outputs: BitcoinTxOutputFacts[] = [];
  let valueOut = 0n;
  for (let i = 0; i < psbt.outputsLength; i++) {
    const o = psbt.getOutput(i);
    if (!o.script || o.amount === undefined) throw new ParseError(`output ${i} has no script or amount`);
    valueOut += o.amount;
    outputs.push(outputFacts(o.script, o.amount, network));
    paid.push({ script: o.script, amount: o.amount });
  }
  if (valueOut > valueIn) throw new ParseError(`the outputs (${valueOut} sat) exceed the inputs (${valueIn} sat)`);
  const lockTime = psbt.lockTime;
  const sighashTx: SighashTx = { version: psbt.version, lockTime, inputs: spent, outputs: paid };
  const owners = read.map((input, i): InputOwnership => {
    const extra = extras[i]!;
    const script = prevout(input, extra)?.script;
    return {
      ...(script ? { script } : {}),
      witnessUtxo: input.witnessUtxo !== undefined,
      nonWitnessUtxo: extra.nonWitnessUtxo !== undefined,
      redeemOrWitnessScript: extra.redeemScript || extra.witnessScript,
      tapScriptPath: extra.tapLeafScript || extra.tapMerkleRoot,
      ...(extra.tapInternalKey ? { tapInternalKey: extra.tapInternalKey } : {}),
      ...(input.sighashType !== undefined ? { sighashType: input.sighashType } : {}),
    };
  });
  return {
    owners,
    legacyBytesEach: legacySighashBytes(sighashTx, 1),
    bytes,
    inputs: read,
    extras,
    sighashTx,
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
 * The output scripts of a key: P2WPKH, P2PKH, and P2TR with the key as internal key and no
 * script tree (BIP-341's tweak by libsecp256k1: the library's payment builders check the key
 * and tweak it in JavaScript, milliseconds each). The last few keys' are kept: one request
 * checks its key up to three times (submission, signing, the transaction). [our choice]
 */
function keyScripts(publicKey: Uint8Array): Record<OwnInput["kind"], Uint8Array> {
  const id = toHex(publicKey);
  const hit = recentScripts.get(id);
  if (hit) return hit;
  const hash = ripemd160(sha256(publicKey));
  const xOnly = publicKey.subarray(1, 33);
  const output = xOnlyPointAddTweak(xOnly, taggedHash("TapTweak", xOnly));
  if (!output) throw new ParseError("this key has no taproot output key");
  const scripts = {
    P2WPKH: Uint8Array.of(0x00, 0x14, ...hash),
    P2PKH: Uint8Array.of(0x76, 0xa9, 0x14, ...hash, 0x88, 0xac),
    P2TR: Uint8Array.of(0x51, 0x20, ...output.xOnlyPubkey),
  };
  if (recentScripts.size >= RECENT) recentScripts.delete(recentScripts.keys().next().value!);
  recentScripts.set(id, scripts);
  return scripts;
}
const recentScripts = new Map<string, Record<OwnInput["kind"], Uint8Array>>();

/**
 * The inputs that spend an output of this key (compressed secp256k1, 33 bytes): P2WPKH, P2PKH
 * or P2TR key path (no script tree). Any of them in a form this service does not sign (a
 * sighash type other than the default, a P2TR script path, a P2PKH input without its previous
 * transaction) is a ParseError naming it; none at all is one too, and so are more P2PKH inputs
 * than MAX_LEGACY_SIGHASH_BYTES allows. Reads only the plain view (on either thread).
 */
export function ownInputs(parsed: BitcoinPsbtView, publicKey: Uint8Array): OwnInput[] {
  const xOnly = publicKey.subarray(1, 33);
  const scripts = keyScripts(publicKey);
  const kinds = Object.keys(scripts) as OwnInput["kind"][];
  const own: OwnInput[] = [];
  parsed.owners.forEach((input, i) => {
    const script = input.script;
    if (!script) return;
    const kind = kinds.find((k) => same(scripts[k], script));
    if (!kind) return;
    if (kind === "P2PKH" && !input.nonWitnessUtxo)
      throw new ParseError(`input ${i} (P2PKH) needs non_witness_utxo, the transaction it spends`);
    if (kind !== "P2PKH" && !input.witnessUtxo) throw new ParseError(`input ${i} (${kind}) needs witness_utxo`);
    if (input.redeemOrWitnessScript)
      throw new ParseError(`input ${i} (${kind}) carries a redeem or witness script, which a ${kind} output has none of`);
    if (kind === "P2TR") {
      if (input.tapScriptPath) throw new ParseError(`input ${i}: P2TR script-path spending is not signed; only the key path`);
      if (input.tapInternalKey && !same(input.tapInternalKey, xOnly))
        throw new ParseError(`input ${i}: tap_internal_key is not this key's`);
    }
    const defaultSighash = kind === "P2TR" ? 0 : 1;
    if (input.sighashType !== undefined && input.sighashType !== defaultSighash) {
      throw new ParseError(
        `input ${i}: sighash type ${input.sighashType} is not signed; only ${kind === "P2TR" ? "SIGHASH_DEFAULT" : "SIGHASH_ALL"}`,
      );
    }
    own.push({ index: i, kind });
  });
  if (own.length === 0) throw new NoOwnInputError("no input of the PSBT spends an output of this key (P2WPKH, P2PKH or P2TR key path)");
  const legacy = parsed.legacyBytesEach * own.filter((o) => o.kind === "P2PKH").length;
  if (legacy > MAX_LEGACY_SIGHASH_BYTES) {
    throw new ParseError(
      `the P2PKH inputs of this key would hash ${legacy} bytes to sign (each hashes the whole transaction); at most ${MAX_LEGACY_SIGHASH_BYTES} are signed in one request`,
    );
  }
  return own;
}

/** A 64-byte r ‖ s as DER (BIP-66: minimal integers, positive). */
function der(rs: Uint8Array): Uint8Array {
  const int = (x: Uint8Array) => {
    let i = 0;
    while (i < x.length - 1 && x[i] === 0) i++;
    const v = x.subarray(i);
    return v[0]! & 0x80 ? Buffer.concat([Buffer.of(0x02, v.length + 1, 0), v]) : Buffer.concat([Buffer.of(0x02, v.length), v]);
  };
  const body = Buffer.concat([int(rs.subarray(0, 32)), int(rs.subarray(32, 64))]);
  return Buffer.concat([Buffer.of(0x30, body.length), body]);
}

/** A signer with BIP-341's key-path private key: the key with an even Y, plus the tweak of its x alone. */
function taprootSigner(privateKey: Uint8Array, publicKey: Uint8Array): SchnorrSigner {
  const even = publicKey[0] === 0x02 ? privateKey : privateNegate(privateKey);
  const tweaked = privateAdd(even, taggedHash("TapTweak", publicKey.subarray(1, 33)));
  if (even !== privateKey) even.fill(0);
  if (!tweaked) throw new Error("the tweaked key is zero");
  try {
    return schnorrSigner(tweaked);
  } finally {
    tweaked.fill(0);
  }
}

/**
 * How long signing runs before it lets the event loop serve others (docs/signing.md §6): 256
 * inputs are some 25 ms of signatures and digests, which /healthz and every other request
 * would otherwise wait out. [our choice]
 */
const SLICE_MS = 5;
const otherWork = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Signs every input of the key (ECDSA with SIGHASH_ALL into partial_sigs; Schnorr with
 * SIGHASH_DEFAULT into tap_key_sig, the key tweaked as BIP-341 says) and returns the PSBT as
 * lower-case hex, not finalized — as upstream returns it. Both are libsecp256k1's
 * (../secp256k1.ts): ECDSA by RFC 6979 with a low S, the bytes @scure/btc-signer's signer
 * made; Schnorr with fresh auxiliary randomness, as that signer's was.
 */
export async function signBitcoinPsbt(parsed: ParsedBitcoinTx, privateKey: Uint8Array, publicKey: Uint8Array): Promise<string> {
  const own = ownInputs(parsed, publicKey);
  const sighashes = new Sighasher(parsed.sighashTx);
  const scriptCode = keyScripts(publicKey).P2PKH;
  const added = new Map<number, PsbtPair[]>();
  let schnorr: SchnorrSigner | undefined;
  let sliceStart = performance.now();
  try {
    for (const { index, kind } of own) {
      if (performance.now() - sliceStart > SLICE_MS) {
        await otherWork();
        sliceStart = performance.now();
      }
      try {
        if (kind === "P2TR") {
          schnorr ??= taprootSigner(privateKey, publicKey);
          const tapKeySig = schnorr.sign(sighashes.taprootKeyPath(index), randomBytes(32));
          // PSBT_IN_TAP_KEY_SIG; and the internal key of a key-path output, the key itself,
          // written where it is missing (PSBT_IN_TAP_INTERNAL_KEY), as finalizers need it.
          const pairs = [{ key: Buffer.of(0x13), value: tapKeySig }];
          if (!parsed.extras[index]!.tapInternalKey) pairs.push({ key: Buffer.of(0x17), value: publicKey.subarray(1, 33) });
          added.set(index, pairs);
        } else {
          const digest = kind === "P2WPKH" ? sighashes.segwitV0(index, scriptCode) : sighashes.legacy(index, scriptCode);
          // PSBT_IN_PARTIAL_SIG: the DER signature and its sighash byte, under the public key.
          const sig = Buffer.concat([der(signDigest(digest, privateKey).signature), Buffer.of(1)]);
          added.set(index, [{ key: Buffer.concat([Buffer.of(0x02), publicKey]), value: sig }]);
        }
      } catch (err) {
        throw new ParseError(`input ${index} (${kind}) cannot be signed: ${(err as Error).message.slice(0, 200)}`);
      }
    }
  } finally {
    schnorr?.close();
  }
  return withInputPairs(parsed.bytes, parsed.inputs.length, added).toString("hex");
}
