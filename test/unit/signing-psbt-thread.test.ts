// The PSBT thread (docs/signing.md §6): a PSBT read there gives the same facts and the same
// signer check as one read on the main thread; signing there gives the same ECDSA bytes; a
// refusal keeps its class (ParseError, NoOwnInputError: a 400 naming the field); the caller's
// private key is left as it was (the thread zeroes its own copy).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import * as btc from "@scure/btc-signer";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { NoOwnInputError, networkOf, ownInputs, parseBitcoinPsbt, signBitcoinPsbt } from "../../src/signing/parsers/bitcoin.ts";
import { ParseError } from "../../src/signing/parsers/errors.ts";
import { psbtThreadRunning, readPsbtOffThread, signPsbtOffThread } from "../../src/signing/psbt-thread.ts";

const OPTS = { allowUnknownOutputs: true, allowUnknownInputs: true } as const;
const MAINNET = networkOf("bc1q");
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const newKey = () => {
  const priv = secp256k1.utils.randomSecretKey();
  return { priv, pub: secp256k1.getPublicKey(priv, true) };
};

/** P2WPKH inputs of the key, then one of another key; a P2TR output and an OP_RETURN. */
function psbt(pub: Uint8Array, inputs: number, opts: { sighashType?: number } = {}): string {
  const other = newKey().pub;
  const tx = new btc.Transaction(OPTS);
  for (let i = 0; i < inputs; i++) {
    tx.addInput({
      txid: hex(randomBytes(32)),
      index: i,
      witnessUtxo: { script: btc.p2wpkh(pub).script, amount: 10_000n + BigInt(i) },
      ...(opts.sighashType ? { sighashType: opts.sighashType } : {}),
    });
  }
  tx.addInput({ txid: hex(randomBytes(32)), index: 7, witnessUtxo: { script: btc.p2wpkh(other).script, amount: 5_000n } });
  tx.addOutputAddress(btc.p2tr(other.subarray(1)).address!, 9_000n);
  tx.addOutput({ script: Uint8Array.of(0x6a, 2, 1, 2), amount: 0n });
  return hex(tx.toPSBT());
}

describe("the PSBT thread", () => {
  it("reads the same facts and signer check as the main thread, and signs the same bytes", async () => {
    const { priv, pub } = newKey();
    const unsigned = psbt(pub, 40);
    const here = parseBitcoinPsbt(unsigned, MAINNET);
    const there = await readPsbtOffThread(unsigned, MAINNET);
    assert.ok(psbtThreadRunning(), "read on the thread, not on the main thread's fallback");
    assert.deepEqual(there.facts, here.facts);
    assert.equal(there.facts.inputs.length, 41);
    assert.deepEqual(ownInputs(there, pub), ownInputs(here, pub));
    assert.equal(there.legacyBytesEach, here.legacyBytesEach);
    const kept = Uint8Array.from(priv);
    const signedThere = await signPsbtOffThread(unsigned, MAINNET, priv, pub);
    assert.deepEqual(priv, kept, "the caller's key is left as it was");
    // ECDSA by RFC 6979: the same key and digests give the same bytes on either thread.
    assert.equal(signedThere, await signBitcoinPsbt(here, priv, pub));
    const signed = btc.Transaction.fromPSBT(Buffer.from(signedThere, "hex"), OPTS);
    assert.equal(signed.getInput(0).partialSig?.length, 1);
    assert.equal(signed.getInput(40).partialSig, undefined, "another key's input is not signed");
  });

  it("a refusal keeps its class: not a PSBT, an input of a sighash type not signed, no input of the key", async () => {
    const { priv, pub } = newKey();
    await assert.rejects(readPsbtOffThread("70736274ff00", MAINNET), (e: Error) => e instanceof ParseError && /not a PSBT/.test(e.message));
    await assert.rejects(readPsbtOffThread("zz", MAINNET), (e: Error) => e instanceof ParseError && /not hex/.test(e.message));
    const anyoneCanPay = await readPsbtOffThread(psbt(pub, 2, { sighashType: 0x81 }), MAINNET);
    assert.throws(
      () => ownInputs(anyoneCanPay, pub),
      (e: Error) => e instanceof ParseError && /sighash type 129/.test(e.message),
    );
    const stranger = newKey();
    const notMine = psbt(stranger.pub, 3);
    const read = await readPsbtOffThread(notMine, MAINNET);
    assert.throws(
      () => ownInputs(read, pub),
      (e: Error) => e instanceof NoOwnInputError,
    );
    await assert.rejects(signPsbtOffThread(notMine, MAINNET, priv, pub), (e: Error) => e instanceof NoOwnInputError);
  });
});
